/**
 * The Messaging Trigger's pure helpers: reading payloads and data URIs, the registration URL,
 * the Check Account answer and the secret comparison. (Requests end to end are in
 * messagingTrigger.webhook.test.ts.)
 */
import { decodeDataUri, safeFileName } from '../../../nodes/MessagingTrigger/media';
import { readTriggerSettings } from '../../../nodes/MessagingTrigger/parameters';
import {
	contactNumber,
	eventFields,
	messageCategory,
	rawPayload,
	readEvent,
} from '../../../nodes/MessagingTrigger/payload';
import {
	registrationUrl,
	sameUrl,
	webhookShownBy,
} from '../../../nodes/MessagingTrigger/registration';
import { secretsMatch } from '../../../nodes/MessagingTrigger/verification';

const settingsFrom = (parameters: Record<string, unknown>) =>
	readTriggerSettings({
		getNodeParameter: (name: string, fallback?: unknown) =>
			name in parameters ? parameters[name] : fallback,
	});

describe('decodeDataUri', () => {
	const hello = Buffer.from('hello world');

	it('decodes base64 with its mime type and the given file name', () => {
		expect(decodeDataUri(`data:text/plain;base64,${hello.toString('base64')}`, 'note.txt')).toEqual(
			{
				data: hello,
				mimeType: 'text/plain',
				fileName: 'note.txt',
			},
		);
	});

	it('accepts line breaks, missing padding, the URL-safe alphabet and extra parameters', () => {
		const bytes = Buffer.from([0xfb, 0xff, 0xfe, 0x01, 0x02]);
		const urlSafe = bytes.toString('base64url');
		expect(decodeDataUri(`data:application/octet-stream;base64,${urlSafe}`, 'b.bin')).toMatchObject(
			{ data: bytes },
		);
		const wrapped = Buffer.from('x'.repeat(100))
			.toString('base64')
			.replace(/(.{76})/g, '$1\r\n');
		expect(decodeDataUri(`data:text/plain;charset=utf-8;base64,${wrapped}`, '')).toMatchObject({
			data: Buffer.from('x'.repeat(100)),
			mimeType: 'text/plain',
		});
	});

	it('names the file after its type when the payload gives no name', () => {
		expect(decodeDataUri(`data:image/jpeg;base64,${hello.toString('base64')}`, '')).toMatchObject({
			fileName: 'file.jpg',
		});
		// A voice note and an mp3 get the extensions people know, not mime-types' first (.oga, .mpga).
		expect(decodeDataUri(`data:audio/ogg;base64,${hello.toString('base64')}`, '')).toMatchObject({
			fileName: 'file.ogg',
		});
		expect(decodeDataUri(`data:audio/mpeg;base64,${hello.toString('base64')}`, '')).toMatchObject({
			fileName: 'file.mp3',
		});
		expect(decodeDataUri(`data:;base64,${hello.toString('base64')}`, '')).toMatchObject({
			mimeType: 'application/octet-stream',
			fileName: 'file.bin',
		});
	});

	it.each([
		['data:image/png,abc', /without ";base64"/],
		['data:image/png;base64,', /empty file/],
		['data:image/png;base64,abc*def', /not valid base64 \(character "\*" at position 4\)/],
		['data:image/png;base64,abcde', /length is not possible/],
		['data:not a type;base64,aGVsbG8=', /invalid mime type/],
		['image/png;base64,aGVsbG8=', /not a data URI/],
	])('refuses %s', (body, problem) => {
		const result = decodeDataUri(body, 'x');
		expect(result).toEqual({ problem: expect.stringMatching(problem) });
	});

	it('keeps file names inside their folder', () => {
		expect(safeFileName('C:\\Users\\me\\report.pdf', 'application/pdf')).toBe('report.pdf');
		expect(safeFileName('..', 'application/pdf')).toBe('file.pdf');
		expect(safeFileName('a\u0000b.txt', 'text/plain')).toBe('ab.txt');
	});
});

describe('payload reading', () => {
	it('takes "params" of a JSON-RPC body, else the flat object', () => {
		expect(eventFields({ jsonrpc: '2.0', params: { message: 'a' } })).toEqual({
			fields: { message: 'a' },
		});
		expect(eventFields({ message: 'b', params: 'not an object' })).toEqual({
			fields: { message: 'b', params: 'not an object' },
		});
		expect(eventFields([{ message: 'c' }])).toEqual({ problem: 'The body must be a JSON object' });
		expect(eventFields('text')).toEqual({ problem: 'The body must be a JSON object' });
	});

	it('normalises numbers and keeps other ids', () => {
		expect(contactNumber('6281288776713@c.us')).toBe('6281288776713');
		expect(contactNumber('+62 812-8877-6713')).toBe('6281288776713');
		expect(contactNumber(6281288776713)).toBe('6281288776713');
		expect(contactNumber('120363025246125486@g.us')).toBe('120363025246125486@g.us');
		expect(contactNumber('6281288776713-1612345678@g.us')).toBe('6281288776713-1612345678@g.us');
		expect(contactNumber('status@broadcast')).toBe('status@broadcast');
		expect(contactNumber(undefined)).toBe('');
	});

	it('maps the gateway types onto the filter categories', () => {
		expect(messageCategory('chat', undefined)).toBe('text');
		expect(messageCategory('PTT', undefined)).toBe('audio');
		expect(messageCategory('location', undefined)).toBe('other');
		expect(messageCategory('', 'data:video/mp4;base64,AAAA')).toBe('video');
		expect(messageCategory('', 'data:application/pdf;base64,AAAA')).toBe('document');
		expect(messageCategory('', undefined)).toBe('text');
	});

	it('reads every field as optional and drops the secret and the media from the raw payload', () => {
		const fields = {
			'x-api-key': 'secret',
			'uuid': 7,
			'message': ' undefined ',
			'body': 'data:image/png;base64,AAAA',
			'extra': { a: 1 },
		};
		expect(readEvent(fields)).toMatchObject({
			messageId: '7',
			text: '',
			type: 'image',
			apiKey: 'secret',
			sender: '',
			fileName: '',
		});
		expect(rawPayload(fields)).toEqual({ uuid: 7, message: ' undefined ', extra: { a: 1 } });
	});
});

describe('registration helpers', () => {
	it('adds the shared secret to the URL only in query mode', () => {
		const url = 'http://n8n.local/webhook/abc/webhook';
		expect(registrationUrl(url, settingsFrom({ verification: 'none' }))).toBe(url);
		expect(
			registrationUrl(url, settingsFrom({ verification: 'headerSecret', sharedSecret: 's' })),
		).toBe(url);
		expect(
			registrationUrl(url, settingsFrom({ verification: 'querySecret', sharedSecret: 'a b&c' })),
		).toBe(`${url}?token=a+b%26c`);
	});

	it('reads the webhook from a Check Account answer, with Odoo-style empty values', () => {
		expect(
			webhookShownBy({ message: { whatsapp_webhook: 'https://x', whatsapp_number: '62' } }),
		).toEqual({
			known: true,
			url: 'https://x',
			accountNumber: '62',
		});
		expect(webhookShownBy({ message: { whatsapp_webhook: false } })).toMatchObject({
			known: true,
			url: '',
		});
		expect(webhookShownBy({ whatsapp_webhook: null })).toMatchObject({ known: true, url: '' });
		expect(webhookShownBy({ message: { registered: true } })).toMatchObject({ known: false });
		expect(webhookShownBy(undefined)).toMatchObject({ known: false });
	});

	it('compares URLs as URLs', () => {
		expect(sameUrl('HTTP://Example.com/a', 'http://example.com/a')).toBe(true);
		expect(sameUrl('http://example.com/a', 'http://example.com/b')).toBe(false);
	});
});

describe('secretsMatch', () => {
	it('matches equal secrets only, and never an empty expected secret', () => {
		expect(secretsMatch('abc', 'abc')).toBe(true);
		expect(secretsMatch('abc', 'abcd')).toBe(false);
		expect(secretsMatch('', '')).toBe(false);
	});
});
