import { DATA_URI_HEAD, FALLBACK_MIME_TYPE, NOT_BASE64_CHAR, WHITESPACE } from '../shared/dataUri';
import { extensionFor } from '../shared/fileName';

/**
 * The media of an incoming message: the gateway puts the file in `body` as
 * `data:<mime>;base64,<data>` (service notes, "Incoming events"). This decodes it into bytes
 * for n8n's binary data, or says in a sentence why it cannot.
 */

export type DecodedMedia =
	{ data: Buffer; mimeType: string; fileName: string } | { problem: string };

/** A data URI's declared type: type/subtype. */
const MIME_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+$/;

/** Whether a payload `body` is meant as a data URI (valid or not), as opposed to plain text. */
export function looksLikeDataUri(body: string): boolean {
	return /^data:/i.test(body);
}

/**
 * Decodes a base64 data URI. Line breaks inside the base64 (MIME-wrapped encoders), missing `=`
 * padding and the URL-safe alphabet are accepted; anything else that is not base64 is refused.
 */
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

/** Longest file name kept, in characters (file systems allow 255 bytes; UTF-8 takes up to 4 per character). */
const FILE_NAME_MAX_LENGTH = 120;
/** Only this much of a given name is looked at: a name is never megabytes long on purpose. */
const FILE_NAME_READ_LENGTH = 1024;
/** C0 and C1 control characters, DEL. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;
/**
 * Invisible characters that change how a name reads: bidi marks, embeddings, overrides and
 * isolates (U+202E makes `invoice\u202Efdp.exe` show as `invoiceexe.pdf`), zero-width characters,
 * the byte-order mark.
 */
const FORMAT_CHARACTERS = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;
/** Characters Windows refuses in a name (":" would also open an NTFS alternate data stream). */
const WINDOWS_RESERVED = /[<>:"|?*]/g;
/** Names Windows reserves for devices, with or without an extension (`CON`, `nul.txt`, `COM1.log`). */
const WINDOWS_DEVICE =
	/^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3]|conin\$|conout\$)$/i;

/**
 * The file name for n8n's binary data and the item's `fileName`. It comes from a stranger's
 * phone and may end up in a "write to disk" node, an e-mail or a chat, so it is reduced to a
 * plain name: only its last path part, without control and invisible formatting characters,
 * without characters Windows refuses, not a Windows device name, no leading dots (hidden files)
 * or trailing dots and spaces, at most FILE_NAME_MAX_LENGTH characters with its extension kept.
 * Every step is one linear pass. Empty when nothing usable is left.
 */
export function cleanFileName(given: string): string {
	const lastPart = given.slice(-FILE_NAME_READ_LENGTH).split(/[\\/]/).pop() ?? '';
	let name = lastPart
		.normalize('NFC')
		.replace(CONTROL_CHARACTERS, '')
		.replace(FORMAT_CHARACTERS, '')
		.replace(WINDOWS_RESERVED, '_')
		.trim()
		.replace(/^\.+/, '');
	// Trailing dots and spaces (Windows drops them), cut by a loop: /[. ]+$/ would be quadratic.
	let end = name.length;
	while (end > 0 && (name[end - 1] === '.' || name[end - 1] === ' ')) end--;
	name = name.slice(0, end);
	const dot = name.indexOf('.');
	const stem = dot === -1 ? name : name.slice(0, dot);
	if (WINDOWS_DEVICE.test(stem.trim())) name = `_${name}`;
	if ([...name].length > FILE_NAME_MAX_LENGTH) {
		const characters = [...name];
		const lastDot = name.lastIndexOf('.');
		const extension = lastDot > 0 && name.length - lastDot <= 16 ? [...name.slice(lastDot)] : [];
		name =
			characters.slice(0, FILE_NAME_MAX_LENGTH - extension.length).join('') + extension.join('');
	}
	return name;
}

/** A clean file name, or `file.<extension of the mime type>` when the given one has nothing usable. */
export function safeFileName(given: string, mimeType: string): string {
	return cleanFileName(given) || `file.${extensionFor(mimeType)}`;
}
