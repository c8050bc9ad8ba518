import type { INode, INodeProperties } from 'n8n-workflow';

import { inputError } from '../shared/errors';
import { numberValue, type FieldError, type NumberRule } from '../shared/execution/operationRun';
import {
	DEFAULT_MESSAGING_VERSION,
	messagingVersionOption,
	asOptions,
	defaultCountryOption,
	optionText,
	optionsCollection,
} from '../shared/properties';

export const MESSAGE_CATEGORIES = ['text', 'image', 'document', 'audio', 'video', 'other'] as const;
export type MessageCategory = (typeof MESSAGE_CATEGORIES)[number];

type Verification = 'generatedSecret' | 'none' | 'apiKey' | 'headerSecret' | 'querySecret';

const DEFAULT_SECRET_HEADER = 'x-webhook-secret';
export const DEFAULT_SECRET_QUERY = 'token';
const DEFAULT_MAX_BODY_MB = 16;
const DEFAULT_BINARY_PROPERTY = 'data';
const REPEAT_MINUTES = 60;
const MAX_BODY: NumberRule = { field: 'Maximum Body Size (MB)', min: 1 };
const REPEAT_WINDOW: NumberRule = { field: 'Repeat Window (Minutes)', min: 1, max: 10080 };

// The recommended choice first.
const verificationOptions: INodeProperties['options'] = [
	{
		name: 'Generated Secret (Recommended)',
		value: 'generatedSecret',
		description:
			'Publishing (n8n 2.x) or activating (1.x) the workflow registers the URL with a secret of its own in the query',
	},
	{ name: 'None', value: 'none', description: 'Accept every request to the webhook URL' },
	{
		name: 'API Key in Payload',
		value: 'apiKey',
		description: 'The payload\'s "x-api-key" must equal the Client Secret of the credential',
	},
	{
		name: 'Shared Secret in Header',
		value: 'headerSecret',
		description: 'A header must carry the shared secret (for a proxy in front of n8n that adds it)',
	},
	{
		name: 'Shared Secret in Query Parameter',
		value: 'querySecret',
		description: 'The registered webhook URL carries the shared secret as a query parameter',
	},
];

export const triggerProperties: INodeProperties[] = [
	{
		displayName:
			"The gateway keeps <b>one webhook per account</b>. Publishing (n8n 2.x) or activating (1.x) this workflow points the account's webhook here, and any other workflow or system using the same account stops receiving messages. A second workflow published (or activated) on this account takes it over from this one.",
		name: 'oneWebhookPerAccountNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Trigger On',
		name: 'event',
		type: 'options',
		options: [
			{
				name: 'Message Received',
				value: 'messageReceived',
				action: 'On WhatsApp message received',
				description: 'A WhatsApp message reaches the gateway account',
			},
		],
		default: 'messageReceived',
	},
	{
		displayName: 'Account Number',
		name: 'accountNumber',
		type: 'string',
		default: '',
		placeholder: '+62 812-8877-6713',
		hint: 'Empty: the number the gateway holds for this account (Account → Check). Else with its country code.',
		description:
			"The WhatsApp number of your gateway account; empty takes the number the gateway holds for it (what Account → Check shows). Publishing (n8n 2.x) or activating (1.x) the workflow registers its URL as the account's webhook (Update Account).",
	},
	{
		displayName: 'Message Types',
		name: 'messageTypes',
		type: 'multiOptions',
		options: [
			{ name: 'Audio', value: 'audio', description: 'Audio files and voice notes' },
			{ name: 'Document', value: 'document', description: 'Files such as PDF or spreadsheets' },
			{ name: 'Image', value: 'image' },
			{ name: 'Other', value: 'other', description: 'Any other type, e.g. stickers, locations' },
			{ name: 'Text', value: 'text' },
			{ name: 'Video', value: 'video' },
		],
		default: [],
		hint: 'Empty = all message types',
		description: 'Only messages of these types start the workflow. Leave empty for all types.',
	},
	{
		displayName: 'Ignore Own Messages',
		name: 'ignoreOwnMessages',
		type: 'boolean',
		default: true,
		description:
			"Whether to ignore messages written by the account's own number (in any spelling: 0812…, +62 812…), so that an auto-reply does not answer itself",
	},
	{
		displayName: 'Verification',
		name: 'verification',
		type: 'options',
		default: 'generatedSecret',
		options: verificationOptions,
		description:
			'How a request is checked before it starts the workflow. A request that fails is answered 401.',
	},
	{
		displayName: 'Header Name',
		name: 'headerName',
		type: 'string',
		default: DEFAULT_SECRET_HEADER,
		displayOptions: { show: { verification: ['headerSecret'] } },
		description: 'Name of the header that carries the shared secret',
	},
	{
		displayName: 'Query Parameter Name',
		name: 'queryParameterName',
		type: 'string',
		default: DEFAULT_SECRET_QUERY,
		displayOptions: { show: { verification: ['querySecret', 'generatedSecret'] } },
		description: 'Name of the query parameter that carries the secret in the registered URL',
	},
	{
		displayName: 'Shared Secret',
		name: 'sharedSecret',
		type: 'string',
		typeOptions: { password: true },
		default: '',
		required: true,
		displayOptions: { show: { verification: ['headerSecret', 'querySecret'] } },
		description: 'A long random string. Requests without it are answered 401 and start nothing.',
	},
	optionsCollection([
		messagingVersionOption(
			'Value sent as "version" by Check Account and Update Account when the webhook is registered',
		),
		defaultCountryOption(
			'Two-letter country code (ISO 3166) used when the Account Number is written without a country code, such as 0812 8877 6713',
		),
		{
			displayName: 'Maximum Body Size (MB)',
			name: 'maxBodySizeMb',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: DEFAULT_MAX_BODY_MB,
			description:
				"Larger requests are answered 400 and start nothing. n8n's own limit (N8N_PAYLOAD_SIZE_MAX, 16 MB by default) applies first.",
		},
		{
			displayName: 'Skip Repeated Deliveries',
			name: 'skipRepeatedDeliveries',
			type: 'boolean',
			default: true,
			description: 'Whether a repeated delivery of a message ID (uuid) starts nothing',
		},
		{
			displayName: 'Repeat Window (Minutes)',
			name: 'repeatWindowMinutes',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: 10080 },
			default: REPEAT_MINUTES,
			description: 'How long a message ID is remembered for Skip Repeated Deliveries',
		},
		{
			displayName: 'Start Workflow for Replies Too',
			name: 'startWorkflowForReplies',
			type: 'boolean',
			default: false,
			description:
				'Whether a reply that answers a question of Send and Wait (Reply in the Chat) also starts this workflow; off: it only resumes the waiting execution',
		},
		{
			displayName: 'Put File in Field',
			name: 'binaryPropertyName',
			type: 'string',
			default: DEFAULT_BINARY_PROPERTY,
			description: 'Name of the binary field that receives the file of a media message',
		},
	]),
];

/** The Account Number as typed: normalised where it is used, so that it fails clearly there. */
export type TriggerSettings = ReturnType<typeof readTriggerSettings>;

/** Takes n8n's hook and webhook functions alike (their signatures differ in details). */
export function readTriggerSettings(ctx: {
	getNode(): INode;
	getNodeParameter(name: string, fallback?: unknown): unknown;
}) {
	const text = (name: string, fallback = ''): string => {
		const value = ctx.getNodeParameter(name, fallback);
		return typeof value === 'string' || typeof value === 'number' ? String(value) : fallback;
	};
	const options = asOptions(ctx.getNodeParameter('options', {}));
	const types = ctx.getNodeParameter('messageTypes', []);
	const verification = text('verification', 'generatedSecret') as Verification;
	const inQuery = verification === 'querySecret' || verification === 'generatedSecret';
	const shared = verification === 'headerSecret' || verification === 'querySecret';
	const fail: FieldError = (...error) => inputError(ctx.getNode(), undefined, ...error);
	return {
		accountNumber: text('accountNumber'),
		// An unknown type (a mapped value) is ignored: it must not filter every message out.
		messageTypes: (Array.isArray(types) ? types : []).filter((type): type is MessageCategory =>
			(MESSAGE_CATEGORIES as readonly unknown[]).includes(type),
		),
		ignoreOwnMessages: ctx.getNodeParameter('ignoreOwnMessages', true) === true,
		verification,
		headerName: text('headerName').trim() || DEFAULT_SECRET_HEADER,
		queryParameterName: (inQuery && text('queryParameterName').trim()) || DEFAULT_SECRET_QUERY,
		sharedSecret: shared ? text('sharedSecret') : '',
		version: optionText(options, 'version', DEFAULT_MESSAGING_VERSION),
		defaultCountry: optionText(options, 'defaultCountry', ''),
		maxBodyBytes: numberValue(options.maxBodySizeMb, DEFAULT_MAX_BODY_MB, MAX_BODY, fail) * 2 ** 20,
		binaryPropertyName: optionText(options, 'binaryPropertyName', DEFAULT_BINARY_PROPERTY),
		skipRepeatedDeliveries: options.skipRepeatedDeliveries !== false,
		startWorkflowForReplies: options.startWorkflowForReplies === true,
		repeatWindowMs:
			numberValue(options.repeatWindowMinutes, REPEAT_MINUTES, REPEAT_WINDOW, fail) * 60_000,
	};
}
