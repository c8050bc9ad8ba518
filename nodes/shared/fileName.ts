import { extension as registryExtension } from 'mime-types';

/**
 * File names: the extension a file of a mime type gets when nothing names it.
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
	return KNOWN_EXTENSIONS[bare] ?? (registryExtension(bare) || 'bin');
}
