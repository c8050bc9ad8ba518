import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { DEFAULT_MESSAGING_VERSION, messagingVersionOption } from '../shared/gatewayAccount';
import { inputError } from '../shared/errors';
import {
	asOptions,
	defaultCountryOption,
	optionText,
	optionsCollection,
} from '../shared/optionsCollection';
import { timerDelay } from '../shared/clock';
import type { AccountCap } from './helpers/accountCap';
import {
	readSendWindow,
	sendWindowFields,
	type SendWindow,
	type WindowProblem,
} from './helpers/sendWindow';
import { normalizePhone } from '../shared/phone';
import { OperationRun, textValue } from '../shared/execution/operationRun';
import type { IdentifiedSend } from './helpers/idempotency';
import type { SendPacer } from './helpers/pacing';
import type { Allowance } from './helpers/sending';

/**
 * The Messaging node's parameters that belong to no single operation: the Options (read once
 * per run, or per item when set by an expression) and the Phone Number field that Send Text, Send File and Number → Check share.
 */

export interface MessagingOptions {
	version: string;
	defaultCountry: string;
	parallel: number;
	delayMs: number;
	/** Send only as many items as the account's usage limit allows (Send Text, Send File, Send and Wait). */
	stopAtUsageLimit: boolean;
	/** Skip Repeats Within (Hours): the same message is sent once per window, across executions; 0 = off. */
	skipRepeatsHours: number;
	/** What makes two messages the same for Skip Repeats Within, instead of their content (empty: the content). */
	idempotencyKey: string;
	/** Delay Between Messages: a pause drawn uniformly from this range before every message but the run's first. */
	messageDelay: { minMs: number; maxMs: number };
	/** Account Cap: at most this many messages per period from the account, across workflows and processes. */
	accountCap: AccountCap | undefined;
	/** Send Only Between: outside it nothing is sent (or what is wrong with its fields, for the item's error). */
	sendWindow: SendWindow | WindowProblem | undefined;
	/** Max Wait: how long a run may wait in all for the account cap and the send window. */
	maxWaitMs: number;
}

/**
 * What an option is when the workflow does not set it, per node version: the one place where a
 * version's behaviour differs. n8n saves no value for an option left out, so a workflow saved
 * with version 1 keeps behaving as it did; nodes added since are version 2.
 * Version 2: Skip Repeats Within is on, 8 hours (a re-run the same working day is caught; a
 * daily message, 24 hours later, is never taken for a repeat: see docs/delivery-and-scale.md);
 * Delay Between Messages is 2–6 s (no machine-regular bursts from a new user's account: see
 * docs/account-safety.md).
 */
const DEFAULTS_BY_VERSION = {
	1: { skipRepeatsHours: 0, messageDelaySeconds: { min: 0, max: 0 } },
	2: { skipRepeatsHours: 8, messageDelaySeconds: { min: 2, max: 6 } },
} as const;

/** The operations that send a message: the ones Delay Between Messages, Account Cap and Send Only Between hold. */
export const SENDING_OPERATIONS = ['sendText', 'sendFile', 'sendAndWait'];

/** The newest version of the Messaging node (its `defaultVersion`). */
export const MESSAGING_VERSION = 2;

function defaultsFor(ctx: IExecuteFunctions) {
	const version = Math.floor(ctx.getNode().typeVersion) as keyof typeof DEFAULTS_BY_VERSION;
	return DEFAULTS_BY_VERSION[version] ?? DEFAULTS_BY_VERSION[MESSAGING_VERSION];
}

/** Delay Between Messages at most, in seconds (a timer holds more, a run should not). */
const MAX_MESSAGE_DELAY_SECONDS = 3_600;

/** Account Cap: at most this many messages per period (the sliding window keeps each send's time). */
const MAX_CAP_MESSAGES = 1_000;

/** Max Wait (Minutes) at most: a longer wait holds the execution (and a worker); Wait for Send Window does not. */
const MAX_WAIT_MINUTES = 60;
const DEFAULT_MAX_WAIT_MINUTES = 5;

/** Skip Repeats Within (Hours) at most: 30 days. */
const MAX_SKIP_REPEATS_HOURS = 720;

/**
 * Parallel Requests at most: the editor's bound, enforced again when the run reads the value,
 * because an expression (`={{ 100000 }}`) bypasses the editor.
 */
const MAX_PARALLEL_REQUESTS = 50;

/** What every Messaging operation gets for the run, with what the run's sends share. */
export class MessagingRun extends OperationRun<MessagingOptions> {
	/** The pacing of the run's sends (pacing.ts), when the operation sends. */
	pacer: SendPacer | undefined;
	/** Each item's message key for Skip Repeats Within (idempotency.ts). */
	readonly sends = new Map<number, IdentifiedSend>();
	/** Stop at the Usage Limit: the allowance read once for the run (sending.ts). */
	allowance: Promise<Allowance> | undefined;
	/** Send and Wait: this run's wait, so that links of an earlier wait are refused. */
	waitId: string | undefined;
	/** Wait for Send Window: the run has waited (once, at its first readable item). */
	waited = false;
}

/** The options that apply to sends only. */
const showForSends = {
	show: { '/resource': ['message'], '/operation': SENDING_OPERATIONS },
};

/**
 * Version 2 pauses between messages by default; an option left out is invisible in the editor,
 * so a new send says so above its Options.
 */
export const sendPauseNotice: INodeProperties = {
	displayName: `Messages after the first wait ${DEFAULTS_BY_VERSION[2].messageDelaySeconds.min}–${DEFAULTS_BY_VERSION[2].messageDelaySeconds.max} s at random, so that the WhatsApp account never sends in bursts. Change it with Options → Delay Between Messages (0 and 0: no pause).`,
	name: 'sendPauseNotice',
	type: 'notice',
	default: '',
	displayOptions: {
		show: {
			'@version': [2],
			'resource': ['message'],
			'operation': ['sendText', 'sendFile', 'sendAndWait'],
		},
	},
};

/** Version 2's default (DEFAULTS_BY_VERSION), by name: n8n's lint reads a literal or a name as a default. */
const SKIP_REPEATS_HOURS_DEFAULT = DEFAULTS_BY_VERSION[MESSAGING_VERSION].skipRepeatsHours;

/**
 * The Options collection, one per node version: a version 2 send shows one delay, Delay Between
 * Messages (a version 1 node keeps both, as it was saved). `versionSentBy` names the operations
 * that send "version" (derived from the resource definitions by the node).
 */
export function messagingOptionsProperties(versionSentBy: string): INodeProperties[] {
	const options = messagingOptions(versionSentBy);
	const forVersion2 = options.map((option) =>
		option.name === 'delayMs'
			? { ...option, displayOptions: { hide: { '/operation': SENDING_OPERATIONS } } }
			: option,
	);
	return [
		optionsCollection(options, { displayOptions: { show: { '@version': [1] } } }),
		optionsCollection(forVersion2, { displayOptions: { show: { '@version': [2] } } }),
	];
}

function messagingOptions(versionSentBy: string): INodeProperties[] {
	return [
		messagingVersionOption(
			`Value sent as "version" by ${versionSentBy}. Change it only if your gateway asks for another (e.g. v16).`,
		),
		defaultCountryOption(
			'Two-letter country code (ISO 3166) used for phone numbers written without a country code, such as 0812 8877 6713',
		),
		{
			displayName: 'Parallel Requests',
			name: 'parallel',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: MAX_PARALLEL_REQUESTS },
			default: 1,
			description:
				'How many items are sent at the same time. 1 keeps the order of delivery and protects the number from spam bans.',
		},
		{
			displayName: 'Delay Between Requests (Ms)',
			name: 'delayMs',
			type: 'number',
			typeOptions: { minValue: 0 },
			default: 0,
			description: 'Minimum time between the start of two requests, in milliseconds',
		},
		{
			displayName: 'Stop at the Usage Limit',
			name: 'stopAtUsageLimit',
			type: 'boolean',
			default: false,
			description:
				"Whether to read the account's usage limit once before the first send and send only as many items as remain; the others fail without a request (error items with On Error → Continue)",
			displayOptions: showForSends,
		},
		{
			displayName: 'Skip Repeats Within (Hours)',
			name: 'skipRepeatsHours',
			type: 'number',
			typeOptions: { minValue: 0, maxValue: MAX_SKIP_REPEATS_HOURS },
			default: SKIP_REPEATS_HOURS_DEFAULT,
			hint: 'Not sent again: the same message to the same number within this many hours, by any execution. 0: send every time.',
			description:
				"The same message to the same number is sent once within this many hours, whatever runs it again: n8n's Retry, a re-run, two executions at once, other workers. 0 sends every time. Not set: 8 for nodes added since version 2, off for older ones. Kept in n8n's database (n8n 1.66 or newer; older n8n: this process's memory only).",
			displayOptions: showForSends,
		},
		{
			displayName: 'Idempotency Key',
			name: 'idempotencyKey',
			type: 'string',
			default: '',
			placeholder: '={{ $json.orderId }}',
			description:
				'What makes two messages to a number the same for Skip Repeats Within, instead of their content: an order or ticket number, for example. Empty: the content.',
			displayOptions: showForSends,
		},
		{
			displayName: 'Delay Between Messages',
			name: 'messageDelay',
			type: 'fixedCollection',
			placeholder: 'Set Delay',
			default: {},
			description:
				'A random pause before each message but the first of the run, between Min and Max seconds: regular bursts are what gets WhatsApp accounts banned. 0 and 0: no pause. Not set: 2 to 6 seconds (nodes added since version 2; older ones: none).',
			options: [
				{
					name: 'range',
					displayName: 'Range',
					values: [
						{
							displayName: 'Min (Seconds)',
							name: 'minSeconds',
							type: 'number',
							typeOptions: { minValue: 0, maxValue: MAX_MESSAGE_DELAY_SECONDS, numberPrecision: 1 },
							// Version 2's default (DEFAULTS_BY_VERSION), written out for the editor's lint.
							default: 2,
						},
						{
							displayName: 'Max (Seconds)',
							name: 'maxSeconds',
							type: 'number',
							typeOptions: { minValue: 0, maxValue: MAX_MESSAGE_DELAY_SECONDS, numberPrecision: 1 },
							default: 6,
						},
					],
				},
			],
			displayOptions: showForSends,
		},
		{
			displayName: 'Account Cap',
			name: 'accountCap',
			type: 'fixedCollection',
			placeholder: 'Set Cap',
			default: {},
			description:
				'At most this many messages from the account (this credential) per minute or hour, counted over every workflow, execution and queue-mode worker whose node has a cap. Messages over the cap wait their turn, up to Max Wait.',
			options: [
				{
					name: 'cap',
					displayName: 'Cap',
					values: [
						{
							displayName: 'Messages',
							name: 'messages',
							type: 'number',
							typeOptions: { minValue: 1, maxValue: MAX_CAP_MESSAGES },
							default: 20,
						},
						{
							displayName: 'Per',
							name: 'per',
							type: 'options',
							options: [
								{ name: 'Minute', value: 'minute' },
								{ name: 'Hour', value: 'hour' },
							],
							default: 'minute',
						},
					],
				},
			],
			displayOptions: showForSends,
		},
		{
			displayName: 'Send Only Between',
			name: 'sendWindow',
			type: 'fixedCollection',
			placeholder: 'Set Send Window',
			default: {},
			description:
				'Hours and days in which messages may go out. Outside them nothing is sent: an item waits for the opening up to Max Wait, else comes out not sent, with the next opening. Put Message → Wait for Send Window before this node to hold the items until then.',
			options: [{ name: 'window', displayName: 'Window', values: sendWindowFields() }],
			displayOptions: showForSends,
		},
		{
			displayName: 'Max Wait (Minutes)',
			name: 'maxWaitMinutes',
			type: 'number',
			typeOptions: { minValue: 0, maxValue: MAX_WAIT_MINUTES },
			default: DEFAULT_MAX_WAIT_MINUTES,
			description:
				'How long the run may wait in all for Account Cap and Send Only Between. Messages that would wait longer come out not sent (no request made), so running them again later cannot send them twice.',
			displayOptions: showForSends,
		},
	];
}

/** The Options of one item (the router reads them once per run, or per item when one is an expression). */
export function readMessagingOptions(ctx: IExecuteFunctions, itemIndex: number): MessagingOptions {
	const options = asOptions(ctx.getNodeParameter('options', itemIndex, {}));
	return {
		version: optionText(options, 'version', DEFAULT_MESSAGING_VERSION),
		defaultCountry: optionText(options, 'defaultCountry', ''),
		parallel: Math.min(
			MAX_PARALLEL_REQUESTS,
			Math.max(1, Math.floor(Number(options.parallel ?? 1)) || 1),
		),
		// A timer holds at most about 24.8 days; a longer delay would not wait at all.
		delayMs: timerDelay(Number(options.delayMs ?? 0) || 0),
		stopAtUsageLimit: options.stopAtUsageLimit === true,
		skipRepeatsHours: hoursOption(options.skipRepeatsHours, defaultsFor(ctx).skipRepeatsHours),
		idempotencyKey: optionText(options, 'idempotencyKey', ''),
		messageDelay: messageDelayOption(options.messageDelay, defaultsFor(ctx).messageDelaySeconds),
		accountCap: accountCapOption(options.accountCap),
		sendWindow: sendWindowOption(ctx, options.sendWindow),
		maxWaitMs:
			boundedNumber(options.maxWaitMinutes, 0, MAX_WAIT_MINUTES, DEFAULT_MAX_WAIT_MINUTES) * 60_000,
	};
}

/** A number within bounds; not set (or not a number): `fallback`. */
function boundedNumber(value: unknown, min: number, max: number, fallback: number): number {
	const n = value === undefined || value === '' || value === null ? NaN : Number(value);
	return Number.isFinite(n) ? Math.min(max, Math.max(min, n)) : fallback;
}

function messageDelayOption(
	value: unknown,
	fallback: { min: number; max: number },
): MessagingOptions['messageDelay'] {
	const range = asOptions(asOptions(value).range);
	const seconds = (name: string, dflt: number) =>
		boundedNumber(range[name], 0, MAX_MESSAGE_DELAY_SECONDS, dflt);
	const min = seconds('minSeconds', fallback.min);
	// A Max below Min is read as Min: the pause is never shorter than the user asked.
	const max = Math.max(min, seconds('maxSeconds', Math.max(min, fallback.max)));
	return { minMs: Math.round(min * 1000), maxMs: Math.round(max * 1000) };
}

function accountCapOption(value: unknown): AccountCap | undefined {
	const cap = asOptions(value).cap;
	if (!cap || typeof cap !== 'object') return undefined;
	const fields = asOptions(cap);
	return {
		messages: Math.floor(boundedNumber(fields.messages, 1, MAX_CAP_MESSAGES, 20)),
		periodMs: fields.per === 'hour' ? 3_600_000 : 60_000,
	};
}

function sendWindowOption(
	ctx: IExecuteFunctions,
	value: unknown,
): SendWindow | WindowProblem | undefined {
	const window = asOptions(value).window;
	if (!window || typeof window !== 'object') return undefined;
	return readSendWindow(asOptions(window), ctx.getTimezone());
}

/** A number of hours from 0 to the maximum; not set (or not a number): the version's default. */
function hoursOption(value: unknown, fallback: number): number {
	const hours = value === undefined || value === '' || value === null ? NaN : Number(value);
	return Number.isFinite(hours) ? Math.min(MAX_SKIP_REPEATS_HOURS, Math.max(0, hours)) : fallback;
}

/** Shown under every phone-number field: the mistake a first run most often makes is a number without its country code. */
export const PHONE_NUMBER_HINT =
	'Include the country code, e.g. +62 812-8877-6713, or add the "Default Country" option for local numbers such as 0812…';

/** The "Phone Number" parameter that Send Text, Send File and Number → Check share. */
export function phoneProperty(description: string): INodeProperties {
	return {
		displayName: 'Phone Number',
		name: 'phone',
		type: 'string',
		default: '',
		required: true,
		placeholder: '+62 812-8877-6713',
		hint: PHONE_NUMBER_HINT,
		description,
	};
}

/** The item's "Phone Number" in the API's form (digits with country code), or an error naming the item. */
export function recipientPhone(run: MessagingRun, itemIndex: number): string {
	return phoneParameter(run, itemIndex, {
		name: 'phone',
		field: 'Phone Number',
		fix: 'Use digits with the country code, e.g. +62 812-8877-6713, or set "Default Country" in the options for local numbers.',
	});
}

/**
 * A phone-number parameter of one item in the API's form, read with the item's Default
 * Country; a value that is no phone number fails the item, naming the field and how to fix it.
 */
export function phoneParameter(
	run: MessagingRun,
	itemIndex: number,
	{ name, field, fix }: { name: string; field: string; fix: string },
): string {
	const text = textValue(run, itemIndex, run.parameter(name, itemIndex, ''), field, fix);
	const parsed = normalizePhone(text, run.options(itemIndex).defaultCountry);
	if ('problem' in parsed) throw inputError(run.node, itemIndex, field, parsed.problem, fix);
	return parsed.phone;
}
