/**
 * The names files get: the extension a mime type is known by when nothing names the file.
 */
import { extensions as registryExtensions, lookup } from 'mime-types';

import { extensionFor } from '../../../nodes/shared/fileName';

describe('extensionFor: the extension people know', () => {
	// What a chat or a mailbox meets (WhatsApp's media types, office files, pictures, voice notes).
	it.each([
		['audio/mpeg', 'mp3'],
		['audio/mp3', 'mp3'],
		['audio/aac', 'aac'],
		['audio/ogg', 'ogg'],
		['audio/ogg; codecs=opus', 'ogg'],
		['audio/opus', 'opus'],
		['audio/mp4', 'm4a'],
		['audio/amr', 'amr'],
		['audio/wav', 'wav'],
		['audio/flac', 'flac'],
		['video/mp4', 'mp4'],
		['video/3gpp', '3gp'],
		['video/quicktime', 'mov'],
		['video/webm', 'webm'],
		['image/jpeg', 'jpg'],
		['image/png', 'png'],
		['image/webp', 'webp'],
		['image/gif', 'gif'],
		['image/heic', 'heic'],
		['application/pdf', 'pdf'],
		['application/msword', 'doc'],
		['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'docx'],
		['application/vnd.ms-excel', 'xls'],
		['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'xlsx'],
		['application/vnd.openxmlformats-officedocument.presentationml.presentation', 'pptx'],
		['application/zip', 'zip'],
		['application/postscript', 'ps'],
		['text/plain', 'txt'],
		['text/csv', 'csv'],
		['text/vcard', 'vcf'],
		['text/x-vcard', 'vcf'],
		['AUDIO/MPEG', 'mp3'],
		['application/x-unknown-thing', 'bin'],
	])('%s → .%s', (mimeType, extension) => {
		expect(extensionFor(mimeType)).toBe(extension);
	});

	it('every extension chosen over the registry reads back to its type (a name and a type never disagree)', () => {
		for (const mimeType of [
			'audio/mpeg',
			'audio/aac',
			'audio/ogg',
			'video/quicktime',
			'application/postscript',
		]) {
			const extension = extensionFor(mimeType);
			expect(registryExtensions[mimeType]).toContain(extension);
			expect(lookup(`file.${extension}`)).toBe(mimeType);
		}
		expect(lookup(`file.${extensionFor('text/vcard')}`)).toBe('text/x-vcard');
		expect(lookup(`file.${extensionFor('audio/opus')}`)).toBe('audio/ogg');
	});
});
