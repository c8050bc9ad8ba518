import type { IWebhookFunctions } from 'n8n-workflow';

import { boundedCopy } from './payload';

// Read by the node itself, so that a broken or oversized body is answered here (400, JSON). n8n
// parses an application/json body first (a malformed one it answers 422 itself); other types arrive
// unparsed. Either way the raw bytes are read in the declared charset, and bounded.

export type JsonBody = { json: unknown } | { problem: string };

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

export function declaredCharset(contentType: unknown): string | undefined {
	if (typeof contentType !== 'string') return undefined;
	for (const parameter of contentType.slice(0, 1024).split(';').slice(1)) {
		const [key, value] = parameter.split('=', 2);
		if (key.trim().toLowerCase() === 'charset' && value !== undefined)
			return value.trim().replace(/^"|"$/g, '').toLowerCase();
	}
	return undefined;
}

/** A latin1 body's `José` must not become `Jos\uFFFD`. */
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
