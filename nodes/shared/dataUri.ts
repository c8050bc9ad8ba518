import { cleanFileName, decoded, extensionFor, mimeTypes } from './fileName';

// Large inputs are checked in one linear pass and sliced, never decoded: the transport writes the
// base64 into the request body as it is.

export const FALLBACK_MIME_TYPE = 'application/octet-stream';
/** RFC 6838: type and subtype of at most 127 characters each, plus parameters. */
const MAX_MIME_TYPE = 512;

// Only the head is matched, so a large text is never scanned by the pattern.
const DATA_URI_HEAD = /^data:([^;,]*)((?:;[^;,]*)*),/i;
const NOT_BASE64_CHAR = /[^A-Za-z0-9+/]/;
const WHITESPACE = /\s/;
const EDGE = 64 * 1024;

export type Base64Text =
	{ mimeType?: string; fileName?: string; base64: string } | { problem: string };

export function parseBase64Text(text: string): Base64Text {
	let mimeType: string | undefined;
	let fileName: string | undefined;
	let body = text;
	const head = DATA_URI_HEAD.exec(text.slice(0, 512));
	if (head) {
		const parameters = head[2].split(';').map((p) => p.trim());
		if (!parameters.some((p) => p.toLowerCase() === 'base64'))
			return { problem: 'is a data URI without ";base64": only base64 data URIs are read' };
		mimeType = head[1].trim().toLowerCase() || undefined;
		if (mimeType !== undefined && !isMimeType(mimeType))
			return {
				problem: `is a data URI whose type "${head[1].trim()}" is not a mime type (type/subtype, e.g. application/pdf)`,
			};
		// RFC 2397 allows parameters; some exporters put a percent-encoded file name there.
		const named = parameters.find((p) => /^name=/i.test(p))?.slice(5);
		if (named) fileName = decoded(named.replace(/^"(.*)"$/, '$1')).trim() || undefined;
		body = text.slice(head[0].length);
	} else if (/^data:/i.test(text)) {
		return {
			problem:
				'starts with "data:" but is not a data URI of the form data:<mime type>;base64,<data>',
		};
	}

	if (WHITESPACE.test(body)) body = body.replace(/\s+/g, '');
	// The URL-safe alphabet (RFC 4648 §5); a mix of both alphabets is no base64.
	if (/[-_]/.test(body) && !/[+/]/.test(body)) body = body.replace(/-/g, '+').replace(/_/g, '/');
	if (body.length === 0) return { problem: 'holds an empty file' };
	const complete = padded(body);
	if (complete === undefined)
		return { problem: 'is not valid base64 (its length is not possible for base64)' };
	const problem = base64Problem(complete);
	return problem ? { problem } : { mimeType, fileName, base64: complete };
}

function base64Problem(base64: string): string | undefined {
	const at = base64.search(NOT_BASE64_CHAR);
	if (at === -1) return undefined;
	const tail = base64.slice(at);
	if ((tail === '=' || tail === '==') && base64.length % 4 === 0) return undefined;
	const char = base64[at];
	// No position: it would count from the text with whitespace taken out.
	return char === '='
		? 'is not valid base64 ("=" padding before the end)'
		: `is not valid base64 (it holds the character ${JSON.stringify(char)})`;
}

function padded(base64: string): string | undefined {
	const rest = base64.length % 4;
	if (rest === 1) return undefined;
	return rest === 0 ? base64 : base64 + '='.repeat(4 - rest);
}

// Only the length and both ends: n8n's binary comes from `Buffer.toString('base64')`, a full scan
// of a large file is slow, and a hand-built binary shows its mistake at its start or its end.
export function looksLikeCleanBase64(base64: string): boolean {
	if (base64.length % 4 !== 0) return false;
	if (base64.length <= 2 * EDGE) return base64Problem(base64) === undefined;
	return (
		base64Problem(base64.slice(0, EDGE)) === undefined &&
		base64Problem(base64.slice(-EDGE)) === undefined
	);
}

export function base64ByteLength(base64: string): number {
	const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
	return (base64.length / 4) * 3 - padding;
}

// The user's, else the file's own, else each derived from the other. A file that calls itself
// application/octet-stream (most HTTP Request downloads) says nothing: its name decides then.
type FileIdentity = { fileName?: string; mimeType?: string };

export function fileIdentity(given: FileIdentity, known: FileIdentity): Required<FileIdentity> {
	// A mapped name can come from a stranger too.
	const fileNameGiven =
		cleanFileName(given.fileName ?? '') || cleanFileName(known.fileName ?? '') || undefined;
	const knownType = known.mimeType?.trim() || undefined;
	const specificKnownType = knownType && !GENERIC_MIME_TYPE.test(knownType) ? knownType : undefined;
	const mimeType =
		given.mimeType?.trim() ||
		specificKnownType ||
		(fileNameGiven && mimeTypes().lookup(fileNameGiven)) ||
		knownType ||
		FALLBACK_MIME_TYPE;
	const fileName = fileNameGiven ?? `file.${extensionFor(mimeType)}`;
	// The data URI carries only the type.
	return { fileName, mimeType: mimeType.split(';')[0].trim().toLowerCase() };
}

const GENERIC_MIME_TYPE =
	/^(application\/octet-stream|binary\/octet-stream|application\/unknown)\s*(;|$)/i;

export function isMimeType(value: string): boolean {
	if (value.length > MAX_MIME_TYPE) return false;
	// Split at ";" first: a pattern looping over parameters grows V8's backtrack stack per parameter.
	const [type, ...parameters] = value.split(';');
	return (
		/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+\s*$/.test(type) &&
		parameters.every((parameter) => /^\s*[\w.+-]+=[^,]*$/.test(parameter))
	);
}
