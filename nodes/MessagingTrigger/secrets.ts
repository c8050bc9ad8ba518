import { createHash, createHmac } from 'crypto';

import { readCredential, type CredentialContext } from '../shared/credential';

/** The trigger's own secret: the generated secret of "Generated Secret" verification. */

export const sha256 = (text: string): string =>
	createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * The secret registered in the webhook URL with "Generated Secret": an HMAC of the account number
 * and the webhook's own URL, keyed with the credential's Client Secret. Nothing secret is stored:
 * the workflow keeps only its hash (to check requests without reading the credential), and
 * anything holding the credential can derive it again, which is what lets a deactivation put back
 * a previous webhook of this package (this workflow's production URL after "Listen for test
 * event", or another workflow's trigger on the same account) without keeping that URL's secret.
 * Whoever holds the Client Secret can already re-point the account's webhook (Update Account
 * needs nothing else), so deriving from it gives nobody anything new.
 */
function deriveGeneratedSecret(
	clientSecret: string,
	accountNumber: string,
	webhookBaseUrl: string,
): string {
	return createHmac('sha256', clientSecret)
		.update(
			`n8n-nodes-messaging-rate/messaging-trigger/generated-secret/v1\n${accountNumber}\n${webhookBaseUrl}`,
			'utf8',
		)
		.digest('base64url');
}

export async function generatedSecretFor(
	ctx: CredentialContext,
	accountNumber: string,
	webhookBaseUrl: string,
): Promise<string> {
	const { clientSecret } = await readCredential(ctx);
	return deriveGeneratedSecret(clientSecret, accountNumber, webhookBaseUrl);
}
