import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { endpoints, type ApiClient } from './transport';

/** Real clients send their module version in this dotted form. */
export const DEFAULT_MESSAGING_VERSION = '16.0.1.3';

export function messagingVersionOption(description: string): INodeProperties {
	return {
		displayName: 'API Version',
		name: 'version',
		type: 'string',
		default: DEFAULT_MESSAGING_VERSION,
		description,
	};
}

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
