import type { IDataObject } from 'n8n-workflow';

import { asOptions } from './properties';
import { endpoints, type ApiClient, type Endpoint } from './transport';

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

const accountCall =
	(endpoint: Endpoint) =>
	async (client: ApiClient, params: AccountParams, { version, signal }: AccountCall) =>
		await client.call(endpoint, { version, ...params }, { signal });

export const checkAccount = accountCall(endpoints.checkAccount);
export const updateAccount = accountCall(endpoints.updateAccount);

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
	const sources = [asOptions(asOptions(result).message), asOptions(result)];
	const first = (keys: readonly string[]): unknown =>
		sources.flatMap((source) => keys.map((key) => source[key])).find((v) => v !== undefined);
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
	const answer = asOptions(result);
	const accountStatus = text(answer.accountStatus ?? answer.account_status ?? answer.status);
	const deviceStatus = text(answer.device_status ?? answer.deviceStatus);
	const qrCode = text(answer.qrCode ?? answer.qr_code ?? answer.qr);
	const connected =
		(accountStatus !== undefined && CONNECTED_WORDS.has(accountStatus.toLowerCase())) ||
		(deviceStatus !== undefined && CONNECTED_WORDS.has(deviceStatus.toLowerCase()));
	const status =
		accountStatus ??
		(connected ? 'authenticated' : qrCode ? 'got qr code' : (deviceStatus ?? 'unknown'));
	const stated = accountStatus !== undefined || deviceStatus !== undefined || qrCode !== undefined;
	const session: SessionAnswer = { status, connected, stated };
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
	const { message, whatsappStatus } = asOptions(answer.message);
	const said = [answer.error, asOptions(whatsappStatus).message, message, answer.message];
	return said.map(text).find((hint) => hint !== undefined);
}
