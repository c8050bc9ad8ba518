import { createHash, timingSafeEqual } from 'crypto';
import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { readCredential } from '../shared/credential';
import { normalizePhone } from '../shared/phone';
import type { IncomingEvent } from './message';
import type { TriggerSettings } from './parameters';
import { RECORD_KEY, TEST_RECORD_KEY } from './registration';
import { generatedSecretFor, sha256 } from './secrets';

// The reasons never contain the expected secret.

/** Hashed first: neither the secret's length nor a mismatch (timingSafeEqual throws) shows. */
function secretsMatch(given: string, expected: string): boolean {
	if (expected === '') return false;
	const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
	return timingSafeEqual(digest(given), digest(expected));
}

export function sharedSecretProblem(
	ctx: IWebhookFunctions,
	settings: TriggerSettings,
): string | undefined {
	if (settings.verification !== 'headerSecret' && settings.verification !== 'querySecret')
		return undefined;
	if (settings.sharedSecret === '')
		return 'The trigger has no shared secret set, so it accepts no request';
	const inHeader = settings.verification === 'headerSecret';
	const name = inHeader ? settings.headerName : settings.queryParameterName;
	const where = inHeader ? `header "${name}"` : `query parameter "${name}"`;
	const source: Record<string, unknown> = inHeader
		? ctx.getHeaderData()
		: ((ctx.getQueryData() ?? {}) as Record<string, unknown>);
	const value = source[inHeader ? name.toLowerCase() : name];
	if (value === undefined || value === '') return `The request has no ${where}`;
	if (typeof value !== 'string') return `The ${where} must appear once`;
	return secretsMatch(value, settings.sharedSecret)
		? undefined
		: `The ${where} does not hold the shared secret`;
}

function queryValue(ctx: IWebhookFunctions, name: string): { value: string } | { problem: string } {
	const value = ((ctx.getQueryData() ?? {}) as Record<string, unknown>)[name];
	if (value === undefined || value === '')
		return { problem: `The request has no query parameter "${name}"` };
	if (typeof value !== 'string')
		return { problem: `The query parameter "${name}" must appear once` };
	return { value };
}

/** Without a kept hash (static data lost), the secret is derived again from the credential. */
export async function generatedSecretProblem(
	ctx: IWebhookFunctions,
	settings: TriggerSettings,
): Promise<string | undefined> {
	if (settings.verification !== 'generatedSecret') return undefined;
	const given = queryValue(ctx, settings.queryParameterName);
	if ('problem' in given) return given.problem;
	const wrong = `The query parameter "${settings.queryParameterName}" does not hold the generated secret; publish (or activate) the workflow again if the account's webhook was set by hand`;
	const record = ctx.getWorkflowStaticData('node')[
		ctx.getMode() === 'manual' ? TEST_RECORD_KEY : RECORD_KEY
	] as IDataObject | undefined;
	let expectedSha256 = typeof record?.secretSha256 === 'string' ? record.secretSha256 : '';
	if (!/^[0-9a-f]{64}$/.test(expectedSha256)) {
		const account =
			typeof record?.accountNumber === 'string'
				? { phone: record.accountNumber }
				: normalizePhone(settings.accountNumber, settings.defaultCountry);
		const webhookUrl = ctx.getNodeWebhookUrl('default');
		if (!('phone' in account) || !webhookUrl) return wrong;
		expectedSha256 = sha256(
			await generatedSecretFor(ctx, account.phone, webhookUrl).catch(() => ''),
		);
	}
	const matches = timingSafeEqual(
		Buffer.from(sha256(given.value), 'hex'),
		Buffer.from(expectedSha256, 'hex'),
	);
	return matches ? undefined : wrong;
}

export async function apiKeyProblem(
	ctx: IWebhookFunctions,
	event: IncomingEvent,
): Promise<string | undefined> {
	if (event.apiKey === undefined || event.apiKey === '') return 'The payload has no "x-api-key"';
	// A credential that cannot be read (e.g. its secret was emptied since activation) matches nothing.
	const secret = await readCredential(ctx).then(
		(credential) => credential.clientSecret,
		() => '',
	);
	return secretsMatch(event.apiKey, secret)
		? undefined
		: 'The payload\'s "x-api-key" does not match the credential';
}
