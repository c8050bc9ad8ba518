import type { INodeProperties, IPollFunctions } from 'n8n-workflow';

import { inputError, shown } from '../shared/errors';
import {
	DEFAULT_MESSAGING_VERSION,
	asOptions,
	messagingVersionOption,
	optionsCollection,
} from '../shared/properties';
import { numberValue, type FieldError, type NumberRule } from '../shared/execution/operationRun';
import { normalizePhone } from '../shared/phone';
import { EVENTS, type WatchedEvent } from './health';

const forEvent = (...events: WatchedEvent[]) => ({ show: { events } });

const EVENT_OPTIONS = EVENTS.map(({ displayName, name, description }) => ({
	name: displayName,
	value: name,
	description,
})).sort((a, b) => a.name.localeCompare(b.name));

export const triggerProperties: INodeProperties[] = [
	{
		// Not "Events" or "Trigger On": n8n's node picker would list each event and cut "Trigger" from
		// the node's name, leaving "Messaging Account ".
		displayName: 'Events to Watch',
		name: 'events',
		type: 'multiOptions',
		noDataExpression: true,
		required: true,
		options: EVENT_OPTIONS,
		default: ['disconnected', 'connected', 'qrCodeNeeded'],
		description:
			'What starts the workflow. Each poll asks the gateway only what these need: Session → Get Status, Account → Check, Account → Get Usage Limit (at most three requests).',
	},
	{
		displayName: 'Account Number',
		name: 'accountNumber',
		type: 'string',
		default: '',
		required: true,
		placeholder: '+62 812-8877-6713',
		hint: 'The number connected to the gateway, with its country code',
		description: 'The WhatsApp number of the gateway account (Account → Check needs it)',
		displayOptions: forEvent('webhookChanged'),
	},
	{
		displayName: 'Usage Limit Fires When',
		name: 'usageRule',
		type: 'options',
		options: [
			{ name: 'Messages Left Fall Below a Percentage', value: 'percent' },
			{ name: 'Messages Left Fall Below a Number', value: 'count' },
			{ name: 'Sending Is Blocked', value: 'blocked', description: 'Only when sending is blocked' },
		],
		default: 'percent',
		description: 'Blocked sending fires with every choice',
		displayOptions: forEvent('usageLimit'),
	},
	{
		displayName: 'Percentage Left',
		name: 'usagePercent',
		type: 'number',
		typeOptions: { minValue: 0, maxValue: 100, numberPrecision: 2 },
		default: 10,
		description: 'Fire when fewer than this percent of the limit are left',
		displayOptions: { show: { events: ['usageLimit'], usageRule: ['percent'] } },
	},
	{
		displayName: 'Messages Left',
		name: 'usageCount',
		type: 'number',
		typeOptions: { minValue: 0 },
		default: 100,
		description: 'Fire when fewer than this many messages are left',
		displayOptions: { show: { events: ['usageLimit'], usageRule: ['count'] } },
	},
	{
		displayName: 'Failed Polls Before Firing',
		name: 'failedPolls',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 1000 },
		default: 3,
		description:
			'Fire "Gateway Unreachable" when the gateway did not answer this many polls in a row (counted in the running n8n; a restart starts the count again)',
		displayOptions: forEvent('gatewayUnreachable'),
	},
	optionsCollection([
		{
			displayName: 'Minutes Between QR Codes',
			name: 'minutesBetweenQrCodes',
			type: 'number',
			typeOptions: { minValue: 0, maxValue: 1440 },
			default: 5,
			description:
				'QR Code Needed: a changed code fires again only this many minutes after the last',
		},
		messagingVersionOption(
			'Version sent with Account → Check (Webhook Changed); the gateway expects its module version, e.g. 16.0.1.3',
		),
		{
			displayName: 'Put QR Image in Field',
			name: 'qrBinaryPropertyName',
			type: 'string',
			default: 'qrCode',
			description: 'Name of the binary field of a QR Code Needed item that holds the PNG image',
		},
		{
			displayName: 'QR Codes per Disconnection',
			name: 'qrCodesPerDisconnection',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: 100 },
			default: 3,
			description: 'QR Code Needed: at most this many items while the account stays disconnected',
		},
		{
			displayName: 'Report Problems at Start',
			name: 'reportProblemsAtStart',
			type: 'boolean',
			default: true,
			description:
				'Whether the first poll (after publishing the workflow — activating it in n8n 1.x — or after these settings changed) fires for problems already there: disconnected, a QR code waiting, the usage limit low or blocked. Off: it only remembers them.',
		},
	]),
];

export type Settings = ReturnType<typeof readSettings>;

// Expressions skip the editor's bounds: each number is held to them here.
const NUMBERS: Record<string, NumberRule> = {
	usagePercent: { field: 'Percentage Left', min: 0, max: 100 },
	usageCount: { field: 'Messages Left', min: 0, whole: true },
	failedPolls: { field: 'Failed Polls Before Firing', min: 1, max: 1000, whole: true },
	qrCodesPerDisconnection: { field: 'QR Codes per Disconnection', min: 1, max: 100, whole: true },
	minutesBetweenQrCodes: { field: 'Minutes Between QR Codes', min: 0, max: 1440 },
};

export function readSettings(ctx: IPollFunctions) {
	const fail: FieldError = (...error) => inputError(ctx.getNode(), undefined, ...error);
	const number = (name: string, fallback: number, rule = NUMBERS[name.replace('options.', '')]) =>
		numberValue(ctx.getNodeParameter(name, fallback), fallback, rule, fail);
	const text = (name: string, field: string, fallback: string) => {
		const value = options[name] ?? '';
		if (typeof value !== 'string' && typeof value !== 'number')
			throw fail(field, `is not text: ${shown(value)}`, `Enter text, e.g. ${fallback}.`);
		return String(value).trim() || fallback;
	};

	const options = asOptions(ctx.getNodeParameter('options', {}));
	const picked = ctx.getNodeParameter('events', []) as unknown;
	const events: ReadonlySet<WatchedEvent> = new Set(Array.isArray(picked) ? picked : []);
	const unknown = [...events].filter((event) => !EVENT_OPTIONS.some((o) => o.value === event));
	if (events.size === 0 || unknown.length > 0) {
		const problem = events.size === 0 ? 'is empty' : `holds unknown events: ${shown(unknown)}`;
		const fix = `Pick one or more of: ${EVENT_OPTIONS.map((option) => option.name).join(', ')}.`;
		throw fail('Events to Watch', problem, fix);
	}
	const account = events.has('webhookChanged')
		? normalizePhone(String(ctx.getNodeParameter('accountNumber', '')))
		: { phone: '' };
	if ('problem' in account) {
		const fix =
			'Enter the WhatsApp number of the gateway account with its country code, e.g. +62 812-8877-6713.';
		throw fail('Account Number', account.problem, fix);
	}
	const kind = events.has('usageLimit') ? ctx.getNodeParameter('usageRule', 'percent') : 'blocked';
	if (kind !== 'percent' && kind !== 'count' && kind !== 'blocked') {
		const fix = 'Pick one of the listed choices.';
		throw fail('Usage Limit Fires When', `is not a known choice: ${shown(kind)}`, fix);
	}
	const threshold = kind === 'percent' ? 'usagePercent' : 'usageCount';
	const below = kind === 'blocked' ? 0 : number(threshold, kind === 'percent' ? 10 : 100);

	return {
		events,
		accountNumber: account.phone,
		usageRule: { kind: kind as 'percent' | 'count' | 'blocked', below },
		failedPolls: events.has('gatewayUnreachable') ? number('failedPolls', 3) : 1,
		qrCodesPerDisconnection: number('options.qrCodesPerDisconnection', 3),
		minutesBetweenQrCodes: number('options.minutesBetweenQrCodes', 5),
		reportProblemsAtStart: options.reportProblemsAtStart !== false,
		qrField: text('qrBinaryPropertyName', 'Put QR Image in Field', 'qrCode'),
		version: text('version', 'API Version', DEFAULT_MESSAGING_VERSION),
	};
}
