import { createHash, createHmac } from 'crypto';

import { readCredential } from '../shared/credential';

/**
 * The trigger's own secrets: the generated secret of "Generated Secret" verification, and how any
 * secret of the trigger is kept out of error messages and logs.
 */

type CredentialContext = Parameters<typeof readCredential>[0];

export const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

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
export function deriveGeneratedSecret(clientSecret: string, accountNumber: string, webhookBaseUrl: string): string {
	return createHmac('sha256', clientSecret)
		.update(`n8n-nodes-messaging-rate/messaging-trigger/generated-secret/v1\n${accountNumber}\n${webhookBaseUrl}`, 'utf8')
		.digest('base64url');
}

export async function generatedSecretFor(ctx: CredentialContext, accountNumber: string, webhookBaseUrl: string): Promise<string> {
	const { clientSecret } = await readCredential(ctx);
	return deriveGeneratedSecret(clientSecret, accountNumber, webhookBaseUrl);
}

/** Every form a secret takes when a server or a library echoes it: as is, in a URL, in JSON, in HTML, encoded. */
export function secretForms(secret: string): string[] {
	if (!secret) return [];
	const bytes = Buffer.from(secret, 'utf8');
	const base64 = bytes.toString('base64');
	const forms = [
		secret,
		encodeURIComponent(secret),
		new URLSearchParams({ s: secret }).toString().slice(2),
		encodeURI(secret),
		JSON.stringify(secret).slice(1, -1),
		JSON.stringify(JSON.stringify(secret).slice(1, -1)).slice(1, -1),
		secret.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;'),
		secret.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/'/g, '&#x27;'),
		base64,
		base64.replace(/=+$/, ''),
		bytes.toString('base64url'),
		bytes.toString('hex'),
		bytes.toString('hex').toUpperCase(),
	];
	// Longest first, so that a form containing another is replaced whole.
	return [...new Set(forms)].sort((a, b) => b.length - a.length);
}

/**
 * The text with every form of every secret replaced by `[redacted]`. Unlike the transport's
 * redaction this has no minimum length: these are the user's own trigger secrets, and an error
 * message with a blanked word is better than one with the secret in it.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
	let out = text;
	for (const secret of secrets) {
		for (const form of secretForms(secret)) out = out.split(form).join('[redacted]');
	}
	return out;
}
