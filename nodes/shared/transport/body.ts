import { Readable } from 'stream';

/**
 * A file sent as a `data:<mime>;base64,<data>` param without ever holding it twice in memory:
 * - `base64`: already-encoded content (n8n's in-memory binary data is base64), written in
 *   slices, never decoded and re-encoded;
 * - `open`: a function returning a fresh stream of the raw bytes (n8n's filesystem binary
 *   mode), base64-encoded on the fly. A function, not a stream, so a retry can read it again.
 */
export interface DataUriParam {
	readonly kind: 'dataUri';
	readonly mimeType: string;
	readonly base64?: string;
	readonly open?: () => Promise<Readable> | Readable;
	/** Size of the raw bytes, when known, so the request can carry a Content-Length. */
	readonly byteLength?: number;
}

export type ParamValue = string | DataUriParam;

export function isDataUriParam(value: unknown): value is DataUriParam {
	return typeof value === 'object' && value !== null && (value as DataUriParam).kind === 'dataUri';
}

/** Size of the JSON-encoded slices are written in: small enough to never spike memory. */
const SLICE = 256 * 1024;

export interface RequestBody {
	/** Bytes to send; a function so every attempt gets a fresh iterator. */
	open(): Readable | Buffer;
	/** Known length in bytes, if every part's size is known. */
	length?: number;
}

/** The `{"params": {...}}` body, as one Buffer when small, as a stream when it holds a file. */
export function buildBody(params: Record<string, ParamValue>): RequestBody {
	const entries = Object.entries(params);
	if (!entries.some(([, v]) => isDataUriParam(v))) {
		const buffer = Buffer.from(JSON.stringify({ params }));
		return { open: () => buffer, length: buffer.length };
	}

	// Each part is a fixed string or a data URI; strings are tiny next to the file.
	const parts: Array<string | DataUriParam> = [];
	let text = '{"params":{';
	entries.forEach(([key, value], index) => {
		text += `${index ? ',' : ''}${JSON.stringify(key)}:`;
		if (isDataUriParam(value)) {
			parts.push(`${text}"data:${jsonInner(value.mimeType)};base64,`, value);
			text = '"';
		} else {
			text += JSON.stringify(value);
		}
	});
	parts.push(`${text}}}`);

	let length: number | undefined = 0;
	for (const part of parts) {
		const size =
			typeof part === 'string'
				? Buffer.byteLength(part)
				: part.base64 !== undefined
					? part.base64.length
					: part.byteLength !== undefined
						? Math.ceil(part.byteLength / 3) * 4
						: undefined;
		length = length === undefined || size === undefined ? undefined : length + size;
	}
	return { open: () => Readable.from(streamParts(parts), { objectMode: false }), length };
}

async function* streamParts(parts: Array<string | DataUriParam>): AsyncGenerator<Buffer> {
	for (const part of parts) {
		if (typeof part === 'string') yield Buffer.from(part);
		else if (part.base64 !== undefined) {
			// Base64 needs no JSON escaping: write the caller's string in slices as it is.
			for (let i = 0; i < part.base64.length; i += SLICE) yield Buffer.from(part.base64.slice(i, i + SLICE), 'latin1');
		} else if (part.open) {
			yield* base64Stream(await part.open());
		} else {
			throw new Error('A data URI param needs base64 content or a stream');
		}
	}
}

/** Base64 of a byte stream, chunk by chunk (each chunk cut at a multiple of 3 bytes). */
async function* base64Stream(source: AsyncIterable<Buffer | string>): AsyncGenerator<Buffer> {
	let carry = Buffer.alloc(0);
	for await (const chunk of source) {
		const bytes = carry.length ? Buffer.concat([carry, Buffer.from(chunk)]) : Buffer.from(chunk);
		const whole = bytes.length - (bytes.length % 3);
		if (whole) yield Buffer.from(bytes.subarray(0, whole).toString('base64'), 'latin1');
		carry = Buffer.from(bytes.subarray(whole));
	}
	if (carry.length) yield Buffer.from(carry.toString('base64'), 'latin1');
}

/** A string's JSON encoding without its quotes (for text spliced into a JSON string). */
function jsonInner(value: string): string {
	return JSON.stringify(value).slice(1, -1);
}
