import type { IWebhookFunctions } from 'n8n-workflow';

import { boundedCopy } from './payload';

/**
 * The request body as the gateway sent it, read by the node itself so that a broken or oversized
 * body is answered here (400, JSON) instead of failing somewhere later.
 *
 * n8n reads every webhook request's bytes into `req.rawBody` (its `rawBodyReader` middleware
 * gives each request a `readRawBody()`), and for a typeVersion-1 node it calls it before the node
 * runs. A body sent as `application/json` is also parsed by n8n before the node runs; a malformed
 * one is answered by n8n itself (422) and never reaches this code. Bodies with another content
 * type (text/plain, none, ...) arrive here unparsed and are parsed here. Either way the node
 * reads the raw bytes itself, in the charset the request declares, and bounds what it passes on.
 */

export type JsonBody = { json: unknown } | { problem: string };

/**
 * What the node reads of n8n's request object: Node's `http.IncomingMessage` (headers, a readable
 * stream of the body) and what n8n adds to it (`rawBody`, `readRawBody`).
 */
type WebhookRequest = AsyncIterable<Buffer | string> & {
	headers?: Record<string, string | string[] | undefined>;
	readable?: boolean;
	on?: unknown;
	rawBody?: Buffer;
	readRawBody?: () => Promise<void>;
};

class BodyTooLarge extends Error {}

export async function readJsonBody(ctx: IWebhookFunctions, maxBytes: number): Promise<JsonBody> {
	const req = ctx.getRequestObject() as unknown as WebhookRequest;
	const tooLarge = `The body is larger than the limit of ${formatMb(maxBytes)} (option "Maximum Body Size")`;
	const declared = Number(req.headers?.['content-length']);
	if (Number.isFinite(declared) && declared > maxBytes) return { problem: tooLarge };

	let raw: Buffer | undefined;
	try {
		raw = await rawBodyOf(req, maxBytes);
	} catch (error) {
		if (error instanceof BodyTooLarge || isTooLargeError(error)) return { problem: tooLarge };
		return { problem: `The body could not be read: ${messageOf(error)}` };
	}
	// A host that parsed the body and kept no bytes: use what it parsed.
	if (raw === undefined) {
		const bounded = boundedCopy(ctx.getBodyData());
		return 'problem' in bounded ? bounded : { json: bounded.value };
	}
	if (raw.length > maxBytes) return { problem: tooLarge };

	const decoded = decodeBody(raw, declaredCharset(req.headers?.['content-type']));
	if ('problem' in decoded) return decoded;
	const text = decoded.text.replace(/^\uFEFF/, '');
	if (text.trim() === '') return { problem: 'The body is empty; a JSON object was expected' };
	let parsed: unknown;
	try {
		parsed = JSON.parse(text) as unknown;
	} catch (error) {
		return { problem: `The body is not valid JSON: ${messageOf(error).slice(0, 200)}` };
	}
	const bounded = boundedCopy(parsed);
	return 'problem' in bounded ? bounded : { json: bounded.value };
}

/** The `charset` parameter of a Content-Type header, lower case; undefined when none is declared. */
export function declaredCharset(contentType: unknown): string | undefined {
	if (typeof contentType !== 'string') return undefined;
	for (const parameter of contentType.slice(0, 1024).split(';').slice(1)) {
		const [key, value] = parameter.split('=', 2);
		if (key.trim().toLowerCase() === 'charset' && value !== undefined)
			return value.trim().replace(/^"|"$/g, '').toLowerCase();
	}
	return undefined;
}

/**
 * The body's text in the charset it declares (UTF-8 when it declares none): a latin1 body's
 * `José` must not become `Jos\uFFFD`. Charset names are the WHATWG Encoding Standard's
 * (`utf-8`, `iso-8859-1`/`latin1`, `windows-1252`, `utf-16le`, ...).
 */
function decodeBody(
	raw: Buffer,
	charset: string | undefined,
): { text: string } | { problem: string } {
	let decoder: InstanceType<typeof TextDecoder>;
	try {
		decoder = new TextDecoder(charset ?? 'utf-8');
	} catch {
		return {
			problem: `The body declares the charset "${(charset ?? '').slice(0, 40)}", which cannot be read; send UTF-8`,
		};
	}
	return { text: decoder.decode(raw) };
}

async function rawBodyOf(req: WebhookRequest, maxBytes: number): Promise<Buffer | undefined> {
	if (Buffer.isBuffer(req.rawBody)) return req.rawBody;
	if (typeof req.readRawBody === 'function') {
		await req.readRawBody();
		if (Buffer.isBuffer(req.rawBody)) return req.rawBody;
	}
	if (typeof req.on !== 'function' || !req.readable) return undefined;
	return await readStream(req, maxBytes);
}

/** Reads a request nobody has read yet, stopping as soon as it passes the limit. */
async function readStream(req: WebhookRequest, maxBytes: number): Promise<Buffer> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of req) {
		const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
		size += buffer.length;
		if (size > maxBytes) throw new BodyTooLarge();
		chunks.push(buffer);
	}
	return Buffer.concat(chunks);
}

/** raw-body (used by n8n's `readRawBody`) says "too large" with status 413. */
function isTooLargeError(error: unknown): boolean {
	const { status, type } = (error ?? {}) as { status?: unknown; type?: unknown };
	return status === 413 || type === 'entity.too.large';
}

function messageOf(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

function formatMb(bytes: number): string {
	const mb = bytes / (1024 * 1024);
	return `${Number.isInteger(mb) ? mb : mb.toFixed(2)} MB`;
}
