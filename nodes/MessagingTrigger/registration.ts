import { createHash } from 'crypto';
import { NodeOperationError, type IDataObject, type IHookFunctions } from 'n8n-workflow';

import { checkAccount, readAccountAnswer, updateAccount } from '../shared/account';
import { apiClientFor } from '../shared/credential';
import { toNodeError } from '../shared/errors';
import { normalizePhone } from '../shared/phone';
import type { ApiClient } from '../shared/transport';
import { readTriggerSettings, type TriggerSettings } from './parameters';

/**
 * Registering the workflow's URL as the account's webhook, the only registration the API has:
 * Update Account (`whatsapp_number`, `whatsapp_webhook`). There is no delete, and one account has
 * one webhook, so:
 * - activation first reads the current webhook with Check Account (when its answer shows it),
 *   keeps it in the node's static data, then registers this workflow's URL;
 * - deactivation puts the kept webhook back when there was one (another URL), else clears the
 *   field with an empty string. A webhook that Check Account did not show cannot be restored.
 */

/** Kept in the node's static data between activation and deactivation. */
interface RegistrationRecord extends IDataObject {
	accountNumber: string;
	/** SHA-256 of the URL registered; the URL itself may hold the shared secret. */
	urlSha256: string;
	/** Whether Check Account showed the webhook the account had before activation. */
	previousKnown: boolean;
	/** That webhook, when there was one and it was another URL. */
	previousWebhook?: string;
	registeredAt: string;
}

const RECORD_KEY = 'registration';

/** What Check Account says about the account, as far as its answer shows it. */
export type AccountWebhook = { known: true; url: string; accountNumber?: string } | { known: false; reason?: string };

/**
 * The webhook a Check Account answer shows (read by the same reader as Messaging's Account →
 * Check: an empty, `null` or `false` value means "no webhook").
 */
export function webhookShownBy(result: unknown): AccountWebhook {
	const shown = readAccountAnswer(result);
	if (shown.webhookUrl === undefined) return { known: false, reason: 'the Check Account answer does not show the webhook' };
	return { known: true, url: (shown.webhookUrl ?? '').trim(), accountNumber: shown.whatsappNumber ?? undefined };
}

/** The URL to register: n8n's webhook URL, plus the shared secret when it travels in the query. */
export function registrationUrl(webhookUrl: string, settings: TriggerSettings): string {
	if (settings.verification !== 'querySecret') return webhookUrl;
	const url = new URL(webhookUrl);
	url.searchParams.set(settings.queryParameterName, settings.sharedSecret);
	return url.toString();
}

export function sameUrl(a: string, b: string): boolean {
	if (a === b) return true;
	try {
		return new URL(a).href === new URL(b).href;
	} catch {
		return false;
	}
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

interface Target {
	settings: TriggerSettings;
	accountNumber: string;
	url: string;
}

/**
 * The account number and URL this activation registers, or an error saying what to fix.
 * Deactivation passes the number it registered: a parameter edited since must not stop it.
 */
function targetOf(ctx: IHookFunctions, registeredNumber?: string): Target {
	const settings = readTriggerSettings(ctx);
	const webhookUrl = ctx.getNodeWebhookUrl('default');
	if (!webhookUrl) throw new NodeOperationError(ctx.getNode(), 'n8n gave this trigger no webhook URL');
	const url = registrationUrl(webhookUrl, settings);
	if (registeredNumber) return { settings, accountNumber: registeredNumber, url };

	const parsed = normalizePhone(settings.accountNumber, settings.defaultCountry);
	if ('problem' in parsed) {
		throw new NodeOperationError(ctx.getNode(), `Field "Account Number" ${parsed.problem}`, {
			description: 'Enter the WhatsApp number of the gateway account with its country code, e.g. +62 812-8877-6713.',
		});
	}
	if ((settings.verification === 'querySecret' || settings.verification === 'headerSecret') && settings.sharedSecret === '') {
		throw new NodeOperationError(ctx.getNode(), 'Field "Shared Secret" is empty', {
			description: 'Enter a long random string, or choose another Verification.',
		});
	}
	return { settings, accountNumber: parsed.phone, url };
}

async function readAccountWebhook(client: ApiClient, target: Target): Promise<AccountWebhook> {
	try {
		const params = { whatsapp_number: target.accountNumber, whatsapp_webhook: target.url };
		return webhookShownBy(await checkAccount(client, params, { version: target.settings.version }));
	} catch (error) {
		return { known: false, reason: error instanceof Error ? error.message : String(error) };
	}
}

async function setAccountWebhook(client: ApiClient, target: Target, webhook: string): Promise<void> {
	const params = { whatsapp_number: target.accountNumber, whatsapp_webhook: webhook };
	const result = await updateAccount(client, params, { version: target.settings.version });
	if (readAccountAnswer(result).updated === false) {
		throw new Error('Update Account answered "updated": false');
	}
}

function record(ctx: IHookFunctions): RegistrationRecord | undefined {
	const stored = ctx.getWorkflowStaticData('node')[RECORD_KEY];
	return typeof stored === 'object' && stored !== null ? (stored as RegistrationRecord) : undefined;
}

/** n8n asks before `create`: is this workflow's URL already the account's webhook? */
export async function webhookExists(this: IHookFunctions): Promise<boolean> {
	const target = targetOf(this);
	const client = await apiClientFor(this);
	const current = await readAccountWebhook(client, target);
	if (current.known) {
		const numberMatches = current.accountNumber === undefined || current.accountNumber === target.accountNumber;
		return numberMatches && sameUrl(current.url, target.url);
	}
	// Check Account did not tell: trust what activation stored.
	const stored = record(this);
	return stored?.urlSha256 === sha256(target.url) && stored.accountNumber === target.accountNumber;
}

export async function registerWebhook(this: IHookFunctions): Promise<boolean> {
	const target = targetOf(this);
	const client = await apiClientFor(this);
	const before = await readAccountWebhook(client, target);
	try {
		await setAccountWebhook(client, target, target.url);
	} catch (error) {
		throw toNodeError(this.getNode(), error, { action: "register this workflow's URL with Update Account" });
	}
	const earlier = record(this);
	const next: RegistrationRecord = {
		accountNumber: target.accountNumber,
		urlSha256: sha256(target.url),
		previousKnown: before.known,
		registeredAt: new Date().toISOString(),
	};
	if (before.known && before.url !== '' && !sameUrl(before.url, target.url)) {
		next.previousWebhook = before.url;
	} else if (before.known && before.url !== '' && earlier?.previousWebhook) {
		// Registered again over our own URL: the webhook to restore is still the one from before.
		next.previousWebhook = earlier.previousWebhook;
	}
	this.getWorkflowStaticData('node')[RECORD_KEY] = next;
	return true;
}

/**
 * Deactivation. Never throws: n8n calls this while deactivating or ending a test, where an error
 * would only be logged; a failure is logged here and reported as `false`.
 */
export async function unregisterWebhook(this: IHookFunctions): Promise<boolean> {
	const staticData = this.getWorkflowStaticData('node');
	const stored = record(this);
	let target: Target;
	try {
		target = targetOf(this, stored?.accountNumber);
	} catch (error) {
		// Without a record this workflow registered nothing (e.g. its activation failed on this).
		if (stored === undefined) return true;
		this.logger.warn(`Messaging Trigger: could not restore or clear the account's webhook: ${(error as Error).message}`);
		return false;
	}
	try {
		const ours = (url: string) => sameUrl(url, target.url) || (stored !== undefined && sha256(url) === stored.urlSha256);
		const client = await apiClientFor(this);
		const current = await readAccountWebhook(client, target);
		if (current.known && (current.url === '' || !ours(current.url))) {
			// Cleared, or pointed elsewhere since activation: that is someone's choice, keep it.
			delete staticData[RECORD_KEY];
			return true;
		}
		if (!current.known && stored === undefined) {
			// Nothing shows that this workflow registered anything (n8n also calls this after a
			// failed activation): touching the account could only wipe someone else's webhook.
			return true;
		}
		const restore = stored?.previousWebhook && !ours(stored.previousWebhook) ? stored.previousWebhook : '';
		await setAccountWebhook(client, target, restore);
		delete staticData[RECORD_KEY];
		return true;
	} catch (error) {
		const message = error instanceof Error ? error.message : String(error);
		this.logger.warn(`Messaging Trigger: could not restore or clear the account's webhook: ${message}`);
		return false;
	}
}
