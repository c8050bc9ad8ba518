import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { inputError } from '../../../shared/errors';
import { normalizePhone } from '../../../shared/phone';

/** The two fields Check Account and Update Account both send (the account's number and webhook). */
export const accountFields: INodeProperties[] = [
	{
		displayName: 'WhatsApp Number',
		name: 'whatsappNumber',
		type: 'string',
		default: '',
		required: true,
		placeholder: '+62 812-8877-6713',
		description: "The gateway account's own number, with country code (or set \"Default Country\" in the options)",
	},
	{
		displayName: 'Webhook URL',
		name: 'webhookUrl',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'https://n8n.example.com/webhook/…',
		description:
			'Address the gateway posts incoming messages to, e.g. the Production URL of a Messaging Trigger node',
	},
];

export interface AccountParams {
	whatsapp_number: string;
	whatsapp_webhook: string;
}

export function accountParams(ctx: IExecuteFunctions, itemIndex: number, defaultCountry: string): AccountParams {
	const node = ctx.getNode();
	const rawNumber = ctx.getNodeParameter('whatsappNumber', itemIndex, '') as unknown;
	const phone = normalizePhone(typeof rawNumber === 'number' ? String(rawNumber) : typeof rawNumber === 'string' ? rawNumber : '', defaultCountry);
	if ('problem' in phone) {
		throw inputError(
			node,
			itemIndex,
			'WhatsApp Number',
			phone.problem,
			'Use the number of the WhatsApp account connected to the gateway, with its country code, e.g. +62 812-8877-6713.',
		);
	}
	const rawUrl = ctx.getNodeParameter('webhookUrl', itemIndex, '') as unknown;
	const url = typeof rawUrl === 'string' ? rawUrl.trim() : '';
	if (!url) {
		throw inputError(node, itemIndex, 'Webhook URL', 'is empty', 'Paste the Production URL of a Messaging Trigger node (or of any endpoint that receives the gateway\'s posts).');
	}
	if (!isAbsoluteHttpUrl(url)) {
		throw inputError(node, itemIndex, 'Webhook URL', `is not an absolute http(s) URL: "${url}"`, 'Write it in full, starting with https:// (or http://).');
	}
	return { whatsapp_number: phone.phone, whatsapp_webhook: url };
}

function isAbsoluteHttpUrl(value: string): boolean {
	try {
		const url = new URL(value);
		return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
	} catch {
		return false;
	}
}

/**
 * The account answer (`{"message": {...}}`, fields guessed from the request) as camel-cased
 * fields: the number and webhook the gateway holds, its status, and yes/no flags when given.
 */
export function accountJson(result: unknown, sent: AccountParams): IDataObject {
	const answer = (result && typeof result === 'object' ? result : {}) as IDataObject;
	const message = answer.message && typeof answer.message === 'object' ? (answer.message as IDataObject) : answer;
	const json: IDataObject = {
		whatsappNumber: stringOr(message.whatsapp_number ?? message.whatsappNumber, sent.whatsapp_number),
		webhookUrl: stringOr(message.whatsapp_webhook ?? message.whatsappWebhook ?? message.webhook, sent.whatsapp_webhook),
	};
	const status = message.accountStatus ?? message.status ?? message.state;
	if (typeof status === 'string') json.status = status;
	for (const flag of ['registered', 'updated', 'success'] as const) {
		if (typeof message[flag] === 'boolean') json[flag] = message[flag];
	}
	if (typeof message.message === 'string') json.message = message.message;
	json.response = (result ?? null) as IDataObject;
	return json;
}

function stringOr(value: unknown, fallback: string): string | null {
	if (typeof value === 'string') return value;
	if (typeof value === 'number') return String(value);
	// The gateway answered null: nothing registered. Only when the field is absent is the sent value assumed.
	return value === null ? null : fallback;
}
