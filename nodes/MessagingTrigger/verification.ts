import { createHash, timingSafeEqual } from 'crypto';
import type { IWebhookFunctions } from 'n8n-workflow';

import { readCredential } from '../shared/credential';
import type { IncomingEvent } from './payload';
import type { TriggerSettings } from './parameters';

/**
 * The checks a request must pass before it may start the workflow. Each returns the reason a
 * request fails (answered 401), or undefined. Reasons never contain the expected secret.
 */

/**
 * Compares in constant time. Both sides are hashed first, so neither the length of the secret
 * nor a length mismatch (which makes `timingSafeEqual` throw) is observable.
 */
export function secretsMatch(given: string, expected: string): boolean {
	if (expected === '') return false;
	const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
	return timingSafeEqual(digest(given), digest(expected));
}

/** Shared secret in a header or in the query: checked before the body is even parsed. */
export function sharedSecretProblem(ctx: IWebhookFunctions, settings: TriggerSettings): string | undefined {
	if (settings.verification !== 'headerSecret' && settings.verification !== 'querySecret') return undefined;
	if (settings.sharedSecret === '') return 'The trigger has no shared secret set, so it accepts no request';
	const inHeader = settings.verification === 'headerSecret';
	const name = inHeader ? settings.headerName : settings.queryParameterName;
	const where = inHeader ? `header "${name}"` : `query parameter "${name}"`;
	const source: Record<string, unknown> = inHeader ? ctx.getHeaderData() : ((ctx.getQueryData() ?? {}) as Record<string, unknown>);
	const value = source[inHeader ? name.toLowerCase() : name];
	if (value === undefined || value === '') return `The request has no ${where}`;
	if (typeof value !== 'string') return `The ${where} must appear once`;
	return secretsMatch(value, settings.sharedSecret) ? undefined : `The ${where} does not hold the shared secret`;
}

/** `x-api-key` in the payload against the credential's Client Secret. */
export async function apiKeyProblem(ctx: IWebhookFunctions, event: IncomingEvent): Promise<string | undefined> {
	if (event.apiKey === undefined || event.apiKey === '') return 'The payload has no "x-api-key"';
	// A credential that cannot be read (e.g. its secret was emptied since activation) matches nothing.
	const secret = await readCredential(ctx).then(
		(credential) => credential.clientSecret,
		() => '',
	);
	return secretsMatch(event.apiKey, secret) ? undefined : 'The payload\'s "x-api-key" does not match the credential';
}
