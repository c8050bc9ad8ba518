import {
	NodeOperationError,
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type IWebhookDescription,
	type IWebhookFunctions,
	type IWebhookResponseData,
} from 'n8n-workflow';

import { sendPage, type PageResponse } from './answerPage';
import type { ResponseType } from '../actions/message/sendAndWait.operation';

// n8n checks the links' signature, then runs the node disabled: it passes on the webhook's items on
// an answer, else what is stored as its execute data when the wait ends. So the "timed out" items
// are stored before the wait, and the webhook reads the open questions back from them.

/** Path = the node's id, as n8n's own send-and-wait nodes. */
export const answerWebhooks: IWebhookDescription[] = (['GET', 'POST'] as const).map(
	(httpMethod) => ({
		name: 'default',
		httpMethod,
		responseMode: 'onReceived',
		responseData: '',
		path: '={{ $nodeId }}',
		restartWebhook: true,
		isFullPath: true,
	}),
);

const MAX_TEXT_ANSWER = 4000;
const UNITS_MS: Record<string, number> = { minutes: 60_000, hours: 3_600_000, days: 86_400_000 };
/** n8n-workflow's WAIT_INDEFINITELY. */
const WAIT_INDEFINITELY = new Date(Date.UTC(3000, 0, 1, 0, 0, 0));

export async function waitForAnswers(
	ctx: IExecuteFunctions,
	items: INodeExecutionData[],
	waitTill: Date,
): Promise<INodeExecutionData[]> {
	if (!items.some((item) => isQuestion(item.json))) return items;
	const timedOut = items.map((item) =>
		isQuestion(item.json) ? { ...item, json: { ...item.json, timedOut: true } } : item,
	);
	// Older n8n without getExecuteData: a timed-out wait passes the node's input on instead.
	if (typeof ctx.getExecuteData === 'function') ctx.getExecuteData().data = { main: [timedOut] };
	await ctx.putExecutionToWait(waitTill);
	return items;
}

function isQuestion(json: IDataObject | undefined): boolean {
	return typeof json?.waitId === 'string' && json.answered === false;
}

export function waitLimit(ctx: IExecuteFunctions): Date {
	if (ctx.getNodeParameter('limitWaitTime', 0, false) !== true) return WAIT_INDEFINITELY;
	const node = ctx.getNode();
	if (ctx.getNodeParameter('limitType', 0, 'afterTimeInterval') === 'atSpecifiedTime') {
		const raw = ctx.getNodeParameter('maxDateAndTime', 0, '') as unknown;
		const date = new Date(typeof raw === 'string' || typeof raw === 'number' ? raw : String(raw));
		if (!raw || Number.isNaN(date.getTime())) {
			throw new NodeOperationError(
				node,
				`Field "Max Date and Time" is not a date: ${JSON.stringify(raw)}`,
				{
					description:
						'Pick a date and time, or map an ISO date such as 2026-12-01T17:00:00+07:00.',
				},
			);
		}
		return date;
	}
	const amount = Number(ctx.getNodeParameter('resumeAmount', 0, 1));
	const unit = String(ctx.getNodeParameter('resumeUnit', 0, 'hours'));
	if (!Number.isFinite(amount) || amount < 0 || !UNITS_MS[unit]) {
		throw new NodeOperationError(
			node,
			`Field "Amount" must be a number of ${unit} of at least 0, not ${JSON.stringify(amount)}`,
		);
	}
	return new Date(Date.now() + amount * UNITS_MS[unit]);
}

// Opening a link decides nothing: previews and scanners fetch every link, but none presses a
// button. A browser sends a submit button's name only when it is pressed.
const DECISION = 'decision';

function pressed(ctx: IWebhookFunctions, value: string): boolean {
	const request = ctx.getRequestObject();
	if (request.method !== 'POST') return false;
	const type = String(request.headers['content-type'] ?? '');
	if (type.split(';')[0].trim().toLowerCase() !== 'application/x-www-form-urlencoded') return false;
	const body = (ctx.getBodyData() ?? {}) as IDataObject;
	return body[DECISION] === value;
}

export async function answerWebhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const res = this.getResponseObject() as unknown as PageResponse;
	const query = this.getQueryData() as Record<string, unknown>;
	const itemIndex =
		typeof query.item === 'string' && /^\d{1,6}$/.test(query.item) ? Number(query.item) : -1;
	const question = itemIndex >= 0 ? openQuestion(this, itemIndex) : undefined;
	if (!question || question.waitId !== query.w) {
		sendPage(res, 410, {
			title: 'This link is no longer valid',
			lines: [
				'It belongs to a question that was answered, replaced or ended. Nothing was recorded.',
			],
		});
		return { noWebhookResponse: true };
	}
	const responseType = this.getNodeParameter('responseType', 'approval') as ResponseType;
	const answer =
		responseType === 'freeText' ? freeTextAnswer(this, res) : approvalAnswer(this, res, query);
	if (!answer) return { noWebhookResponse: true };
	return { noWebhookResponse: true, workflowData: [answeredItems(this, itemIndex, answer)] };
}

/** The page never shows the question: whoever only opens the link learns nothing more. */
function freeTextAnswer(ctx: IWebhookFunctions, res: PageResponse): IDataObject | undefined {
	const buttonLabel = textOption(
		ctx.getNodeParameter('freeTextOptions.buttonLabel', 'Send'),
		'Send',
	);
	const page = (error?: string, value?: string) => ({
		title: 'Your answer',
		lines: ['Type your answer to the question in your WhatsApp message.'],
		form: {
			text: { label: 'Your answer', value, maxLength: MAX_TEXT_ANSWER },
			button: { label: buttonLabel, name: DECISION, value: 'send' },
			error,
		},
	});
	if (!pressed(ctx, 'send')) {
		const posted = ctx.getRequestObject().method === 'POST';
		sendPage(res, posted ? 400 : 200, page(posted ? NOT_RECORDED : undefined));
		return undefined;
	}
	const body = (ctx.getBodyData() ?? {}) as IDataObject;
	const text = typeof body.text === 'string' ? body.text.trim() : '';
	if (!text || text.length > MAX_TEXT_ANSWER) {
		const error = text
			? `The answer is longer than ${MAX_TEXT_ANSWER} characters.`
			: 'Please type an answer.';
		sendPage(res, 400, page(error, text.slice(0, MAX_TEXT_ANSWER)));
		return undefined;
	}
	sendPage(res, 200, {
		title: 'Thank you',
		lines: ['Your answer was sent. You can close this page.'],
	});
	return { text };
}

const NOT_RECORDED = 'Nothing was recorded: press the button to answer.';

function approvalAnswer(
	ctx: IWebhookFunctions,
	res: PageResponse,
	query: Record<string, unknown>,
): IDataObject | undefined {
	if (query.approved !== 'true' && query.approved !== 'false') {
		sendPage(res, 400, { title: 'This link is not valid', lines: ['Nothing was recorded.'] });
		return undefined;
	}
	const approved = query.approved === 'true';
	const decision = approved ? 'approve' : 'decline';
	if (!pressed(ctx, decision)) {
		const options = ctx.getNodeParameter('approvalOptions', {}) as IDataObject;
		const label = approved
			? textOption(options.approveLabel, 'Approve')
			: textOption(options.declineLabel, 'Decline');
		const posted = ctx.getRequestObject().method === 'POST';
		sendPage(res, posted ? 400 : 200, {
			title: label,
			lines: ['Press the button to record your answer. Opening this page records nothing.'],
			form: {
				button: { label, name: DECISION, value: decision },
				error: posted ? NOT_RECORDED : undefined,
			},
		});
		return undefined;
	}
	sendPage(
		res,
		200,
		approved
			? { title: 'Approved', lines: ['Your approval was recorded. You can close this page.'] }
			: {
					title: 'Declined',
					lines: ['Your answer (declined) was recorded. You can close this page.'],
				},
	);
	return { approved };
}

function answeredItems(
	ctx: IWebhookFunctions,
	itemIndex: number,
	answer: IDataObject,
): INodeExecutionData[] {
	const respondedAt = new Date().toISOString();
	return storedItems(ctx).map((item, index): INodeExecutionData => {
		if (!isStoredQuestion(item)) return { json: item, pairedItem: { item: index } };
		const answered = index === itemIndex;
		return {
			json: {
				...item,
				...(answered ? answer : {}),
				answered,
				respondedBy: answered ? (item.phone ?? null) : null,
				respondedAt: answered ? respondedAt : null,
				timedOut: false,
			},
			pairedItem: { item: index },
		};
	});
}

function textOption(value: unknown, fallback: string): string {
	return typeof value === 'string' && value.trim() ? value.trim() : fallback;
}

function isStoredQuestion(json: IDataObject): boolean {
	return typeof json.waitId === 'string' && 'answered' in json;
}

function openQuestion(ctx: IWebhookFunctions, itemIndex: number): IDataObject | undefined {
	const items = storedItems(ctx);
	const json = items[itemIndex];
	return json && isStoredQuestion(json) ? json : undefined;
}

const storedCache = new WeakMap<IWebhookFunctions, IDataObject[]>();

/** n8n hands them to the webhook as its input. */
function storedItems(ctx: IWebhookFunctions): IDataObject[] {
	let items = storedCache.get(ctx);
	if (!items) {
		const all = ctx.evaluateExpression('{{ $input.all().map((item) => item.json) }}', 0) as unknown;
		items = Array.isArray(all)
			? all.map((json) => (json && typeof json === 'object' ? (json as IDataObject) : {}))
			: [];
		storedCache.set(ctx, items);
	}
	return items;
}
