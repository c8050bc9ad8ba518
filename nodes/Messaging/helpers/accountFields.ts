import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { shown } from '../../shared/errors';
import { readAccountAnswer, type AccountParams } from '../../shared/gateway';
import { REDACTED, Redactor } from '../../shared/transport';
import { textParameter } from '../../shared/execution/operationRun';
import { urlProblem } from './download';
import type { MessagingRun } from '../run';
import { PHONE_NUMBER_HINT, phoneParameter } from './recipient';

export const accountFields: INodeProperties[] = [
	{
		displayName: 'WhatsApp Number',
		name: 'whatsappNumber',
		type: 'string',
		default: '',
		required: true,
		placeholder: '+62 812-8877-6713',
		hint: PHONE_NUMBER_HINT,
		description:
			'The gateway account\'s own number, with country code (or set "Default Country" in the options)',
	},
	{
		displayName: 'Webhook URL',
		name: 'webhookUrl',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'https://n8n.example.com/webhook/…',
		hint: 'A Messaging Trigger registers its own URL when its workflow is published (n8n 1.x: activated): no need to set it here for that',
		description:
			'Address the gateway posts incoming messages to, e.g. the Production URL of a Messaging Trigger node',
	},
];

export function accountParams(run: MessagingRun, itemIndex: number): AccountParams {
	const phone = phoneParameter(run, itemIndex, {
		name: 'whatsappNumber',
		field: 'WhatsApp Number',
		fix: 'Use the number of the WhatsApp account connected to the gateway, with its country code, e.g. +62 812-8877-6713.',
	});
	const url = textParameter(run, itemIndex, 'webhookUrl', 'Webhook URL').trim();
	const fail = (problem: string, fix: string) => run.fail(itemIndex, 'Webhook URL', problem, fix);
	if (!url)
		throw fail(
			'is empty',
			"Paste the Production URL of a Messaging Trigger node (or of any endpoint that receives the gateway's posts).",
		);
	if (urlProblem(url)) {
		const fix = 'Write it in full, starting with https:// (or http://).';
		throw fail(`is not an absolute http(s) URL: ${shown(url)}`, fix);
	}
	return { whatsapp_number: phone, whatsapp_webhook: url };
}

const SHOWN = [
	'whatsappNumber',
	'webhookUrl',
	'status',
	'registered',
	'updated',
	'success',
	'message',
] as const;

/** Never the values typed into the node, which would look as if the gateway held them. */
export function accountJson(result: unknown): IDataObject {
	const shown = readAccountAnswer(result);
	const json: IDataObject = {};
	for (const key of SHOWN) if (shown[key] !== undefined) json[key] = shown[key];
	json.response = (result ?? null) as IDataObject;
	// The webhook's query values are secrets wherever the answer repeats them (in a sentence of
	// `message` too), not only where the URL is a whole value.
	return new Redactor(urlSecretsOf(shown.webhookUrl)).value(withoutUrlSecrets(json)) as IDataObject;
}

function urlSecretsOf(webhookUrl: unknown): string[] {
	if (typeof webhookUrl !== 'string' || webhookUrl.length > 4096) return [];
	try {
		const url = new URL(webhookUrl);
		return [...url.searchParams.values(), decodeURIComponent(url.password)].filter(
			(value) => value !== '',
		);
	} catch {
		return [];
	}
}

function withoutUrlSecrets(value: unknown, depth = 0): unknown {
	if (typeof value === 'string') {
		if (value.length > 4096 || !/^https?:\/\//i.test(value) || !/[?@]/.test(value)) return value;
		try {
			const url = new URL(value);
			if (url.password) url.password = REDACTED;
			// One rewrite of the query, whatever the number of its keys.
			const names = [...new Set(url.searchParams.keys())];
			if (names.length)
				url.search = new URLSearchParams(
					names.map((name): [string, string] => [name, REDACTED]),
				).toString();
			return url.toString();
		} catch {
			return value;
		}
	}
	if (depth > 20 || value === null || typeof value !== 'object') return value;
	if (Array.isArray(value)) return value.map((v) => withoutUrlSecrets(v, depth + 1));
	return Object.fromEntries(
		Object.entries(value).map(([k, v]) => [k, withoutUrlSecrets(v, depth + 1)]),
	);
}
