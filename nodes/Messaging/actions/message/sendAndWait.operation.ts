import { randomBytes } from 'crypto';
import {
	NodeOperationError,
	SEND_AND_WAIT_OPERATION,
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
} from 'n8n-workflow';

import type { ItemCall } from '../../../shared/execution/router';
import { showFor } from '../../../shared/properties';
import { textParameter } from '../../../shared/execution/operationRun';
import { endpoints } from '../../../shared/transport';
import type { MessagingRun } from '../../run';
import { phoneProperty, recipientPhone } from '../../helpers/recipient';
import {
	approvalLabels,
	labelOf,
	waitForAnswers,
	waitLimit,
	type ResponseType,
} from '../../helpers/waitAndResume';

// n8n checks the signature of the links of a node whose operation is SEND_AND_WAIT_OPERATION.
const show = showFor('message', SEND_AND_WAIT_OPERATION);
const showFor2 = (extra: Record<string, Array<string | boolean>>) => ({
	show: { ...show.show, ...extra },
});

const choices = (...pairs: Array<[string, string]>) =>
	pairs.map(([name, value]) => ({ name, value }));

export const description: INodeProperties[] = [
	{
		...phoneProperty(
			'Who is asked: recipient, with country code (or set "Default Country" in the options)',
		),
		displayOptions: show,
	},
	{
		displayName: 'Message',
		name: 'message',
		type: 'string',
		typeOptions: { rows: 4 },
		default: '',
		required: true,
		placeholder: 'Approve the broadcast of the March price list to 1,200 customers?',
		description: 'The question; the answer links (or how to reply in the chat) are added below it',
		displayOptions: show,
	},
	{
		displayName: 'Response Type',
		name: 'responseType',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Approval',
				value: 'approval',
				description: 'The person taps a link to approve (or decline)',
			},
			{
				name: 'Free Text',
				value: 'freeText',
				description: 'The person taps a link that opens a small form and types an answer',
			},
		],
		default: 'approval',
		displayOptions: show,
	},
	{
		displayName: 'Response By',
		name: 'responseBy',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Answer Links',
				value: 'links',
				description: 'The message carries signed links to answer',
			},
			{
				name: 'Reply in the Chat',
				value: 'chatReply',
				description:
					"The person replies in WhatsApp (e.g. 1 or 2); the account's published (n8n 1.x: active) Messaging Trigger resumes the execution",
			},
		],
		default: 'links',
		displayOptions: show,
	},
	{
		displayName: 'Also Send Answer Links',
		name: 'alsoSendLinks',
		type: 'boolean',
		default: false,
		description: 'Whether the answer links are sent too, under the line that says how to reply',
		displayOptions: showFor2({ responseBy: ['chatReply'] }),
	},
	{
		displayName: 'Approval Options',
		name: 'approvalOptions',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		displayOptions: showFor2({ responseType: ['approval'] }),
		options: [
			{
				displayName: 'Type of Approval',
				name: 'approvalType',
				type: 'options',
				options: choices(['Approve and Decline', 'double'], ['Approve Only', 'single']),
				default: 'double',
			},
			{
				displayName: 'Approve Label',
				name: 'approveLabel',
				type: 'string',
				default: 'Approve',
				description: 'Text before the approve link; with Reply in the Chat also a word to reply',
			},
			{
				displayName: 'Decline Label',
				name: 'declineLabel',
				type: 'string',
				default: 'Decline',
				description: 'Text before the decline link; with Reply in the Chat also a word to reply',
			},
		],
	},
	{
		displayName: 'Free Text Options',
		name: 'freeTextOptions',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		displayOptions: showFor2({ responseType: ['freeText'] }),
		options: [
			{
				displayName: 'Link Label',
				name: 'linkLabel',
				type: 'string',
				default: 'Reply',
				description: 'Text before the link to the answer form',
			},
			{
				displayName: 'Form Button Label',
				name: 'buttonLabel',
				type: 'string',
				default: 'Send',
				description: "The form's submit button",
			},
		],
	},
	{
		displayName: 'Limit Wait Time',
		name: 'limitWaitTime',
		type: 'boolean',
		default: false,
		description:
			'Whether the execution goes on without an answer after a time or at a date (the output then says timedOut: true)',
		displayOptions: show,
	},
	{
		displayName: 'Limit Type',
		name: 'limitType',
		type: 'options',
		options: [
			{
				name: 'After Time Interval',
				value: 'afterTimeInterval',
				description: 'Wait at most this long',
			},
			{
				name: 'At Specified Time',
				value: 'atSpecifiedTime',
				description: 'Wait until this date and time at most',
			},
		],
		default: 'afterTimeInterval',
		displayOptions: showFor2({ limitWaitTime: [true] }),
	},
	{
		displayName: 'Amount',
		name: 'resumeAmount',
		type: 'number',
		typeOptions: { minValue: 0, numberPrecision: 2 },
		default: 1,
		description: 'How long to wait for an answer, in the unit below',
		displayOptions: showFor2({ limitWaitTime: [true], limitType: ['afterTimeInterval'] }),
	},
	{
		displayName: 'Unit',
		name: 'resumeUnit',
		type: 'options',
		options: choices(['Minutes', 'minutes'], ['Hours', 'hours'], ['Days', 'days']),
		default: 'hours',
		description: 'The unit of the amount above',
		displayOptions: showFor2({ limitWaitTime: [true], limitType: ['afterTimeInterval'] }),
	},
	{
		displayName: 'Max Date and Time',
		name: 'maxDateAndTime',
		type: 'dateTime',
		default: '',
		description: 'The execution goes on at this time if nobody answered before',
		displayOptions: showFor2({ limitWaitTime: [true], limitType: ['atSpecifiedTime'] }),
	},
];

export const endpoint = endpoints.sendMessage;

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	run: MessagingRun,
): Promise<ItemCall> {
	if (typeof this.getSignedResumeUrl !== 'function')
		throw new NodeOperationError(run.node, 'Send and Wait needs n8n 1.107 or newer', {
			itemIndex,
			description:
				'This n8n cannot sign the answer links. An unsigned link would let anyone who guesses the execution number answer, so nothing was sent. Update n8n, or send the question with Send Text and collect the answer with the Messaging Trigger.',
		});
	// Older n8n checks the links' signature only when the node asks for it.
	(this as { setSignatureValidationRequired?: () => void }).setSignatureValidationRequired?.();
	const phone = recipientPhone(run, itemIndex);
	const question = textParameter(run, itemIndex, 'message', 'Message').trim();
	const fix = 'Enter the question to ask, or map a field that holds it.';
	if (question === '') throw run.fail(itemIndex, 'Message', 'is empty', fix);
	// Checked with the item, before any question is sent: the wait itself begins after the run.
	waitLimit(this);
	const responseType = run.parameter('responseType', 0, 'approval') as ResponseType;
	// The links of this question only: an answer finds its question by it.
	const waitId = randomBytes(6).toString('hex');
	const chat = run.parameter('responseBy', 0, 'links') === 'chatReply';
	const withLinks = !chat || run.parameter('alsoSendLinks', 0, false) === true;
	const links = answerLinks(this, run, itemIndex, responseType, waitId);
	const lines = [
		...(chat ? [replyLine(run, itemIndex, responseType), ...(withLinks ? [''] : [])] : []),
		...(withLinks ? links.map(({ label, url }) => `${label}: ${url}`) : []),
	];
	const body = [question, '', ...lines].join('\n');
	const { version } = run.options(itemIndex);
	// The links differ per run (signed, with the run's id): the question and its labels are the message.
	await run.sender.identify(itemIndex, {
		operation: SEND_AND_WAIT_OPERATION,
		phone,
		content: () => [
			question,
			responseType,
			...(chat ? ['chatReply', withLinks] : []),
			...links.map(({ label }) => label),
		],
		repeatIsError: true,
	});
	return async () =>
		await run.sender.send(
			itemIndex,
			phone,
			async () => await run.client.call(endpoint, { version, phone, body }, { signal: run.signal }),
			(sent) => ({
				...(responseType === 'freeText' ? { text: null } : { approved: null }),
				answered: false,
				respondedBy: null,
				respondedAt: null,
				timedOut: false,
				...sent,
				question,
				waitId,
			}),
		);
}

/** After the run: the execution waits for the answers (or the limit). */
export async function finish(
	this: IExecuteFunctions,
	output: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return await waitForAnswers(this, output, waitLimit(this));
}

function replyLine(run: MessagingRun, itemIndex: number, responseType: ResponseType): string {
	if (responseType === 'freeText') return 'Reply to this message with your answer';
	const options = (run.parameter('approvalOptions', itemIndex, {}) ?? {}) as IDataObject;
	const { single, approveLabel, declineLabel } = approvalLabels(options);
	return single ? `Reply 1 to ${approveLabel}` : `Reply 1 to ${approveLabel}, 2 to ${declineLabel}`;
}

function answerLinks(
	ctx: IExecuteFunctions,
	run: MessagingRun,
	itemIndex: number,
	responseType: ResponseType,
	waitId: string,
): Array<{ label: string; url: string }> {
	const link = (extra: Record<string, string>) =>
		ctx.getSignedResumeUrl({ ...extra, item: String(itemIndex), w: waitId });
	if (responseType === 'freeText') {
		const options = (run.parameter('freeTextOptions', itemIndex, {}) ?? {}) as IDataObject;
		return [{ label: labelOf(options.linkLabel, 'Reply'), url: link({}) }];
	}
	const options = (run.parameter('approvalOptions', itemIndex, {}) ?? {}) as IDataObject;
	const { single, approveLabel, declineLabel } = approvalLabels(options);
	const links = [
		{ label: approveLabel, url: link({ approved: 'true' }) },
		{ label: declineLabel, url: link({ approved: 'false' }) },
	];
	return single ? links.slice(0, 1) : links;
}
