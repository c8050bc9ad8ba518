import { NodeOperationError, type IDataObject, type IHookFunctions } from 'n8n-workflow';

import { checkAccount, readAccountAnswer, updateAccount } from '../shared/gatewayAccount';
import { apiClientFor } from '../shared/credential';
import { toNodeError } from '../shared/errors';
import { normalizePhone } from '../shared/phone';
import { redact, type ApiClient } from '../shared/transport';
import { DEFAULT_SECRET_QUERY, readTriggerSettings, type TriggerSettings } from './parameters';
import { generatedSecretFor, sha256 } from './secrets';

// Update Account is the API's only registration, with no delete and one webhook per account:
// activation keeps the previous webhook (as Check Account shows it) and deactivation puts it back,
// or clears the field. A webhook that Check Account did not show cannot be restored.

/** No secret, and no other workflow's URL with its query: those only as hashes. */
interface RegistrationRecord extends IDataObject {
	accountNumber: string;
	urlSha256: string;
	secretSha256?: string;
	previousKnown: boolean;
	previousWebhookBase?: string;
	/** Deactivation restores only a URL it can rebuild exactly. */
	previousWebhookSha256?: string;
	/** Version 1 records kept the previous webhook in full; read once more at deactivation, never written. */
	previousWebhook?: string;
	registeredAt: string;
}

/** Production registrations; "Listen for test event" keeps its own under TEST_RECORD_KEY. */
export const RECORD_KEY = 'registration';
export const TEST_RECORD_KEY = 'testRegistration';

type AccountWebhook = { known: true; url: string; accountNumber?: string } | { known: false };

function urlOf(text: string): URL | undefined {
	try {
		return new URL(text);
	} catch {
		return undefined;
	}
}

function withQueryParameter(url: string, name: string, value: string): string {
	const parsed = new URL(url);
	parsed.searchParams.set(name, value);
	return parsed.href;
}

const normalizedUrl = (url: string) => urlOf(url)?.href ?? url;
const sameUrl = (a: string, b: string) => normalizedUrl(a) === normalizedUrl(b);

interface Target {
	settings: TriggerSettings;
	accountNumber: string;
	webhookUrl: string;
	url: string;
	secrets: string[];
}

/** Deactivation passes the number it registered: a parameter edited since must not stop it. */
async function targetOf(ctx: IHookFunctions, registeredNumber?: string): Promise<Target> {
	const settings = readTriggerSettings(ctx);
	const webhookUrl = ctx.getNodeWebhookUrl('default');
	if (!webhookUrl)
		throw new NodeOperationError(ctx.getNode(), 'n8n gave this trigger no webhook URL');
	let accountNumber = registeredNumber;
	if (!accountNumber) {
		const parsed =
			settings.accountNumber.trim() === ''
				? await heldNumber(ctx, settings)
				: normalizePhone(settings.accountNumber, settings.defaultCountry);
		if ('problem' in parsed) {
			throw new NodeOperationError(ctx.getNode(), `Field "Account Number" ${parsed.problem}`, {
				description:
					'Enter the WhatsApp number of the gateway account with its country code, e.g. +62 812-8877-6713.',
			});
		}
		if (
			(settings.verification === 'querySecret' || settings.verification === 'headerSecret') &&
			settings.sharedSecret === ''
		) {
			throw new NodeOperationError(ctx.getNode(), 'Field "Shared Secret" is empty', {
				description: 'Enter a long random string, or choose another Verification.',
			});
		}
		accountNumber = parsed.phone;
	}
	const generated =
		settings.verification === 'generatedSecret'
			? await generatedSecretFor(ctx, accountNumber, webhookUrl)
			: '';
	return {
		settings,
		accountNumber,
		webhookUrl,
		url:
			settings.verification === 'querySecret' || settings.verification === 'generatedSecret'
				? withQueryParameter(
						webhookUrl,
						settings.queryParameterName,
						generated || settings.sharedSecret,
					)
				: webhookUrl,
		secrets: [settings.sharedSecret, generated].filter((secret) => secret !== ''),
	};
}

/** The gateway knows the number, so a newcomer need not. */
async function heldNumber(
	ctx: IHookFunctions,
	settings: TriggerSettings,
): Promise<{ phone: string } | { problem: string }> {
	const client = await apiClientFor(ctx);
	const held = readAccountAnswer(
		await checkAccount(
			client,
			{ whatsapp_number: '', whatsapp_webhook: '' },
			{ version: settings.version },
		),
	).whatsappNumber;
	if (!held)
		return {
			problem:
				'is empty and the gateway holds no number for this account (Account → Check shows none)',
		};
	const parsed = normalizePhone(/^\d+$/.test(held) ? `+${held}` : held, settings.defaultCountry);
	return 'problem' in parsed
		? { problem: `is empty and the number the gateway holds ("${held}") ${parsed.problem}` }
		: parsed;
}

export function registeredNumberOf(staticData: IDataObject, manual: boolean): string | undefined {
	const record = staticData[manual ? TEST_RECORD_KEY : RECORD_KEY] as IDataObject | undefined;
	return typeof record?.accountNumber === 'string' ? record.accountNumber : undefined;
}

async function readAccountWebhook(client: ApiClient, target: Target): Promise<AccountWebhook> {
	const params = { whatsapp_number: target.accountNumber, whatsapp_webhook: target.url };
	const shown = await checkAccount(client, params, { version: target.settings.version }).then(
		readAccountAnswer,
		() => ({ webhookUrl: undefined, whatsappNumber: undefined }),
	);
	if (shown.webhookUrl === undefined) return { known: false };
	const accountNumber = shown.whatsappNumber ?? undefined;
	return { known: true, url: (shown.webhookUrl ?? '').trim(), accountNumber };
}

async function setAccountWebhook(
	client: ApiClient,
	target: Target,
	webhook: string,
): Promise<void> {
	const params = { whatsapp_number: target.accountNumber, whatsapp_webhook: webhook };
	const result = await updateAccount(client, params, { version: target.settings.version });
	if (readAccountAnswer(result).updated === false) {
		throw new Error('Update Account answered "updated": false');
	}
}

function recordKey(ctx: IHookFunctions): string {
	return ctx.getMode() === 'manual' ? TEST_RECORD_KEY : RECORD_KEY;
}

function readRecord(staticData: IDataObject, key: string): RegistrationRecord | undefined {
	const stored = staticData[key];
	return typeof stored === 'object' && stored !== null ? (stored as RegistrationRecord) : undefined;
}

/** n8n calls `delete` in mode "internal" for production and test webhooks alike: found by URL. */
function recordOfWebhook(
	staticData: IDataObject,
	target: Target | undefined,
): { key: string; record?: RegistrationRecord } {
	for (const key of [RECORD_KEY, TEST_RECORD_KEY]) {
		const record = readRecord(staticData, key);
		if (record && target && record.urlSha256 === sha256(target.url)) return { key, record };
	}
	const production = readRecord(staticData, RECORD_KEY);
	if (production) return { key: RECORD_KEY, record: production };
	return { key: TEST_RECORD_KEY, record: readRecord(staticData, TEST_RECORD_KEY) };
}

export async function webhookExists(this: IHookFunctions): Promise<boolean> {
	const target = await targetOf(this);
	const client = await apiClientFor(this);
	const current = await readAccountWebhook(client, target);
	if (current.known) {
		const numberMatches =
			current.accountNumber === undefined || current.accountNumber === target.accountNumber;
		return numberMatches && sameUrl(current.url, target.url);
	}
	// Check Account did not tell: trust what activation stored.
	const stored = readRecord(this.getWorkflowStaticData('node'), recordKey(this));
	return stored?.urlSha256 === sha256(target.url) && stored.accountNumber === target.accountNumber;
}

export async function registerWebhook(this: IHookFunctions): Promise<boolean> {
	const target = await targetOf(this);
	const client = await apiClientFor(this);
	const before = await readAccountWebhook(client, target);
	try {
		await setAccountWebhook(client, target, target.url);
	} catch (error) {
		throw withoutSecrets(
			this,
			toNodeError(this.getNode(), error, {
				action: "register this workflow's URL with Update Account",
			}),
			target.secrets,
		);
	}
	const staticData = this.getWorkflowStaticData('node');
	const key = recordKey(this);
	const earlier = readRecord(staticData, key);
	const next: RegistrationRecord = {
		accountNumber: target.accountNumber,
		urlSha256: sha256(target.url),
		previousKnown: before.known,
		registeredAt: new Date().toISOString(),
	};
	if (target.settings.verification === 'generatedSecret') {
		next.secretSha256 = sha256(
			new URL(target.url).searchParams.get(target.settings.queryParameterName) ?? '',
		);
	}
	if (before.known && before.url !== '' && !sameUrl(before.url, target.url)) {
		const base = urlOf(before.url);
		if (base) {
			next.previousWebhookSha256 = sha256(base.href);
			Object.assign(base, { search: '', hash: '', username: '', password: '' });
			next.previousWebhookBase = base.href;
		}
	} else if (before.known && before.url !== '' && earlier?.previousWebhookBase) {
		// Registered again over our own URL: the webhook to restore is still the one from before.
		next.previousWebhookBase = earlier.previousWebhookBase;
		next.previousWebhookSha256 = earlier.previousWebhookSha256;
	}
	staticData[key] = next;
	return true;
}

/** Only a rebuild whose hash matches counts: a secret that was never kept cannot be restored. */
async function previousWebhookOf(
	ctx: IHookFunctions,
	stored: RegistrationRecord,
	target: Target,
): Promise<string | undefined> {
	if (typeof stored.previousWebhook === 'string' && stored.previousWebhook !== '')
		return stored.previousWebhook;
	const base = stored.previousWebhookBase;
	if (!base || !stored.previousWebhookSha256) return undefined;
	const candidates = [base];
	const names = [...new Set([target.settings.queryParameterName, DEFAULT_SECRET_QUERY])];
	const generated = await generatedSecretFor(ctx, target.accountNumber, base).catch(() => '');
	for (const name of names) {
		if (generated) candidates.push(withQueryParameter(base, name, generated));
		if (target.settings.sharedSecret)
			candidates.push(withQueryParameter(base, name, target.settings.sharedSecret));
	}
	return candidates.find(
		(candidate) => sha256(normalizedUrl(candidate)) === stored.previousWebhookSha256,
	);
}

/** Never throws: n8n would only log it. A failure is logged here, without the trigger's secrets. */
export async function unregisterWebhook(this: IHookFunctions): Promise<boolean> {
	const staticData = this.getWorkflowStaticData('node');
	let target: Target;
	let key: string;
	let stored: RegistrationRecord | undefined;
	try {
		const guess = recordOfWebhook(staticData, undefined);
		target = await targetOf(this, guess.record?.accountNumber);
		({ key, record: stored } = recordOfWebhook(staticData, target));
		if (stored && stored.accountNumber !== target.accountNumber)
			target = await targetOf(this, stored.accountNumber);
	} catch (error) {
		// Without a record this workflow registered nothing (e.g. its activation failed on this).
		if (recordOfWebhook(staticData, undefined).record === undefined) return true;
		warn(this, error, []);
		return false;
	}
	const secrets = [...target.secrets];
	try {
		const ours = (url: string) =>
			sameUrl(url, target.url) || (stored !== undefined && sha256(url) === stored.urlSha256);
		const client = await apiClientFor(this);
		const current = await readAccountWebhook(client, target);
		if (current.known && (current.url === '' || !ours(current.url))) {
			// Cleared, or pointed elsewhere since activation: that is someone's choice, keep it.
			delete staticData[key];
			return true;
		}
		if (!current.known && stored === undefined) {
			// Nothing shows that this workflow registered anything (n8n also calls this after a
			// failed activation): touching the account could only wipe someone else's webhook.
			return true;
		}
		const previous = stored ? await previousWebhookOf(this, stored, target) : undefined;
		const restore = previous && !ours(previous) ? previous : '';
		if (restore === '' && stored?.previousWebhookBase) {
			this.logger.warn(
				`Messaging Trigger: the account's previous webhook (at ${urlOf(stored.previousWebhookBase)?.origin ?? 'an address that is not a URL'}) carried a query that was not kept (it may hold a secret), so it cannot be put back; the webhook is cleared. Unpublish and publish (n8n 1.x: deactivate and activate) the workflow it belongs to.`,
			);
		}
		// The URL put back may carry its own secret (a derived one): keep that out of the warning too.
		secrets.push(...[...(urlOf(restore)?.searchParams.values() ?? [])].filter((value) => value));
		await setAccountWebhook(client, target, restore);
		delete staticData[key];
		return true;
	} catch (error) {
		warn(this, error, secrets);
		return false;
	}
}

function warn(ctx: IHookFunctions, error: unknown, secrets: string[]): void {
	const message = error instanceof Error ? error.message : String(error);
	ctx.logger.warn(
		`Messaging Trigger: could not restore or clear the account's webhook: ${redact(message, secrets)}`,
	);
}

function withoutSecrets(
	ctx: IHookFunctions,
	error: Error & { description?: string | null },
	secrets: string[],
): NodeOperationError {
	const description = error.description ? redact(error.description, secrets) : undefined;
	return new NodeOperationError(ctx.getNode(), redact(error.message, secrets), { description });
}
