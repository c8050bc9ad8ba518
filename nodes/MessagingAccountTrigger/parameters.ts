import { NodeOperationError, type INodeProperties, type IPollFunctions } from 'n8n-workflow';

import { DEFAULT_MESSAGING_VERSION, messagingVersionOption } from '../shared/gatewayAccount';
import { asOptions, optionText, optionsCollection } from '../shared/optionsCollection';
import { normalizePhone } from '../shared/phone';
import { EVENTS } from './health';

export type WatchedEvent =
	| 'disconnected'
	| 'connected'
	| 'qrCodeNeeded'
	| 'webhookChanged'
	| 'usageLimit'
	| 'gatewayUnreachable';

export type UsageRule = { readonly kind: 'percent' | 'count' | 'blocked'; readonly below: number };

const forEvent = (...events: WatchedEvent[]) => ({ show: { events } });

const EVENT_OPTIONS = EVENTS.map(({ displayName, name, description }) => ({
	name: displayName,
	value: name,
	description,
})).sort((a, b) => a.name.localeCompare(b.name));

const DEFAULT_QR_CODES_PER_DISCONNECTION = 3;
const DEFAULT_MINUTES_BETWEEN_QR_CODES = 5;

export const triggerProperties: INodeProperties[] = [
	{
		displayName: 'Trigger On',
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
		description:
			'The WhatsApp number of the gateway account: Account → Check, which shows the webhook, asks for it',
		displayOptions: forEvent('webhookChanged'),
	},
	{
		displayName: 'Usage Limit Fires When',
		name: 'usageRule',
		type: 'options',
		options: [
			{
				name: 'Messages Left Fall Below a Percentage',
				value: 'percent',
				description: 'Of the limit the gateway reports; blocked sending fires too',
			},
			{
				name: 'Messages Left Fall Below a Number',
				value: 'count',
				description: 'Blocked sending fires too',
			},
			{
				name: 'Sending Is Blocked',
				value: 'blocked',
				description: 'Only when the gateway blocks sending',
			},
		],
		default: 'percent',
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
			default: DEFAULT_MINUTES_BETWEEN_QR_CODES,
			description:
				'QR Code Needed: a changed QR code fires again only this many minutes after the last one',
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
			default: DEFAULT_QR_CODES_PER_DISCONNECTION,
			description:
				'QR Code Needed: at most this many items while the account stays disconnected, so a long outage does not flood',
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

export interface TriggerSettings {
	readonly events: ReadonlySet<WatchedEvent>;
	readonly accountNumber: string;
	readonly usageRule: UsageRule;
	readonly failedPolls: number;
	readonly qrCodesPerDisconnection: number;
	readonly minutesBetweenQrCodes: number;
	readonly reportProblemsAtStart: boolean;
	readonly qrField: string;
	readonly version: string;
}

const EVENT_NAMES = new Set<string>(EVENTS.map((event) => event.name));

export function readTriggerSettings(ctx: IPollFunctions): TriggerSettings {
	const fail = (field: string, problem: string, fix: string) =>
		new NodeOperationError(ctx.getNode(), `Field "${field}" ${problem}`, { description: fix });
	const numberIn = (value: unknown, valid: boolean, field: string, is: string, fix: string) => {
		if (!valid) throw fail(field, `is not ${is}: ${JSON.stringify(value)}`, fix);
		return value as number;
	};

	const picked = ctx.getNodeParameter('events', []);
	const list = Array.isArray(picked) ? picked : [];
	const unknown = list.filter((event) => !EVENT_NAMES.has(String(event)));
	if (unknown.length > 0 || list.length === 0)
		throw fail(
			'Trigger On',
			list.length === 0 ? 'is empty' : `holds unknown events: ${JSON.stringify(unknown)}`,
			`Pick one or more of: ${EVENT_OPTIONS.map((option) => option.name).join(', ')}.`,
		);
	const events = new Set(list as WatchedEvent[]);

	let accountNumber = '';
	if (events.has('webhookChanged')) {
		const parsed = normalizePhone(String(ctx.getNodeParameter('accountNumber', '')));
		if ('problem' in parsed)
			throw fail(
				'Account Number',
				parsed.problem,
				'Enter the WhatsApp number of the gateway account with its country code, e.g. +62 812-8877-6713.',
			);
		accountNumber = parsed.phone;
	}

	const kind = events.has('usageLimit') ? ctx.getNodeParameter('usageRule', 'percent') : 'blocked';
	let below = 0;
	if (kind === 'percent') {
		const percent = Number(ctx.getNodeParameter('usagePercent', 10));
		below = numberIn(
			percent,
			percent >= 0 && percent <= 100,
			'Percentage Left',
			'a percentage',
			'Enter a number from 0 to 100, e.g. 10.',
		);
	} else if (kind === 'count') {
		const count = Number(ctx.getNodeParameter('usageCount', 100));
		below = numberIn(
			count,
			Number.isInteger(count) && count >= 0,
			'Messages Left',
			'a whole number',
			'Enter a number of messages, e.g. 100.',
		);
	} else if (kind !== 'blocked') {
		throw fail(
			'Usage Limit Fires When',
			`is not a known choice: ${JSON.stringify(kind)}`,
			'Pick one of the listed choices.',
		);
	}

	const failedPolls = Number(
		events.has('gatewayUnreachable') ? ctx.getNodeParameter('failedPolls', 3) : 1,
	);
	const options = asOptions(ctx.getNodeParameter('options', {}));
	const perDisconnection = Number(
		options.qrCodesPerDisconnection ?? DEFAULT_QR_CODES_PER_DISCONNECTION,
	);
	const minutesBetween = Number(options.minutesBetweenQrCodes ?? DEFAULT_MINUTES_BETWEEN_QR_CODES);
	return {
		events,
		accountNumber,
		usageRule: { kind, below },
		failedPolls: numberIn(
			failedPolls,
			Number.isInteger(failedPolls) && failedPolls >= 1 && failedPolls <= 1000,
			'Failed Polls Before Firing',
			'a whole number from 1 to 1000',
			'Enter how many polls in a row may fail, e.g. 3.',
		),
		qrCodesPerDisconnection: numberIn(
			perDisconnection,
			Number.isInteger(perDisconnection) && perDisconnection >= 1,
			'QR Codes per Disconnection',
			'a whole number of 1 or more',
			'Enter e.g. 3.',
		),
		minutesBetweenQrCodes: numberIn(
			minutesBetween,
			Number.isFinite(minutesBetween) && minutesBetween >= 0,
			'Minutes Between QR Codes',
			'a number of minutes',
			'Enter e.g. 5.',
		),
		reportProblemsAtStart: options.reportProblemsAtStart !== false,
		qrField: optionText(options, 'qrBinaryPropertyName', 'qrCode'),
		version: optionText(options, 'version', DEFAULT_MESSAGING_VERSION),
	};
}
