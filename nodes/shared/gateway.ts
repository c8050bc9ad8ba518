import type { IDataObject } from 'n8n-workflow';

import { endpoints, type ApiClient } from './transport';

// The gateway account's answers, read the same way by every node: the account (Check/Update
// Account) and its session (Get Status).

export interface AccountParams {
	whatsapp_number: string;
	whatsapp_webhook: string;
}

export interface AccountCall {
	version: string;
	signal?: AbortSignal;
}

export async function checkAccount(
	client: ApiClient,
	params: AccountParams,
	{ version, signal }: AccountCall,
): Promise<unknown> {
	return await client.call(endpoints.checkAccount, { version, ...params }, { signal });
}

export async function updateAccount(
	client: ApiClient,
	params: AccountParams,
	{ version, signal }: AccountCall,
): Promise<unknown> {
	return await client.call(endpoints.updateAccount, { version, ...params }, { signal });
}

/** `undefined`: the answer does not say; `null`: the gateway says the field is empty. */
export interface AccountAnswer {
	whatsappNumber?: string | null;
	webhookUrl?: string | null;
	status?: string;
	registered?: boolean;
	updated?: boolean;
	success?: boolean;
	message?: string;
}

const NUMBER_KEYS = ['whatsapp_number', 'whatsappNumber'];
const WEBHOOK_KEYS = ['whatsapp_webhook', 'whatsappWebhook', 'webhook'];
const STATUS_KEYS = ['accountStatus', 'status', 'state'];
const FLAGS = ['registered', 'updated', 'success'] as const;

// `{"message": {...}}` in the sandbox (the real answer's fields are guessed from the request), or
// flat; `message` wins. Odoo-style services write an empty field as `false` or `null`.
export function readAccountAnswer(result: unknown): AccountAnswer {
	const isObject = (value: unknown): value is IDataObject =>
		typeof value === 'object' && value !== null && !Array.isArray(value);
	const sources = isObject(result) ? [result.message, result].filter(isObject) : [];
	const first = (keys: readonly string[]): unknown => {
		for (const source of sources) {
			for (const key of keys) if (key in source && source[key] !== undefined) return source[key];
		}
		return undefined;
	};
	const textOrEmpty = (value: unknown): string | null | undefined => {
		if (typeof value === 'string') return value;
		if (typeof value === 'number') return String(value);
		return value === null || value === false ? null : undefined;
	};

	const answer: AccountAnswer = {
		whatsappNumber: textOrEmpty(first(NUMBER_KEYS)),
		webhookUrl: textOrEmpty(first(WEBHOOK_KEYS)),
	};
	const status = first(STATUS_KEYS);
	if (typeof status === 'string') answer.status = status;
	for (const flag of FLAGS) {
		const value = first([flag]);
		if (typeof value === 'boolean') answer[flag] = value;
	}
	const message = first(['message']);
	if (typeof message === 'string') answer.message = message;
	return answer;
}

// The session

export interface SessionAnswer {
	/** The gateway's word (`authenticated`, `got qr code`, …), or one derived from the answer. */
	status: string;
	connected: boolean;
	/** Whether the answer says anything about the session at all. */
	stated: boolean;
	deviceStatus?: string;
	qrCode?: string;
	hint?: string;
}

const CONNECTED_WORDS = new Set(['authenticated', 'connected', 'open', 'ready', 'online']);

export function readSessionAnswer(result: unknown): SessionAnswer {
	const answer = (result && typeof result === 'object' ? result : {}) as IDataObject;
	const accountStatus = text(answer.accountStatus ?? answer.account_status ?? answer.status);
	const deviceStatus = text(answer.device_status ?? answer.deviceStatus);
	const qrCode = text(answer.qrCode ?? answer.qr_code ?? answer.qr);
	const connected =
		(accountStatus !== undefined && CONNECTED_WORDS.has(accountStatus.toLowerCase())) ||
		(deviceStatus !== undefined && CONNECTED_WORDS.has(deviceStatus.toLowerCase()));
	const session: SessionAnswer = {
		status:
			accountStatus ??
			(connected ? 'authenticated' : qrCode ? 'got qr code' : (deviceStatus ?? 'unknown')),
		connected,
		stated: accountStatus !== undefined || deviceStatus !== undefined || qrCode !== undefined,
	};
	if (deviceStatus !== undefined) session.deviceStatus = deviceStatus;
	if (qrCode !== undefined) session.qrCode = qrCode;
	const hint = hintOf(answer);
	if (hint !== undefined) session.hint = hint;
	return session;
}

function text(value: unknown): string | undefined {
	return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function hintOf(answer: IDataObject): string | undefined {
	const nested =
		answer.message && typeof answer.message === 'object'
			? (answer.message as IDataObject)
			: undefined;
	const whatsappStatus =
		nested?.whatsappStatus && typeof nested.whatsappStatus === 'object'
			? (nested.whatsappStatus as IDataObject)
			: undefined;
	return (
		text(answer.error) ??
		text(whatsappStatus?.message) ??
		text(nested?.message) ??
		text(answer.message)
	);
}
