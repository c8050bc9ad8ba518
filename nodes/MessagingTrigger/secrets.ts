import { createHash, createHmac } from 'crypto';

import { readCredential, type CredentialContext } from '../shared/credential';

export const sha256 = (text: string): string =>
	createHash('sha256').update(text, 'utf8').digest('hex');

// An HMAC keyed with the Client Secret: nothing secret is stored, and whatever holds the credential
// can derive it again, so deactivation can restore a previous webhook of this package. Whoever
// holds the Client Secret can already re-point the webhook, so this gives nobody anything new.
export async function generatedSecretFor(
	ctx: CredentialContext,
	accountNumber: string,
	webhookBaseUrl: string,
): Promise<string> {
	const { clientSecret } = await readCredential(ctx);
	return createHmac('sha256', clientSecret)
		.update(
			`n8n-nodes-messaging-rate/messaging-trigger/generated-secret/v1\n${accountNumber}\n${webhookBaseUrl}`,
			'utf8',
		)
		.digest('base64url');
}
