import { onFirstUse } from './onFirstUse';

/** The MIME tables (mime-types): loaded by the first lookup, not when n8n loads the node. */
export const mimeTypes = onFirstUse(
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use (onFirstUse.ts)
	() => require('mime-types') as typeof import('mime-types'),
);

/**
 * File names: one cleaner for every name a file gets (a name typed or mapped by the user, a data
 * URI's name, a server's Content-Disposition or URL path, an incoming message's file name), and
 * the extension a file of a mime type gets when nothing names it.
 */

/**
 * Where mime-types' first extension is not the one people know (`audio/mpeg` → `mpga`), or where
 * it knows none for a type phones send. Found by listing every type of mime-db next to its first
 * extension and next to Python's `mimetypes.guess_extension`, and keeping the types a chat or a
 * mailbox meets; each extension here reads back to its type (`test/nodes/shared/fileName.test.ts`).
 */
const KNOWN_EXTENSIONS: Readonly<Record<string, string>> = {
	'audio/mpeg': 'mp3',
	'audio/aac': 'aac',
	'audio/ogg': 'ogg',
	'audio/opus': 'opus',
	'audio/flac': 'flac',
	'video/quicktime': 'mov',
	'application/postscript': 'ps',
	'text/vcard': 'vcf',
};

/** The extension (without the dot) a file of this mime type is known by; `bin` when none is known. */
export function extensionFor(mimeType: string): string {
	const bare = mimeType.split(';')[0].trim().toLowerCase();
	return KNOWN_EXTENSIONS[bare] ?? (mimeTypes().extension(bare) || 'bin');
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
 * A file name as it may be shown, stored or sent on. It may come from a stranger (a phone, a file
 * server) and end up in a "write to disk" node, an e-mail or a WhatsApp document, so it is reduced
 * to a plain name: only its last path part, without control and invisible formatting characters,
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
