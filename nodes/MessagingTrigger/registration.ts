import { createHash, createHmac } from 'crypto';
import { NodeOperationError, type IDataObject, type IHookFunctions } from 'n8n-workflow';

import { checkAccount, readAccountAnswer, updateAccount } from '../shared/gateway';
import { apiClientFor, readCredential, type CredentialContext } from '../shared/credential';
import { inputError, messageOf, shown, toNodeError } from '../shared/errors';
import type { FieldError } from '../shared/execution/operationRun';
import { normalizePhone } from '../shared/phone';
import { redact, type ApiClient } from '../shared/transport';
import { DEFAULT_SECRET_QUERY, readTriggerSettings, type TriggerSettings } from './parameters';

// Update Account is the API's only registration, with no delete and one webhook per account:
// activation keeps the previous webhook (as Check Account shows it) and deactivation puts it back,
// or clears the field. A webhook that Check Account did not show cannot be restored.

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

// Keyed with the Client Secret: stored nowhere, derived again by whatever holds the credential (which
// can re-point the webhook anyway), so deactivation can put back a webhook of this package.
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

/** No secret, and no other workflow's URL with its query: those only as hashes. */
interface RegistrationRecord extends IDataObject {
	accountNumber: string;
	urlSha256: string;
	secretSha256?: string;
	previousKnown: boolean;
	previousWebhookBase?: string;
	previousWebhookSha256?: string;
}

/** Production first; "Listen for test event" keeps its own. */
const RECORD_KEYS = ['registration', 'testRegistration'];

function readRecord(staticData: IDataObject, key: string): RegistrationRecord | undefined {
	const stored = staticData[key];
	return typeof stored === 'object' && stored !== null ? (stored as RegistrationRecord) : undefined;
}

export const registrationOf = (staticData: IDataObject, manual: boolean) =>
	readRecord(staticData, RECORD_KEYS[manual ? 1 : 0]);

const urlOf = (text: string) => (URL.canParse(text) ? new URL(text) : undefined);

function withQueryParameter(url: string, name: string, value: string): string {
	const parsed = new URL(url);
	parsed.searchParams.set(name, value);
	return parsed.href;
}

const normalizedUrl = (url: string) => urlOf(url)?.href ?? url;
const sameUrl = (a: string, b: string) => normalizedUrl(a) === normalizedUrl(b);

type Target = Awaited<ReturnType<typeof targetOf>>;

/** Deactivation passes the number it registered: a parameter edited since must not stop it. */
async function targetOf(ctx: IHookFunctions, registeredNumber?: string) {
	const settings = readTriggerSettings(ctx);
	const webhookUrl = ctx.getNodeWebhookUrl('default');
	if (!webhookUrl)
		throw new NodeOperationError(ctx.getNode(), 'n8n gave this trigger no webhook URL');
	const fail: FieldError = (...error) => inputError(ctx.getNode(), undefined, ...error);
	let accountNumber = registeredNumber;
	if (!accountNumber) {
		const parsed =
			settings.accountNumber.trim() === ''
				? await heldNumber(ctx, settings)
				: normalizePhone(settings.accountNumber, settings.defaultCountry);
		if ('problem' in parsed) {
			const fix =
				'Enter the WhatsApp number of the gateway account with its country code, e.g. +62 812-8877-6713.';
			throw fail('Account Number', parsed.problem, fix);
		}
		const shared = ['querySecret', 'headerSecret'].includes(settings.verification);
		const fix = 'Enter a long random string, or choose another Verification.';
		if (shared && settings.sharedSecret === '') throw fail('Shared Secret', 'is empty', fix);
		accountNumber = parsed.phone;
	}
	const generated = settings.verification === 'generatedSecret';
	// The secret in the URL's query, if any.
	const secret = generated
		? await generatedSecretFor(ctx, accountNumber, webhookUrl)
		: settings.sharedSecret;
	const inQuery = generated || settings.verification === 'querySecret';
	const url = inQuery
		? withQueryParameter(webhookUrl, settings.queryParameterName, secret)
		: webhookUrl;
	return { settings, accountNumber, url, secret };
}

/** The gateway knows the number, so a newcomer need not. */
async function heldNumber(ctx: IHookFunctions, settings: TriggerSettings) {
	const params = { whatsapp_number: '', whatsapp_webhook: '' };
	const answer = await checkAccount(await apiClientFor(ctx), params, settings);
	const held = readAccountAnswer(answer).whatsappNumber;
	if (!held)
		return {
			problem:
				'is empty and the gateway holds no number for this account (Account → Check shows none)',
		};
	const parsed = normalizePhone(/^\d+$/.test(held) ? `+${held}` : held, settings.defaultCountry);
	return 'problem' in parsed
		? { problem: `is empty and the number the gateway holds (${shown(held)}) ${parsed.problem}` }
		: parsed;
}

/** The account's webhook ('' for none) and number; undefined when Check Account does not show it. */
async function shownWebhook(client: ApiClient, target: Target) {
	const params = { whatsapp_number: target.accountNumber, whatsapp_webhook: target.url };
	const answer = await checkAccount(client, params, target.settings).catch(() => undefined);
	const shown = readAccountAnswer(answer);
	if (shown.webhookUrl === undefined) return undefined;
	return { url: (shown.webhookUrl ?? '').trim(), accountNumber: shown.whatsappNumber ?? undefined };
}

async function setAccountWebhook(client: ApiClient, target: Target, webhook: string) {
	const params = { whatsapp_number: target.accountNumber, whatsapp_webhook: webhook };
	const result = await updateAccount(client, params, target.settings);
	if (readAccountAnswer(result).updated === false)
		throw new Error('Update Account answered "updated": false');
}

export async function webhookExists(this: IHookFunctions): Promise<boolean> {
	const target = await targetOf(this);
	const current = await shownWebhook(await apiClientFor(this), target);
	if (current) {
		const numberMatches =
			current.accountNumber === undefined || current.accountNumber === target.accountNumber;
		return numberMatches && sameUrl(current.url, target.url);
	}
	// Check Account did not tell: trust what activation stored.
	const stored = registrationOf(this.getWorkflowStaticData('node'), this.getMode() === 'manual');
	return stored?.urlSha256 === sha256(target.url) && stored.accountNumber === target.accountNumber;
}

export async function registerWebhook(this: IHookFunctions): Promise<boolean> {
	const target = await targetOf(this);
	const client = await apiClientFor(this);
	const before = await shownWebhook(client, target);
	try {
		await setAccountWebhook(client, target, target.url);
	} catch (error) {
		const action = "register this workflow's URL with Update Account";
		const { message, description } = toNodeError(this.getNode(), error, { action });
		throw new NodeOperationError(this.getNode(), redact(message, [target.secret]), {
			description: description ? redact(description, [target.secret]) : undefined,
		});
	}
	const staticData = this.getWorkflowStaticData('node');
	const key = RECORD_KEYS[this.getMode() === 'manual' ? 1 : 0];
	const earlier = readRecord(staticData, key);
	const next: RegistrationRecord = {
		accountNumber: target.accountNumber,
		urlSha256: sha256(target.url),
		previousKnown: before !== undefined,
	};
	if (target.settings.verification === 'generatedSecret') next.secretSha256 = sha256(target.secret);
	const previous = before?.url ? urlOf(before.url) : undefined;
	if (previous && !sameUrl(previous.href, target.url)) {
		next.previousWebhookSha256 = sha256(previous.href);
		Object.assign(previous, { search: '', hash: '', username: '', password: '' });
		next.previousWebhookBase = previous.href;
	} else if (previous && earlier?.previousWebhookBase) {
		// Registered again over our own URL: the webhook to restore is still the one from before.
		next.previousWebhookBase = earlier.previousWebhookBase;
		next.previousWebhookSha256 = earlier.previousWebhookSha256;
	}
	staticData[key] = next;
	return true;
}

/** Only a rebuild whose hash matches counts: a secret that was never kept cannot be restored. */
async function previousWebhookOf(ctx: IHookFunctions, stored: RegistrationRecord, target: Target) {
	const base = stored.previousWebhookBase;
	if (!base || !stored.previousWebhookSha256) return undefined;
	const generated = await generatedSecretFor(ctx, target.accountNumber, base).catch(() => '');
	const secrets = [generated, target.settings.sharedSecret].filter((secret) => secret !== '');
	const names = new Set([target.settings.queryParameterName, DEFAULT_SECRET_QUERY]);
	const candidates = [base];
	for (const name of names)
		candidates.push(...secrets.map((secret) => withQueryParameter(base, name, secret)));
	return candidates.find((url) => sha256(normalizedUrl(url)) === stored.previousWebhookSha256);
}

/** n8n calls `delete` in mode "internal" for production and test webhooks alike: found by URL. */
async function registrationToUndo(ctx: IHookFunctions, staticData: IDataObject) {
	const records = RECORD_KEYS.map((key) => ({ key, record: readRecord(staticData, key) }));
	for (const { key, record } of records) {
		if (!record) continue;
		const target = await targetOf(ctx, record.accountNumber);
		if (record.urlSha256 === sha256(target.url)) return { key, record, target };
	}
	const { key, record } = records.find((found) => found.record) ?? records[0];
	return { key, record, target: await targetOf(ctx, record?.accountNumber) };
}

/** Never throws: n8n would only log it. A failure is logged here, without the trigger's secrets. */
export async function unregisterWebhook(this: IHookFunctions): Promise<boolean> {
	const staticData = this.getWorkflowStaticData('node');
	const secrets: string[] = [];
	let found: Awaited<ReturnType<typeof registrationToUndo>> | undefined;
	try {
		found = await registrationToUndo(this, staticData);
		const { key, record: stored, target } = found;
		secrets.push(target.secret);
		const ours = (url: string) => sameUrl(url, target.url) || sha256(url) === stored?.urlSha256;
		const client = await apiClientFor(this);
		const current = await shownWebhook(client, target);
		if (current && (current.url === '' || !ours(current.url))) {
			// Cleared, or pointed elsewhere since activation: that is someone's choice, keep it.
			delete staticData[key];
			return true;
		}
		// Nothing shows that this workflow registered anything (n8n also calls this after a failed
		// activation): touching the account could only wipe someone else's webhook.
		if (!current && !stored) return true;
		const previous = stored && (await previousWebhookOf(this, stored, target));
		const restore = previous && !ours(previous) ? previous : '';
		if (restore === '' && stored?.previousWebhookBase)
			this.logger.warn(
				`Messaging Trigger: the account's previous webhook (at ${urlOf(stored.previousWebhookBase)?.origin ?? 'an address that is not a URL'}) carried a query that was not kept (it may hold a secret), so it cannot be put back; the webhook is cleared. Unpublish and publish (n8n 1.x: deactivate and activate) the workflow it belongs to.`,
			);
		// The URL put back may carry its own secret (a derived one): keep that out of the warning too.
		secrets.push(...(urlOf(restore)?.searchParams.values() ?? []));
		await setAccountWebhook(client, target, restore);
		delete staticData[key];
		return true;
	} catch (error) {
		// Without a record this workflow registered nothing (e.g. its activation failed on this).
		if (!found && !RECORD_KEYS.some((key) => readRecord(staticData, key))) return true;
		const message = redact(messageOf(error), secrets);
		this.logger.warn(
			`Messaging Trigger: could not restore or clear the account's webhook: ${message}`,
		);
		return false;
	}
}
