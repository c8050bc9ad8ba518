// A file as a data URI param, never held twice in memory: `base64` is written in slices as it is,
// `open` gives raw bytes encoded on the fly (a function, so that a retry can read them again).
export interface DataUriParam {
	readonly kind: 'dataUri';
	readonly mimeType: string;
	readonly base64?: string;
	readonly open?: () => Promise<AsyncIterable<Buffer | string>> | AsyncIterable<Buffer | string>;
	readonly byteLength?: number;
	readonly maxByteLength?: number;
}

export type ParamValue = string | DataUriParam;

// An error of a file's own stream: the body was cut off before its end, so the server cannot have
// processed the request. Passed on as it is, not as a lost connection.
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

// Strings, which the socket writes without making a Buffer, small enough for V8's young generation:
// Buffers count as external memory, which V8 collects late, so a large file would pile up garbage.
const PIECE = 64 * 1024;
/** A multiple of 3, so each piece encodes on its own. */
const BYTES_PER_PIECE = (PIECE / 4) * 3;

type BodySource = Buffer | AsyncIterable<string>;

export interface RequestBody {
	/** A function, so every attempt gets a fresh iterator. */
	open(): BodySource;
	length?: number;
	maxLength?: number;
}

export function buildBody(params: Record<string, ParamValue>): RequestBody {
	const entries = Object.entries(params);
	if (!entries.some(([, v]) => isDataUriParam(v))) {
		const buffer = Buffer.from(JSON.stringify({ params }));
		return { open: () => buffer, length: buffer.length };
	}

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
			// Base64 needs no JSON escaping.
			for (let i = 0; i < part.base64.length; i += PIECE) yield part.base64.slice(i, i + PIECE);
		} else if (part.open) {
			yield* base64Stream(await part.open());
		} else {
			throw new Error('A data URI param needs base64 content or a stream');
		}
	}
}

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

function jsonInner(value: string): string {
	return JSON.stringify(value).slice(1, -1);
}
