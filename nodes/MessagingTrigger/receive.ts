import { timingSafeEqual } from 'crypto';
import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { clock } from '../shared/clock';
import { markReasked, noChatWaits, readChatWait, takeChatWait } from '../shared/chatWaits';
import { readCredential } from '../shared/credential';
import { messageOf, shown } from '../shared/errors';
import { normalizePhone } from '../shared/phone';
import { MemoryTable, sharedState, type RedisScript } from '../shared/store';
import { ApiClient, endpoints } from '../shared/transport';
import {
	boundedCopy,
	ignoreReason,
	isPlainObject,
	messageItem,
	readEvent,
	type IncomingEvent,
} from './message';
import { readTriggerSettings, type TriggerSettings } from './parameters';
import { generatedSecretFor, registrationOf, sha256 } from './registration';
import { reaskText, replyAnswer } from './reply';

// Every answer is JSON: `received: true` when accepted or deliberately ignored (200), `received:
// false` with the error when refused (401, 400, 503).
async function receiveMessage(
	ctx: IWebhookFunctions,
	tables: Tables,
): Promise<IWebhookResponseData> {
	const settings = readTriggerSettings(ctx);
	const record = registrationOf(ctx.getWorkflowStaticData('node'), ctx.getMode() === 'manual');
	// An empty Account Number: the number activation read from the gateway and registered.
	if (settings.accountNumber.trim() === '') settings.accountNumber = record?.accountNumber ?? '';

	// Checked before the body is parsed: a stranger's body is not worth the work.
	const secretProblem = await secretProblemOf(ctx, settings, record);
	if (secretProblem) return refuse(ctx, 401, secretProblem);

	const body = await readJsonBody(ctx, settings.maxBodyBytes);
	if ('problem' in body) return refuse(ctx, 400, body.problem);
	const event = readEvent(body.value);

	if (settings.verification === 'apiKey') {
		if (!event.apiKey) return refuse(ctx, 401, 'The payload has no "x-api-key"');
		// A credential that cannot be read (e.g. its secret emptied since activation) matches nothing.
		const credential = await readCredential(ctx).catch(() => undefined);
		if (!holds(event.apiKey, credential && sha256(credential.clientSecret)))
			return refuse(ctx, 401, 'The payload\'s "x-api-key" does not match the credential');
	}

	const ignored = ignoreReason(event, settings);
	if (ignored) return { webhookResponse: { received: true, ignored } };

	let release: (() => Promise<void>) | undefined;
	if (settings.skipRepeatedDeliveries && event.messageId !== '') {
		try {
			release = await claim(ctx, tables, event.messageId, settings.repeatWindowMs);
		} catch (error) {
			// Queue mode without its Redis: n8n cannot run the execution either; the gateway retries later.
			return refuse(ctx, 503, `${(error as Error).message}; try again later`);
		}
		if (!release) {
			const ignored = 'repeated delivery of a message already received';
			return { webhookResponse: { received: true, ignored, messageId: event.messageId } };
		}
	}
	const resumed = await resumeByReply(ctx, event, settings);
	if (resumed !== undefined && !settings.startWorkflowForReplies)
		return { webhookResponse: { received: true, resumed, messageId: event.messageId } };
	// The claim is released if the item cannot be made: the gateway's retry must not be a repeat.
	const item = await messageItem(ctx, event, settings.binaryPropertyName).catch(async (error) => {
		await release?.();
		throw error;
	});
	return {
		webhookResponse: { received: true, messageId: event.messageId },
		workflowData: [[item]],
	};
}

/**
 * A reply to a question of Send and Wait (Reply in the Chat) for this credential's account resumes
 * its execution: the execution's id, else undefined and the message starts the workflow as any.
 */
async function resumeByReply(
	ctx: IWebhookFunctions,
	event: IncomingEvent,
	settings: TriggerSettings,
): Promise<string | undefined> {
	if (event.type !== 'text' || event.isGroup || !/^\d{6,20}$/.test(event.sender)) return undefined;
	if (noChatWaits()) return undefined;
	const account = await readCredential(ctx).catch(() => undefined);
	const wait = account && (await readChatWait(account, event.sender).catch(() => undefined));
	if (!account || !wait) return undefined;
	const answer = replyAnswer(wait, event.text);
	if (!answer) {
		if (wait.responseType === 'approval' && (await markReasked(account, event.sender, wait.waitId)))
			await new ApiClient(account)
				.call(endpoints.sendMessage, {
					version: settings.version,
					phone: event.sender,
					body: reaskText(wait),
				})
				.catch((error) => ctx.logger.warn(`The reply could not be re-asked: ${messageOf(error)}`));
		return undefined;
	}
	if (!(await takeChatWait(account, event.sender, wait.waitId).catch(() => false)))
		return undefined;
	const body = {
		...answer,
		messageId: event.messageId,
		at: new Date(clock.now()).toISOString(),
		from: event.sender,
	};
	// A finished execution answers n8n's "No action required" page: only the node's JSON counts.
	const response = (await ctx.helpers
		.httpRequest({
			method: 'POST',
			url: wait.url,
			body,
			json: true,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			timeout: 30_000,
		})
		.catch(() => undefined)) as { statusCode?: number; body?: { resumed?: unknown } } | undefined;
	const ok = response && Number(response.statusCode) < 300 && response.body?.resumed === true;
	return ok ? wait.executionId : undefined;
}

/** n8n loads a node type once per process: the message ids this process received live with it. */
export function webhookFor() {
	// Test sessions have a table of their own: they never push out what active triggers remember.
	const tables: Tables = {
		production: new MemoryTable<true>(8 * 1024 * 1024, () => 8),
		manual: new MemoryTable<true>(512 * 1024, () => 8),
	};
	return async function (this: IWebhookFunctions): Promise<IWebhookResponseData> {
		return await receiveMessage(this, tables);
	};
}

/** n8n answers `webhookResponse` with the webhook's fixed 200: another status needs `res`. */
function refuse(ctx: IWebhookFunctions, status: number, error: string): IWebhookResponseData {
	const res = ctx.getResponseObject();
	res.statusCode = status;
	res.setHeader('content-type', 'application/json; charset=utf-8');
	// Written at once, with its content-length.
	res.end(JSON.stringify({ received: false, error }));
	return { noWebhookResponse: true };
}

/** Compared as digests: neither the secret's length nor where a guess differs shows. */
function holds(given: string, expectedSha256 = ''): boolean {
	const expected = Buffer.from(expectedSha256, 'hex');
	return expected.length === 32 && timingSafeEqual(Buffer.from(sha256(given), 'hex'), expected);
}

/** A reason never contains the expected secret. */
async function secretProblemOf(
	ctx: IWebhookFunctions,
	settings: TriggerSettings,
	record: { accountNumber?: string; secretSha256?: string } | undefined,
): Promise<string | undefined> {
	const { verification, headerName, queryParameterName, sharedSecret } = settings;
	if (verification === 'none' || verification === 'apiKey') return undefined;
	const generated = verification === 'generatedSecret';
	const inHeader = verification === 'headerSecret';
	const where = inHeader ? `header "${headerName}"` : `query parameter "${queryParameterName}"`;
	const value = inHeader
		? ctx.getHeaderData()[headerName.toLowerCase()]
		: ((ctx.getQueryData() ?? {}) as IDataObject)[queryParameterName];
	if (value === undefined || value === '') return `The request has no ${where}`;
	if (typeof value !== 'string') return `The ${where} must appear once`;
	if (!generated)
		return holds(value, sha256(sharedSecret))
			? undefined
			: `The ${where} does not hold the shared secret`;
	// Without a kept hash (static data lost), the secret is derived again from the credential.
	let expected = record?.secretSha256;
	if (!/^[0-9a-f]{64}$/.test(expected ?? '')) {
		const account = record?.accountNumber
			? { phone: record.accountNumber }
			: normalizePhone(settings.accountNumber, settings.defaultCountry);
		const webhookUrl = ctx.getNodeWebhookUrl('default');
		if ('phone' in account && webhookUrl)
			expected = await generatedSecretFor(ctx, account.phone, webhookUrl).then(sha256, () => '');
	}
	return holds(value, expected)
		? undefined
		: `The ${where} does not hold the generated secret; publish (or activate) the workflow again if the account's webhook was set by hand`;
}

// Read by the node itself, so that a broken or oversized body is answered here (400, JSON). n8n
// parses an application/json body first (a malformed one it answers 422 itself); other types arrive
// unparsed. Either way the raw bytes are read in the declared charset, and bounded.
async function readJsonBody(
	ctx: IWebhookFunctions,
	maxBytes: number,
): Promise<{ value: IDataObject } | { problem: string }> {
	const req = ctx.getRequestObject();
	const mb = maxBytes / (1024 * 1024);
	const tooLarge = {
		problem: `The body is larger than the limit of ${Number.isInteger(mb) ? mb : mb.toFixed(2)} MB (option "Maximum Body Size")`,
	};
	if (Number(req.headers['content-length']) > maxBytes) return tooLarge;
	try {
		if (!req.rawBody) await req.readRawBody();
	} catch (error) {
		// raw-body (behind n8n's `readRawBody`) says "too large" with status 413.
		if ((error as { status?: unknown } | undefined)?.status === 413) return tooLarge;
		return { problem: `The body could not be read: ${messageOf(error)}` };
	}
	if (req.rawBody.length > maxBytes) return tooLarge;

	// A latin1 body's `José` must not become `Jos\uFFFD`.
	const contentType = String(req.headers['content-type'] ?? '').slice(0, 1024);
	const declared = /;\s*charset\s*=\s*"?([^";]*)/i.exec(contentType)?.[1].trim().toLowerCase();
	const charset = declared ?? 'utf-8';
	let text: string;
	try {
		// A byte-order mark is dropped by the decoder itself.
		text = new TextDecoder(charset).decode(req.rawBody);
	} catch {
		return {
			problem: `The body declares the charset ${shown(charset)}, which cannot be read; send UTF-8`,
		};
	}
	if (text.trim() === '') return { problem: 'The body is empty; a JSON object was expected' };
	let copy: ReturnType<typeof boundedCopy>;
	try {
		copy = boundedCopy(JSON.parse(text));
	} catch (error) {
		return { problem: `The body is not valid JSON: ${messageOf(error).slice(0, 200)}` };
	}
	if ('problem' in copy) return copy;
	return isPlainObject(copy.value)
		? { value: copy.value }
		: { problem: 'The body must be a JSON object' };
}

// Gateways retry: one message (one `uuid`) delivered twice starts one execution. Not in static
// data: n8n does not save what a webhook writes there when that webhook starts an execution.

const CLAIM: RedisScript = {
	name: 'messagingTriggerClaim',
	keys: 1,
	lua: `return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0`,
};

/** Deletes the key only while it holds this delivery's token (never another delivery's claim). */
const RELEASE: RedisScript = {
	name: 'messagingTriggerRelease',
	keys: 1,
	lua: `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
};

type Tables = Record<'production' | 'manual', MemoryTable<true>>;

/**
 * Undefined for a repeat, else the claim's release: for when the workflow could not be started, so
 * that the gateway's retry is no repeat. An unreachable Redis throws.
 */
async function claim(ctx: IWebhookFunctions, tables: Tables, messageId: string, windowMs: number) {
	const node = ctx.getNode();
	const mode = ctx.getMode();
	const scope = `${ctx.getWorkflow().id ?? ''}:${node.id ?? node.name}:${mode}`;
	const id = sha256(messageId).slice(0, 32);
	const state = sharedState();
	if (state.kind === 'memory') {
		// Claimed before anything is awaited: deliveries racing into this process start one execution.
		const table = mode === 'manual' ? tables.manual : tables.production;
		const key = `${scope}\n${id}`;
		if (table.get(key)) return undefined;
		table.set(key, true, clock.now() + windowMs);
		return async () => table.delete(key);
	}
	const key = state.key(scope, 'delivery', id);
	const token = `${clock.now()}.${Math.random().toString(36).slice(2)}`;
	const claimed = await state.run(CLAIM, [key], [token, Math.max(1, Math.round(windowMs))]);
	if (claimed !== 1) return undefined;
	return async () => {
		await state.run(RELEASE, [key], [token]).catch(() => undefined);
	};
}
