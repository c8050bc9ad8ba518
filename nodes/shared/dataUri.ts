import { cleanFileName, extensionFor, mimeTypes } from './fileName';

/**
 * Data URIs and base64 text: the files Send File is given as text (Messaging) and the media the
 * Messaging Trigger receives are read with the same patterns.
 *
 * Files given as text: a `data:<mime>;base64,<data>` URI or bare base64. Large inputs (tens of
 * MB) are checked in one linear pass and sliced, never decoded: the transport writes the base64
 * as it is into the request body.
 */

export const FALLBACK_MIME_TYPE = 'application/octet-stream';
/** Longest mime type accepted (RFC 6838 names are at most 127 + 1 + 127 characters, plus parameters). */
const MAX_MIME_TYPE = 512;

// Only the head is matched against a pattern, so a 67 MB text is never scanned by it.
export const DATA_URI_HEAD = /^data:([^;,]*)((?:;[^;,]*)*),/i;
// Searching for the first character outside the alphabet is one linear pass that never copies.
export const NOT_BASE64_CHAR = /[^A-Za-z0-9+/]/;
export const WHITESPACE = /\s/;
/** Slice of in-memory binary data checked at each end (see `looksLikeCleanBase64`). */
const EDGE = 64 * 1024;

export type Base64Text =
	{ mimeType?: string; fileName?: string; base64: string } | { problem: string };

/**
 * Reads a data URI or bare base64 text. Line breaks and spaces (as in MIME-wrapped base64) and
 * the URL-safe alphabet are accepted; anything else that is not base64 is refused with a reason.
 */
export function parseBase64Text(text: string): Base64Text {
	let mimeType: string | undefined;
	let fileName: string | undefined;
	let body = text;
	const head = DATA_URI_HEAD.exec(text.slice(0, 512));
	if (head) {
		const parameters = head[2].split(';').map((p) => p.trim());
		if (!parameters.some((p) => p.toLowerCase() === 'base64')) {
			return { problem: 'is a data URI without ";base64": only base64 data URIs can be sent' };
		}
		mimeType = head[1].trim().toLowerCase() || undefined;
		if (mimeType !== undefined && !isMimeType(mimeType)) {
			return {
				problem: `is a data URI whose type "${head[1].trim()}" is not a mime type (type/subtype, e.g. application/pdf)`,
			};
		}
		// `data:application/pdf;name=invoice.pdf;base64,…` (RFC 2397 allows parameters; browsers and
		// some exporters put the file name there, percent-encoded).
		const named = parameters.find((p) => /^name=/i.test(p))?.slice(5);
		if (named) fileName = decodeName(named);
		body = text.slice(head[0].length);
	} else if (/^data:/i.test(text)) {
		return {
			problem:
				'starts with "data:" but is not a data URI of the form data:<mime type>;base64,<data>',
		};
	}

	if (WHITESPACE.test(body)) body = body.replace(/\s+/g, '');
	// The URL-safe alphabet (RFC 4648 §5) differs in two characters; a mix of both is no base64.
	if (/[-_]/.test(body) && !/[+/]/.test(body)) body = body.replace(/-/g, '+').replace(/_/g, '/');
	if (body.length === 0) return { problem: 'holds an empty file' };
	const complete = padded(body);
	const problem =
		complete === undefined
			? 'is not valid base64 (its length is not possible for base64)'
			: base64Problem(complete);
	if (problem || complete === undefined) return { problem: problem ?? 'is not valid base64' };
	return { mimeType, fileName, base64: complete };
}

function decodeName(value: string): string | undefined {
	let name = value.replace(/^"(.*)"$/, '$1');
	try {
		name = decodeURIComponent(name);
	} catch {
		// Not percent-encoded after all: keep it as written.
	}
	return name.trim() || undefined;
}

/** Why a padded base64 string is not base64, or undefined when it is. */
function base64Problem(base64: string): string | undefined {
	const at = base64.search(NOT_BASE64_CHAR);
	if (at === -1) return undefined;
	const tail = base64.slice(at);
	if ((tail === '=' || tail === '==') && base64.length % 4 === 0) return undefined;
	const char = base64[at];
	// No position: it would count from the text after spaces and line breaks were taken out.
	return char === '='
		? 'is not valid base64 ("=" padding before the end)'
		: `is not valid base64 (it holds the character ${JSON.stringify(char)})`;
}

/** Base64 whose `=` padding was dropped (some encoders do) padded again; undefined if no padding can fix it. */
function padded(base64: string): string | undefined {
	const rest = base64.length % 4;
	if (rest === 1) return undefined;
	return rest === 0 ? base64 : base64 + '='.repeat(4 - rest);
}

/**
 * A cheap check of base64 that n8n produced itself (its in-memory binary data comes from
 * `Buffer.toString('base64')`): the length and both ends. A full scan costs about a second per
 * 50 MB, and a mistake could only come from a hand-built binary, which shows at its start
 * (a data URI prefix, text) or its end (whitespace, missing padding).
 */
export function looksLikeCleanBase64(base64: string): boolean {
	if (base64.length % 4 !== 0) return false;
	if (base64.length <= 2 * EDGE) return base64Problem(base64) === undefined;
	return (
		base64Problem(base64.slice(0, EDGE)) === undefined &&
		base64Problem(base64.slice(-EDGE)) === undefined
	);
}

/** Number of bytes a clean, padded base64 string decodes to. */
export function base64ByteLength(base64: string): number {
	const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
	return (base64.length / 4) * 3 - padding;
}

/**
 * The mime type and file name to send: what the user gave, else what the file says about
 * itself, else each derived from the other (`report.pdf` → `application/pdf` and back).
 * A file that calls itself `application/octet-stream` says nothing about its type (n8n's HTTP
 * Request node gives that to most downloads): its name decides then.
 */
export function fileIdentity(
	given: { fileName?: string; mimeType?: string },
	known: { fileName?: string; mimeType?: string },
): {
	fileName: string;
	mimeType: string;
} {
	// One cleaner for every name, whoever gave it: a mapped name can come from a stranger too.
	const fileNameGiven = cleanName(given.fileName) ?? cleanName(known.fileName);
	const knownType = clean(known.mimeType);
	const specificKnownType = knownType && !isGenericMimeType(knownType) ? knownType : undefined;
	const mimeType =
		clean(given.mimeType) ??
		specificKnownType ??
		(fileNameGiven ? mimeTypes().lookup(fileNameGiven) || undefined : undefined) ??
		knownType ??
		FALLBACK_MIME_TYPE;
	const fileName = fileNameGiven ?? `file.${extensionFor(mimeType)}`;
	// Parameters such as `; charset=utf-8` are dropped: the data URI carries only the type.
	return { fileName, mimeType: mimeType.split(';')[0].trim().toLowerCase() };
}

/** Types that only say "some bytes". */
function isGenericMimeType(mimeType: string): boolean {
	const bare = mimeType.split(';')[0].trim().toLowerCase();
	return (
		bare === FALLBACK_MIME_TYPE || bare === 'binary/octet-stream' || bare === 'application/unknown'
	);
}

function cleanName(value: string | undefined): string | undefined {
	return value === undefined ? undefined : cleanFileName(value) || undefined;
}

function clean(value: string | undefined): string | undefined {
	const trimmed = value?.trim();
	return trimmed ? trimmed : undefined;
}

/** A mime type as the data URI needs it: `type/subtype`, optionally with parameters. */
export function isMimeType(value: string): boolean {
	// Each parameter starts at its ";" (spaces before it end the previous value): one way to
	// match, so no backtracking on long runs of spaces.
	return (
		value.length <= MAX_MIME_TYPE &&
		/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+\s*(;\s*[\w.+-]+=[^;,]*)*$/.test(value)
	);
}
