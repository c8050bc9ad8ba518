/**
 * A file sent as a `data:<mime>;base64,<data>` param without ever holding it twice in memory:
 * - `base64`: already-encoded content (n8n's in-memory binary data is base64), written in
 *   slices, never decoded and re-encoded;
 * - `open`: a function returning a fresh stream of the raw bytes (n8n's filesystem binary
 *   mode, a download), base64-encoded on the fly. A function, not a stream, so a retry can read it again.
 */
export interface DataUriParam {
	readonly kind: 'dataUri';
	readonly mimeType: string;
	readonly base64?: string;
	readonly open?: () => Promise<AsyncIterable<Buffer | string>> | AsyncIterable<Buffer | string>;
	/** Size of the raw bytes, when known, so the request can carry a Content-Length. */
	readonly byteLength?: number;
	/** The most raw bytes there can be when the size is not known (a download's size cap): bounds the request's time allowance. */
	readonly maxByteLength?: number;
}

export type ParamValue = string | DataUriParam;

/**
 * True for an error thrown by a file's own stream (an `open` stream: e.g. a download that broke
 * off or went over its size cap), marked `sourceFailure: true` by whoever made the stream. The
 * request was cut off before the end of its body, so the server cannot have processed it: the
 * client passes such an error on as it is, not as a lost connection.
 */
export function isSourceFailure(error: unknown): boolean {
	return (
		typeof error === 'object' &&
		error !== null &&
		(error as { sourceFailure?: unknown }).sourceFailure === true
	);
}

function isDataUriParam(value: unknown): value is DataUriParam {
	return typeof value === 'object' && value !== null && (value as DataUriParam).kind === 'dataUri';
}

/**
 * Size of the pieces a file is written in. Pieces are strings, which the socket writes without
 * making a Buffer of them; 64 KiB strings stay in V8's young generation, which it collects
 * often, so a file of any size never piles up garbage (Buffers would count as external memory,
 * which V8 collects only after tens of MiB).
 */
const PIECE = 64 * 1024;
/** Raw bytes per base64 piece: a multiple of 3, so each piece encodes on its own. */
const BYTES_PER_PIECE = (PIECE / 4) * 3;

/** What undici is handed: one Buffer, or an async iterable of strings (undici writes both). */
type BodySource = Buffer | AsyncIterable<string>;

export interface RequestBody {
	/** The bytes to send; a function so every attempt gets a fresh iterator. */
	open(): BodySource;
	/** Known length in bytes, if every part's size is known. */
	length?: number;
	/** Length at most, when `length` is unknown but every part has a size or a bound. */
	maxLength?: number;
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
	let maxLength: number | undefined = 0;
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
		const bound =
			size ??
			(typeof part !== 'string' && part.maxByteLength !== undefined
				? Math.ceil(part.maxByteLength / 3) * 4
				: undefined);
		maxLength = maxLength === undefined || bound === undefined ? undefined : maxLength + bound;
	}
	return {
		open: () => streamParts(parts),
		length,
		maxLength: length === undefined ? maxLength : undefined,
	};
}

async function* streamParts(parts: Array<string | DataUriParam>): AsyncGenerator<string> {
	for (const part of parts) {
		if (typeof part === 'string') yield part;
		else if (part.base64 !== undefined) {
			// Base64 needs no JSON escaping: write the caller's string in slices as it is.
			for (let i = 0; i < part.base64.length; i += PIECE) yield part.base64.slice(i, i + PIECE);
		} else if (part.open) {
			yield* base64Stream(await part.open());
		} else {
			throw new Error('A data URI param needs base64 content or a stream');
		}
	}
}

/** Base64 of a byte stream, piece by piece; bytes left over after a multiple of 3 carry on. */
async function* base64Stream(source: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
	let carry: Buffer | undefined;
	for await (const chunk of source) {
		let bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
		if (carry) bytes = Buffer.concat([carry, bytes]);
		const whole = bytes.length - (bytes.length % 3);
		for (let i = 0; i < whole; i += BYTES_PER_PIECE)
			yield bytes.toString('base64', i, Math.min(i + BYTES_PER_PIECE, whole));
		// At most 2 bytes: copied, so the chunk itself can be freed.
		carry = whole < bytes.length ? Buffer.from(bytes.subarray(whole)) : undefined;
	}
	if (carry) yield carry.toString('base64');
}

/** A string's JSON encoding without its quotes (for text spliced into a JSON string). */
function jsonInner(value: string): string {
	return JSON.stringify(value).slice(1, -1);
}
