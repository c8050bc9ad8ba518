import type { IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import type { Deliveries } from './deliveries';
import { boundedCopy, eventFields, ignoreReason, messageItem, readEvent } from './message';
import { readTriggerSettings } from './parameters';
import { registeredNumberOf } from './registration';
import { apiKeyProblem, generatedSecretProblem, sharedSecretProblem } from './verification';

// Every answer is JSON: `received: true` when accepted or deliberately ignored (200), `received:
// false` with the error when refused (401, 400, 503).
export async function receiveMessage(
	this: IWebhookFunctions,
	deliveries: Deliveries,
): Promise<IWebhookResponseData> {
	const settings = readTriggerSettings(this);
	// An empty Account Number: the number activation read from the gateway and registered.
	if (settings.accountNumber.trim() === '')
		settings.accountNumber =
			registeredNumberOf(this.getWorkflowStaticData('node'), this.getMode() === 'manual') ?? '';

	// Checked before the body is parsed: a stranger's body is not worth the work.
	const secretProblem =
		sharedSecretProblem(this, settings) ?? (await generatedSecretProblem(this, settings));
	if (secretProblem) return refuse(this, 401, secretProblem);

	const body = await readJsonBody(this, settings.maxBodyBytes);
	if ('problem' in body) return refuse(this, 400, body.problem);
	const read = eventFields(body.value);
	if ('problem' in read) return refuse(this, 400, read.problem);
	const event = readEvent(read.fields);

	if (settings.verification === 'apiKey') {
		const problem = await apiKeyProblem(this, event);
		if (problem) return refuse(this, 401, problem);
	}

	const ignored = ignoreReason(event, settings);
	if (ignored) return { webhookResponse: { received: true, ignored } };

	let release: (() => Promise<void>) | undefined;
	if (settings.skipRepeatedDeliveries && event.messageId !== '') {
		try {
			release = await deliveries.claim(this, event.messageId, settings.repeatWindowMs);
		} catch (error) {
			// Queue mode without its Redis: n8n cannot run the execution either; the gateway retries later.
			return refuse(this, 503, `${(error as Error).message}; try again later`);
		}
		if (!release) {
			const ignored = 'repeated delivery of a message already received';
			return { webhookResponse: { received: true, ignored, messageId: event.messageId } };
		}
	}
	// The claim is released if the item cannot be made: the gateway's retry must not be a repeat.
	const item = await messageItem(this, event, read.fields, settings.binaryPropertyName).catch(
		async (error: unknown) => {
			await release?.();
			throw error;
		},
	);
	return {
		webhookResponse: { received: true, messageId: event.messageId },
		workflowData: [[item]],
	};
}

/** n8n answers `webhookResponse` with the webhook's fixed 200: another status needs `res`. */
function refuse(ctx: IWebhookFunctions, status: number, error: string): IWebhookResponseData {
	const json = JSON.stringify({ received: false, error });
	ctx.getResponseObject().writeHead(status, {
		'content-type': 'application/json; charset=utf-8',
		'content-length': Buffer.byteLength(json),
	});
	ctx.getResponseObject().end(json);
	return { noWebhookResponse: true };
}

type WebhookRequest = AsyncIterable<Buffer | string> & {
	headers?: Record<string, string | string[] | undefined>;
	readable?: boolean;
	rawBody?: Buffer;
	readRawBody?: () => Promise<void>;
};

// Read by the node itself, so that a broken or oversized body is answered here (400, JSON). n8n
// parses an application/json body first (a malformed one it answers 422 itself); other types arrive
// unparsed. Either way the raw bytes are read in the declared charset, and bounded.
async function readJsonBody(
	ctx: IWebhookFunctions,
	maxBytes: number,
): Promise<{ value: unknown } | { problem: string }> {
	const req = ctx.getRequestObject() as unknown as WebhookRequest;
	const mb = maxBytes / (1024 * 1024);
	const tooLarge = {
		problem: `The body is larger than the limit of ${Number.isInteger(mb) ? mb : mb.toFixed(2)} MB (option "Maximum Body Size")`,
	};
	if (Number(req.headers?.['content-length']) > maxBytes) return tooLarge;

	let raw: Buffer | undefined;
	try {
		raw = await rawBodyOf(req, maxBytes);
	} catch (error) {
		// raw-body (behind n8n's `readRawBody`) says "too large" with status 413.
		const { status, type } = (error ?? {}) as { status?: unknown; type?: unknown };
		if (status === 413 || type === 'entity.too.large') return tooLarge;
		return { problem: `The body could not be read: ${messageOf(error)}` };
	}
	// A host that parsed the body and kept no bytes: use what it parsed.
	if (raw === undefined) return boundedCopy(ctx.getBodyData());
	if (raw.length > maxBytes) return tooLarge;

	// A latin1 body's `José` must not become `Jos\uFFFD`.
	const charset = declaredCharset(req.headers?.['content-type']) ?? 'utf-8';
	let text: string;
	try {
		text = new TextDecoder(charset).decode(raw).replace(/^\uFEFF/, '');
	} catch {
		return {
			problem: `The body declares the charset "${charset.slice(0, 40)}", which cannot be read; send UTF-8`,
		};
	}
	if (text.trim() === '') return { problem: 'The body is empty; a JSON object was expected' };
	try {
		return boundedCopy(JSON.parse(text));
	} catch (error) {
		return { problem: `The body is not valid JSON: ${messageOf(error).slice(0, 200)}` };
	}
}

function declaredCharset(contentType: unknown): string | undefined {
	if (typeof contentType !== 'string') return undefined;
	for (const parameter of contentType.slice(0, 1024).split(';').slice(1)) {
		const [key, value] = parameter.split('=', 2);
		if (key.trim().toLowerCase() === 'charset' && value !== undefined)
			return value.trim().replace(/^"|"$/g, '').toLowerCase();
	}
	return undefined;
}

async function rawBodyOf(req: WebhookRequest, maxBytes: number): Promise<Buffer | undefined> {
	if (!req.rawBody && typeof req.readRawBody === 'function') await req.readRawBody();
	if (Buffer.isBuffer(req.rawBody)) return req.rawBody;
	if (!req.readable) return undefined;
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of req) {
		chunks.push(Buffer.from(chunk));
		size += chunks[chunks.length - 1].length;
		if (size > maxBytes) throw Object.assign(new Error('too large'), { status: 413 });
	}
	return Buffer.concat(chunks);
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
