import {
	NodeOperationError,
	WAIT_INDEFINITELY,
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type IWebhookDescription,
	type IWebhookFunctions,
	type IWebhookResponseData,
} from 'n8n-workflow';

import { saveChatWait } from '../../shared/chatWaits';
import { readCredential } from '../../shared/credential';
import { checkAccount, readAccountAnswer } from '../../shared/gateway';
import { DEFAULT_MESSAGING_VERSION } from '../../shared/properties';
import { ApiClient, type ApiCredentials } from '../../shared/transport';
import { hint, listInWords, shown } from '../../shared/errors';

export type ResponseType = 'approval' | 'freeText';

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

export async function waitForAnswers(
	ctx: IExecuteFunctions,
	items: INodeExecutionData[],
	waitTill: Date,
): Promise<INodeExecutionData[]> {
	if (!items.some((item) => isQuestion(item.json))) return items;
	if (ctx.getNodeParameter('responseBy', 0, 'links') === 'chatReply')
		await rememberChatWaits(ctx, items, waitTill);
	const timedOut = items.map((item) =>
		isQuestion(item.json) ? { ...item, json: { ...item.json, timedOut: true } } : item,
	);
	// Older n8n without getExecuteData: a timed-out wait passes the node's input on instead.
	if (typeof ctx.getExecuteData === 'function') ctx.getExecuteData().data = { main: [timedOut] };
	await ctx.putExecutionToWait(waitTill);
	return items;
}

/**
 * For the account's Messaging Trigger: each sent question, by (account, person), with a signed link
 * of its own that the person never sees. Unsaved, the links (if sent) and the limit still end it.
 */
async function rememberChatWaits(
	ctx: IExecuteFunctions,
	output: INodeExecutionData[],
	waitTill: Date,
): Promise<void> {
	const responseType = ctx.getNodeParameter('responseType', 0, 'approval') as ResponseType;
	const account = await readCredential(ctx);
	const failed: number[] = [];
	for (const [itemIndex, { json }] of output.entries()) {
		if (json.sent !== true || typeof json.waitId !== 'string' || typeof json.phone !== 'string')
			continue;
		const options = ctx.getNodeParameter('approvalOptions', itemIndex, {}) as IDataObject;
		const wait = {
			...approvalLabels(options ?? {}),
			url: ctx.getSignedResumeUrl({ item: String(itemIndex), w: json.waitId, via: 'chat' }),
			waitId: json.waitId,
			itemIndex,
			responseType,
			executionId: ctx.getExecutionId(),
		};
		await saveChatWait(account, json.phone, wait, waitTill).catch(() => failed.push(itemIndex));
	}
	if (failed.length > 0)
		hint(
			ctx,
			`A reply in the chat cannot resume the question of item ${listInWords(failed.map(String))}: the shared state could not be written. The answer links (if sent) and the wait limit still end the wait.`,
			'warning',
		);
	await warnWithoutTrigger(ctx, account);
}

/** The account's messages go elsewhere (Check Account): no trigger of this n8n reads the replies. */
async function warnWithoutTrigger(ctx: IExecuteFunctions, account: ApiCredentials) {
	const version = String(ctx.getNodeParameter('options.version', 0, DEFAULT_MESSAGING_VERSION));
	const client = new ApiClient(account);
	const params = { whatsapp_number: '', whatsapp_webhook: '' };
	// A failed check reads as no answer: nothing is known, so nothing is said.
	const answer = await checkAccount(client, params, { version }).catch(() => null);
	const webhook = readAccountAnswer(answer).webhookUrl;
	if (webhook === undefined) return;
	// Compared by host name: n8n serves its webhooks and its resume links under one address.
	const host = (url: string) => (URL.canParse(url) ? new URL(url).hostname : '');
	if (webhook && host(webhook) === host(ctx.getSignedResumeUrl({}))) return;
	hint(
		ctx,
		`No active Messaging Trigger of this n8n receives this account's messages (its webhook is ${webhook ? 'elsewhere' : 'empty'}): a reply in the chat cannot resume this wait. The answer links (if sent) and the wait limit still end it.`,
		'warning',
	);
}

export function approvalLabels(options: IDataObject) {
	const single = options.approvalType === 'single';
	const approveLabel = labelOf(options.approveLabel, 'Approve');
	return { single, approveLabel, declineLabel: labelOf(options.declineLabel, 'Decline') };
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
		if (!raw || Number.isNaN(date.getTime()))
			throw new NodeOperationError(node, `Field "Max Date and Time" is not a date: ${shown(raw)}`, {
				description: 'Pick a date and time, or map an ISO date such as 2026-12-01T17:00:00+07:00.',
			});
		return date;
	}
	const amount = Number(ctx.getNodeParameter('resumeAmount', 0, 1));
	const unit = String(ctx.getNodeParameter('resumeUnit', 0, 'hours'));
	if (!Number.isFinite(amount) || amount < 0 || !UNITS_MS[unit])
		throw new NodeOperationError(
			node,
			`Field "Amount" must be a number of ${unit} of at least 0, not ${shown(amount)}`,
		);
	return new Date(Date.now() + amount * UNITS_MS[unit]);
}

// Opening a link decides nothing: previews and scanners fetch every link, but none presses a
// button. A browser sends a submit button's name only when it is pressed.
const DECISION = 'decision';
const NOT_RECORDED = 'Nothing was recorded: press the button to answer.';

function pressed(ctx: IWebhookFunctions, value: string): boolean {
	const request = ctx.getRequestObject();
	const contentType = String(request.headers['content-type'] ?? '');
	const type = contentType.split(';')[0].trim().toLowerCase();
	if (request.method !== 'POST' || type !== 'application/x-www-form-urlencoded') return false;
	return ((ctx.getBodyData() ?? {}) as IDataObject)[DECISION] === value;
}

export async function answerWebhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const res = this.getResponseObject() as unknown as PageResponse;
	const query = this.getQueryData() as Record<string, unknown>;
	const viaChat = query.via === 'chat';
	const itemIndex =
		typeof query.item === 'string' && /^\d{1,6}$/.test(query.item) ? Number(query.item) : -1;
	const stored = itemIndex >= 0 ? storedItems(this) : [];
	const question = stored[itemIndex];
	if (!question || !isStoredQuestion(question) || question.waitId !== query.w) {
		const why =
			'It belongs to a question that was answered, replaced or ended. Nothing was recorded.';
		if (viaChat) sendJson(res, 410, { resumed: false, error: why });
		else sendPage(res, 410, { title: 'This link is no longer valid', lines: [why] });
		return { noWebhookResponse: true };
	}
	const responseType = this.getNodeParameter('responseType', 'approval') as ResponseType;
	const answer = viaChat
		? chatAnswer(this, res, responseType)
		: responseType === 'freeText'
			? freeTextAnswer(this, res)
			: approvalAnswer(this, res, query);
	if (!answer) return { noWebhookResponse: true };
	const linkAnswer = { respondedBy: question.phone ?? null, respondedAt: new Date().toISOString() };
	const answered = { answeredBy: viaChat ? 'chat' : 'link', ...linkAnswer, ...answer };
	const items = stored.map((json, index): INodeExecutionData => {
		const isAnswer = index === itemIndex;
		return {
			json: !isStoredQuestion(json)
				? json
				: {
						...json,
						...(isAnswer ? answered : { respondedBy: null, respondedAt: null }),
						answered: isAnswer,
						timedOut: false,
					},
			pairedItem: { item: index },
		};
	});
	return { noWebhookResponse: true, workflowData: [items] };
}

/** The Messaging Trigger posts a reply it read in the chat: JSON in, JSON out. */
function chatAnswer(
	ctx: IWebhookFunctions,
	res: PageResponse,
	responseType: ResponseType,
): IDataObject | undefined {
	const body = (ctx.getBodyData() ?? {}) as IDataObject;
	const text = typeof body.text === 'string' ? body.text.trim() : '';
	const at = typeof body.at === 'string' && !Number.isNaN(Date.parse(body.at)) ? body.at : '';
	const answer =
		responseType === 'freeText'
			? text && text.length <= MAX_TEXT_ANSWER && { text }
			: typeof body.approved === 'boolean' && { approved: body.approved };
	if (ctx.getRequestObject().method !== 'POST' || !answer || !at) {
		sendJson(res, 400, { resumed: false, error: 'Not an answer: nothing was recorded' });
		return undefined;
	}
	sendJson(res, 200, { resumed: true });
	const text64 = (value: unknown) => (typeof value === 'string' ? value.slice(0, 64) : null);
	return {
		...answer,
		respondedBy: text64(body.from),
		respondedAt: new Date(at).toISOString(),
		replyMessageId: text64(body.messageId),
	};
}

function sendJson(res: PageResponse, status: number, body: IDataObject): void {
	const json = JSON.stringify(body);
	res.writeHead(status, {
		'content-type': 'application/json; charset=utf-8',
		'content-length': String(Buffer.byteLength(json)),
		'cache-control': 'no-store',
	});
	res.end(json);
}

/** The page never shows the question: whoever only opens the link learns nothing more. */
function freeTextAnswer(ctx: IWebhookFunctions, res: PageResponse): IDataObject | undefined {
	const buttonLabel = labelOf(ctx.getNodeParameter('freeTextOptions.buttonLabel', ''), 'Send');
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
			? labelOf(options.approveLabel, 'Approve')
			: labelOf(options.declineLabel, 'Decline');
		const posted = ctx.getRequestObject().method === 'POST';
		const button = { label, name: DECISION, value: decision };
		const form = { button, error: posted ? NOT_RECORDED : undefined };
		const lines = ['Press the button to record your answer. Opening this page records nothing.'];
		sendPage(res, posted ? 400 : 200, { title: label, lines, form });
		return undefined;
	}
	const [title, said] = approved
		? ['Approved', 'Your approval']
		: ['Declined', 'Your answer (declined)'];
	sendPage(res, 200, { title, lines: [`${said} was recorded. You can close this page.`] });
	return { approved };
}

/** A label as typed, or its default when empty. */
export function labelOf(value: unknown, fallback: string): string {
	return typeof value === 'string' && value.trim() ? value.trim() : fallback;
}

/** n8n hands them to the webhook as its input. */
function storedItems(ctx: IWebhookFunctions): IDataObject[] {
	const all = ctx.evaluateExpression('{{ $input.all().map((item) => item.json) }}', 0) as unknown;
	return (Array.isArray(all) ? all : []).map((json) =>
		json && typeof json === 'object' ? (json as IDataObject) : {},
	);
}

function isStoredQuestion(json: IDataObject): boolean {
	return typeof json.waitId === 'string' && 'answered' in json;
}

// The pages a person sees: plain HTML, no scripts or assets, no referrer (the link is a
// credential), never cached.

interface PageContent {
	title: string;
	lines: string[];
	/** Posts to the page's signed address; the button's name and value go only when it is pressed. */
	form?: {
		text?: { label: string; value?: string; maxLength: number };
		button: { label: string; name: string; value: string };
		error?: string;
	};
}

interface PageResponse {
	writeHead(status: number, headers: Record<string, string>): unknown;
	end(body: string): unknown;
}

const STYLE = [
	'body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1f2328}',
	'main{max-width:32rem;margin:3rem auto;padding:1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.08)}',
	'h1{font-size:1.3rem;margin:0 0 1rem}',
	'p{line-height:1.5;white-space:pre-wrap}',
	'label{display:block;font-weight:600;margin:1rem 0 .4rem}',
	'textarea{box-sizing:border-box;width:100%;min-height:8rem;padding:.6rem;font:inherit;border:1px solid #c9ccd1;border-radius:8px}',
	'button{margin-top:1rem;padding:.7rem 1.4rem;font:inherit;font-weight:600;color:#fff;background:#1f7a4d;border:0;border-radius:8px}',
	'.error{color:#b42318}',
].join('');

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

function sendPage(res: PageResponse, status: number, { title, lines, form }: PageContent): void {
	const paragraphs = lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('');
	const formHtml = form
		? `<form method="post">${form.error ? `<p class="error">${escapeHtml(form.error)}</p>` : ''}${form.text ? `<label for="text">${escapeHtml(form.text.label)}</label><textarea id="text" name="text" maxlength="${form.text.maxLength}" required>${escapeHtml(form.text.value ?? '')}</textarea>` : ''}<button type="submit" name="${escapeHtml(form.button.name)}" value="${escapeHtml(form.button.value)}">${escapeHtml(form.button.label)}</button></form>`
		: '';
	const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main><h1>${escapeHtml(title)}</h1>${paragraphs}${formHtml}</main></body></html>`;
	res.writeHead(status, {
		'content-type': 'text/html; charset=utf-8',
		'content-length': String(Buffer.byteLength(html)),
		'content-security-policy':
			"default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
		'referrer-policy': 'no-referrer',
		'cache-control': 'no-store',
		'x-content-type-options': 'nosniff',
	});
	res.end(html);
}
