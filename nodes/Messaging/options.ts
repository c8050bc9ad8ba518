import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import {
	DEFAULT_MESSAGING_VERSION,
	messagingVersionOption,
	asOptions,
	defaultCountryOption,
	optionText,
	optionsCollection,
} from '../shared/properties';
import { MAX_TIMER_MS } from '../shared/clock';
import { inputError } from '../shared/errors';
import { numberValue, type FieldError, type NumberRule } from '../shared/execution/operationRun';
import type { SendSettings } from './helpers/sending';
import type { SendWindow } from './helpers/sendWindow';
import { readSendWindow, sendWindowFields, type WindowProblem } from './helpers/sendWindowFields';

export type MessagingOptions = SendSettings & {
	version: string;
	defaultCountry: string;
	parallel: number;
	delayMs: number;
};

// Why these defaults: docs/delivery-and-scale.md (8 hours) and docs/account-safety.md (2–6 s).
const SKIP_REPEATS_HOURS_DEFAULT = 8;
const MESSAGE_DELAY_DEFAULT = { min: 2, max: 6 };

const SENDING_OPERATIONS = ['sendText', 'sendFile', 'sendAndWait'];

const MAX_MESSAGE_DELAY_SECONDS = 3_600;

const MAX_CAP_MESSAGES = 1_000;

/** A longer wait holds the execution (and a worker); Wait for Send Window does not. */
const MAX_WAIT_MINUTES = 60;
const DEFAULT_MAX_WAIT_MINUTES = 5;

const MAX_SKIP_REPEATS_HOURS = 720;

/** Enforced again when read: an expression (`={{ 100000 }}`) bypasses the editor's bound. */
const MAX_PARALLEL_REQUESTS = 50;

const showForSends = { show: { '/resource': ['message'], '/operation': SENDING_OPERATIONS } };

/** An option left out is invisible in the editor, so a send says that it pauses. */
export const sendPauseNotice: INodeProperties = {
	displayName: `Messages after the first wait ${MESSAGE_DELAY_DEFAULT.min}–${MESSAGE_DELAY_DEFAULT.max} s at random, so that the WhatsApp account never sends in bursts. Change it with Options → Delay Between Messages (0 and 0: no pause).`,
	name: 'sendPauseNotice',
	type: 'notice',
	default: '',
	displayOptions: { show: { resource: ['message'], operation: SENDING_OPERATIONS } },
};

/** A send shows one delay, Delay Between Messages; the other operations Delay Between Requests. */
export function messagingOptionsProperties(versionSentBy: string): INodeProperties {
	return optionsCollection([
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
			displayOptions: { hide: { '/operation': SENDING_OPERATIONS } },
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
			hint: 'Not sent again within this many hours: the same message to the same number from the same event (a Retry, a re-run, a redelivery). 0: send every time.',
			description:
				"The same message to the same number from the same event (the trigger item it comes from) is sent once within this many hours, whatever runs it again: n8n's Retry, a re-run, two executions at once, other workers. A new event with the same words is sent. 0 sends every time. Kept in n8n's database (n8n 1.66 or newer; older n8n: this process's memory only).",
			displayOptions: showForSends,
		},
		{
			displayName: 'Idempotency Key',
			name: 'idempotencyKey',
			type: 'string',
			default: '',
			placeholder: '={{ $json.orderId }}',
			description:
				'What makes two messages to a number the same for Skip Repeats Within, instead of their content and event: an order or ticket number, for example. Empty: the content and the event it comes from.',
			displayOptions: showForSends,
		},
		{
			displayName: 'Delay Between Messages',
			name: 'messageDelay',
			type: 'fixedCollection',
			placeholder: 'Set Delay',
			default: {},
			description:
				'A random pause before each message but the first of the run, between Min and Max seconds: regular bursts are what gets WhatsApp accounts banned. 0 and 0: no pause.',
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
							// MESSAGE_DELAY_DEFAULT, written out for the editor's lint.
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
	]);
}

// Expressions skip the editor's bounds: each number is held to them here.
const NUMBERS: Record<string, NumberRule> = {
	parallel: { field: 'Parallel Requests', min: 1, max: MAX_PARALLEL_REQUESTS, whole: true },
	delayMs: { field: 'Delay Between Requests (Ms)', min: 0, max: MAX_TIMER_MS },
	skipRepeatsHours: { field: 'Skip Repeats Within (Hours)', min: 0, max: MAX_SKIP_REPEATS_HOURS },
	maxWaitMinutes: { field: 'Max Wait (Minutes)', min: 0, max: MAX_WAIT_MINUTES },
	minSeconds: { field: 'Delay Between Messages → Min', min: 0, max: MAX_MESSAGE_DELAY_SECONDS },
	maxSeconds: { field: 'Delay Between Messages → Max', min: 0, max: MAX_MESSAGE_DELAY_SECONDS },
	capMessages: { field: 'Account Cap → Messages', min: 1, max: MAX_CAP_MESSAGES, whole: true },
};

export function readMessagingOptions(ctx: IExecuteFunctions, itemIndex: number): MessagingOptions {
	const options = asOptions(ctx.getNodeParameter('options', itemIndex, {}));
	const fail: FieldError = (field, problem, fix) =>
		inputError(ctx.getNode(), itemIndex, `Options → ${field}`, problem, fix);
	const number = (value: unknown, fallback: number, name: string) =>
		numberValue(value, fallback, NUMBERS[name], fail);
	const option = (name: string, fallback: number) => number(options[name], fallback, name);
	const delay = asOptions(asOptions(options.messageDelay).range);
	const minSeconds = number(delay.minSeconds, MESSAGE_DELAY_DEFAULT.min, 'minSeconds');
	const maxDefault = Math.max(minSeconds, MESSAGE_DELAY_DEFAULT.max);
	const maxSeconds = number(delay.maxSeconds, maxDefault, 'maxSeconds');
	if (maxSeconds < minSeconds) {
		const fix = 'Enter a Max of at least Min, or the same for a fixed pause.';
		throw fail('Delay Between Messages → Max', `is ${maxSeconds}, below Min (${minSeconds})`, fix);
	}
	// Added with its defaults, the Cap may be stored empty: still a cap.
	const capGiven = asOptions(options.accountCap).cap;
	const cap = asOptions(capGiven);
	return {
		version: optionText(options, 'version', DEFAULT_MESSAGING_VERSION),
		defaultCountry: optionText(options, 'defaultCountry', ''),
		parallel: option('parallel', 1),
		delayMs: option('delayMs', 0),
		stopAtUsageLimit: options.stopAtUsageLimit === true,
		skipRepeatsHours: option('skipRepeatsHours', SKIP_REPEATS_HOURS_DEFAULT),
		idempotencyKey: optionText(options, 'idempotencyKey', ''),
		messageDelay: { minMs: Math.round(minSeconds * 1000), maxMs: Math.round(maxSeconds * 1000) },
		accountCap:
			capGiven === undefined || capGiven === null || typeof capGiven !== 'object'
				? undefined
				: {
						messages: number(cap.messages, 20, 'capMessages'),
						periodMs: cap.per === 'hour' ? 3_600_000 : 60_000,
					},
		sendWindow: sendWindowOption(ctx, options.sendWindow),
		maxWaitMs: option('maxWaitMinutes', DEFAULT_MAX_WAIT_MINUTES) * 60_000,
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
