import { DATA_URI_HEAD, FALLBACK_MIME_TYPE, NOT_BASE64_CHAR, WHITESPACE } from '../shared/dataUri';
import { cleanFileName, extensionFor } from '../shared/fileName';

// The gateway puts an incoming file in `body` as a base64 data URI (service notes).

export type DecodedMedia =
	{ data: Buffer; mimeType: string; fileName: string } | { problem: string };

const MIME_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+$/;

export function looksLikeDataUri(body: string): boolean {
	return /^data:/i.test(body);
}

export function decodeDataUri(body: string, fileNameGiven: string): DecodedMedia {
	// Only the head is matched against a pattern, so a file of many MB is never scanned by it.
	const head = DATA_URI_HEAD.exec(body.slice(0, 512));
	if (!head)
		return {
			problem: 'the media body is not a data URI of the form data:<mime type>;base64,<data>',
		};
	const parameters = head[2].split(';').map((parameter) => parameter.trim().toLowerCase());
	if (!parameters.includes('base64'))
		return { problem: 'the media body is a data URI without ";base64"' };
	const declared = head[1].trim().toLowerCase();
	if (declared && !MIME_TYPE.test(declared))
		return { problem: `the media body has an invalid mime type "${declared.slice(0, 100)}"` };
	const mimeType = declared || FALLBACK_MIME_TYPE;

	let base64 = body.slice(head[0].length);
	if (WHITESPACE.test(base64)) base64 = base64.replace(/\s+/g, '');
	// The URL-safe alphabet (RFC 4648 §5) differs in two characters; a mix of both is no base64.
	if (/[-_]/.test(base64) && !/[+/]/.test(base64))
		base64 = base64.replace(/-/g, '+').replace(/_/g, '/');
	const unpadded = base64.replace(/={1,2}$/, '');
	if (unpadded.length === 0) return { problem: 'the media body holds an empty file' };
	const at = unpadded.search(NOT_BASE64_CHAR);
	if (at !== -1) {
		return {
			problem: `the media body is not valid base64 (character ${JSON.stringify(unpadded[at])} at position ${at + 1})`,
		};
	}
	// Missing or partial `=` padding is harmless; a length of 4n+1 characters is no base64 at all.
	if (unpadded.length % 4 === 1) {
		return {
			problem: 'the media body is not valid base64 (its length is not possible for base64)',
		};
	}
	return {
		data: Buffer.from(unpadded, 'base64'),
		mimeType,
		fileName: safeFileName(fileNameGiven, mimeType),
	};
}

export function safeFileName(given: string, mimeType: string): string {
	return cleanFileName(given) || `file.${extensionFor(mimeType)}`;
}
