export const mimeTypes = () =>
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use: start-up (CONTRIBUTING)
	require('mime-types') as typeof import('mime-types');

// Where mime-types' first extension is not the one people know (`audio/mpeg` → `mpga`), or it
// knows none for a type phones send; each reads back to its type (fileName.test.ts).
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

export function extensionFor(mimeType: string): string {
	const bare = mimeType.split(';')[0].trim().toLowerCase();
	return KNOWN_EXTENSIONS[bare] ?? (mimeTypes().extension(bare) || 'bin');
}

/** File systems allow 255 bytes; UTF-8 takes up to 4 per character. */
const FILE_NAME_MAX_LENGTH = 120;
const FILE_NAME_READ_LENGTH = 1024;
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;
/** They change how a name reads: U+202E shows `invoice\u202Efdp.exe` as `invoiceexe.pdf`. */
const FORMAT_CHARACTERS = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;
/** ":" would also open an NTFS alternate data stream. */
const WINDOWS_RESERVED = /[<>:"|?*]/g;
const WINDOWS_DEVICE =
	/^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3]|conin\$|conout\$)$/i;

/** A stranger's name may end up on disk, in an e-mail or a WhatsApp document. */
export function cleanFileName(given: string): string {
	const lastPart = given.slice(-FILE_NAME_READ_LENGTH).split(/[\\/]/).pop() ?? '';
	let name = lastPart
		.normalize('NFC')
		.replace(CONTROL_CHARACTERS, '')
		.replace(FORMAT_CHARACTERS, '')
		.replace(WINDOWS_RESERVED, '_')
		.trim()
		.replace(/^\.+/, '');
	// A loop: /[. ]+$/ would be quadratic. Windows drops trailing dots and spaces.
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

/** Percent-decoded, or as it is when it is not valid percent-encoding. */
export function decoded(text: string): string {
	try {
		return decodeURIComponent(text);
	} catch {
		return text;
	}
}
