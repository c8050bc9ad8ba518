/**
 * Message → Send File through n8n's real engine against the sandbox, per File Source: base64 text
 * or a data URI, a binary field in memory or on disk (streamed, byte for byte), and a URL (the
 * sandbox serves the file under `/files/…` and receives the send; the ledger's checksum proves the
 * file arrived whole); its input errors and the gateway's refusal.
 */
import { createHash, randomBytes } from 'crypto';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Readable } from 'stream';

import type { INodeParameters } from 'n8n-workflow';

import { fileSha256 } from '../../../../sandbox/files';
import { startSandbox } from '../../../../sandbox/server';
import {
	runWorkflow,
	sandboxCredential,
	setBinaryDataMode,
	singleNodeWorkflow,
	storeBinary,
} from '../../../harness/engine';
import {
	DEFAULT_VERSION,
	PHONE,
	PHONE_PASTED,
	SECRET,
	apiRequests,
	expectRefusedInput,
	runMessaging,
	wire,
	type BadInput,
} from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';

const sandbox = useSandbox();
let storagePath: string;

beforeAll(() => {
	storagePath = mkdtempSync(join(tmpdir(), 'messaging-binary-'));
});
beforeEach(async () => {
	await setBinaryDataMode('memory');
});
afterAll(async () => {
	await setBinaryDataMode('memory');
	rmSync(storagePath, { recursive: true, force: true });
});

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const sendFileText = (fileContent: string, extra: INodeParameters = {}): INodeParameters => ({
	resource: 'message',
	operation: 'sendFile',
	phone: PHONE,
	fileSource: 'base64',
	fileContent,
	...extra,
});
const sendFileBinary = (extra: INodeParameters = {}): INodeParameters => ({
	resource: 'message',
	operation: 'sendFile',
	phone: PHONE,
	...extra,
});

const BAD_INPUTS: BadInput[] = [
	// File given as text
	{
		what: 'empty file content',
		parameters: sendFileText('  '),
		message: 'Field "File Content" is empty [item 0]',
		fix: /base64/,
	},
	{
		what: 'not base64',
		parameters: sendFileText('this is not base64!'),
		message: 'Field "File Content" is not valid base64 (it holds the character "!") [item 0]',
		fix: /data:application\/pdf;base64/,
	},
	{
		what: 'padding in the middle',
		parameters: sendFileText('QUJDRA=QUJD'),
		message: 'Field "File Content" is not valid base64 ("=" padding before the end) [item 0]',
		fix: /base64/,
	},
	{
		what: 'impossible base64 length',
		parameters: sendFileText('data:image/png;base64,QUJDRAQUJ'),
		message:
			'Field "File Content" is not valid base64 (its length is not possible for base64) [item 0]',
		fix: /base64/,
	},
	{
		what: 'mixed base64 alphabets',
		parameters: sendFileText('ab+_'),
		message: 'Field "File Content" is not valid base64 (it holds the character "_") [item 0]',
		fix: /base64/,
	},
	{
		what: 'data URI without base64',
		parameters: sendFileText('data:text/plain,hello'),
		message:
			'Field "File Content" is a data URI without ";base64": only base64 data URIs are read [item 0]',
		fix: /base64/,
	},
	{
		what: 'data URI of an empty file',
		parameters: sendFileText('data:text/plain;base64,'),
		message: 'Field "File Content" holds an empty file [item 0]',
		fix: /base64/,
	},
	{
		what: 'broken data URI',
		parameters: sendFileText('data:application/pdf;base64'),
		message:
			'Field "File Content" starts with "data:" but is not a data URI of the form data:<mime type>;base64,<data> [item 0]',
		fix: /base64/,
	},
	{
		what: 'bad mime type',
		parameters: sendFileText('aGVsbG8=', { fileFields: { mimeType: 'pdf' } }),
		message: 'Field "MIME Type" is not a mime type: "pdf" [item 0]',
		fix: /application\/pdf/,
	},
	// File from a binary field
	{
		what: 'no binary at all',
		parameters: sendFileBinary(),
		items: [{ name: 'no file here' }],
		message:
			'Field "Input Binary Field" names a binary field the item does not have: "data" (the item has no binary data) [item 0]',
		fix: /produces a file/,
	},
	{
		what: 'wrong binary field',
		parameters: sendFileBinary(),
		items: async () => [
			{
				json: {},
				binary: { attachment: await storeBinary(Buffer.from('x'), { fileName: 'x.txt' }) },
			},
		],
		message:
			'Field "Input Binary Field" names a binary field the item does not have: "data" (it has: "attachment") [item 0]',
		fix: /"attachment"/,
	},
	{
		what: 'empty binary field name',
		parameters: sendFileBinary({ binaryPropertyName: ' ' }),
		message: 'Field "Input Binary Field" is empty [item 0]',
		fix: /data/,
	},
	{
		what: 'empty in-memory binary',
		parameters: sendFileBinary(),
		items: async () => [
			{ json: {}, binary: { data: await storeBinary(Buffer.alloc(0), { fileName: 'empty.txt' }) } },
		],
		message: 'Field "Input Binary Field" holds an empty file (field "data", 0 bytes) [item 0]',
		fix: /without content/,
	},
	{
		what: 'empty filesystem binary',
		filesystem: true,
		parameters: sendFileBinary(),
		items: async () => [
			{ json: {}, binary: { data: await storeBinary(Buffer.alloc(0), { fileName: 'empty.txt' }) } },
		],
		message: 'Field "Input Binary Field" holds an empty file (field "data", 0 bytes) [item 0]',
		fix: /without content/,
	},
	{
		what: 'hand-built binary that is not base64',
		parameters: sendFileBinary(),
		items: [
			{
				json: {},
				binary: { data: { data: 'data:text/plain;base64,aGVsbG8=', mimeType: 'text/plain' } },
			},
		],
		message:
			'Field "Input Binary Field" holds binary data that is not base64 (field "data") [item 0]',
		fix: /Convert to File/,
	},
];

describe('message: sendFile', () => {
	it('sends a data URI given as text, with file name and caption', async () => {
		const pdf = Buffer.from('%PDF-1.7\n% a tiny test file\n');
		const dataUri = `data:application/pdf;base64,${pdf.toString('base64')}`;
		const run = await runMessaging(sandbox, {
			resource: 'message',
			operation: 'sendFile',
			phone: PHONE_PASTED,
			fileSource: 'base64',
			fileContent: dataUri,
			caption: 'Your invoice',
			fileFields: { fileName: 'invoice.pdf' },
		});
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox).map(wire)).toEqual([
			{
				method: 'POST',
				path: '/api/wa/2.0/post',
				bearer: true,
				params: {
					method: 'sendFile',
					client_secret: SECRET,
					version: DEFAULT_VERSION,
					phone: PHONE,
					body: dataUri,
					filename: 'invoice.pdf',
					caption: 'Your invoice',
				},
			},
		]);
		const [entry] = sandbox.ledger();
		expect(entry).toMatchObject({
			kind: 'file',
			phone: PHONE,
			caption: 'Your invoice',
			file: {
				mimeType: 'application/pdf',
				filename: 'invoice.pdf',
				size: pdf.length,
				sha256: sha256(pdf),
			},
		});
		expect(run.output('Node')).toEqual([
			{
				json: {
					sent: true,
					id: entry.id,
					phone: PHONE,
					message: 'Message sent',
					sentAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
					waitedMs: 0,
					response: { message: { sent: true, message: 'Message sent', id: entry.id } },
					fileName: 'invoice.pdf',
					mimeType: 'application/pdf',
					fileSize: pdf.length,
				},
				pairedItem: { item: 0 },
			},
		]);
	});

	it.each([
		['audio/mpeg', 'file.mp3'],
		['audio/ogg', 'file.ogg'],
		['video/quicktime', 'file.mov'],
		['text/vcard', 'file.vcf'],
	])(
		'without a file name, a %s data URI is sent as %s (the extension people know)',
		async (mimeType, fileName) => {
			const run = await runMessaging(sandbox, {
				resource: 'message',
				operation: 'sendFile',
				phone: PHONE,
				fileSource: 'base64',
				fileContent: `data:${mimeType};base64,${randomBytes(30).toString('base64')}`,
			});
			expect(run.error).toBeUndefined();
			expect(apiRequests(sandbox)[0].params).toMatchObject({ filename: fileName });
			expect(run.output('Node')[0].json).toMatchObject({ fileName, mimeType });
		},
	);

	it('accepts bare, line-wrapped base64 and takes the mime type from the file name', async () => {
		const content = randomBytes(200);
		const wrapped = content.toString('base64').replace(/.{76}/g, '$&\n');
		const run = await runMessaging(sandbox, {
			resource: 'message',
			operation: 'sendFile',
			phone: PHONE,
			fileSource: 'base64',
			fileContent: wrapped,
			fileFields: { fileName: 'photo.jpg' },
		});
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox)[0].params).toMatchObject({
			body: `data:image/jpeg;base64,${content.toString('base64')}`,
			filename: 'photo.jpg',
			caption: '',
		});
		expect(sandbox.ledger()[0].file).toEqual({
			mimeType: 'image/jpeg',
			filename: 'photo.jpg',
			size: 200,
			sha256: sha256(content),
		});
	});

	it('sends an in-memory binary as it is, with the name and type from its metadata', async () => {
		const png = randomBytes(300);
		const binary = await storeBinary(png, { fileName: 'chart.png', mimeType: 'image/png' });
		expect(binary.id).toBeUndefined();
		const run = await runMessaging(
			sandbox,
			{ resource: 'message', operation: 'sendFile', phone: PHONE_PASTED },
			[{ json: { name: 'chart' }, binary: { data: binary } }],
		);
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox).map(wire)).toEqual([
			{
				method: 'POST',
				path: '/api/wa/2.0/post',
				bearer: true,
				params: {
					method: 'sendFile',
					client_secret: SECRET,
					version: DEFAULT_VERSION,
					phone: PHONE,
					body: `data:image/png;base64,${binary.data}`,
					filename: 'chart.png',
					caption: '',
				},
			},
		]);
		expect(sandbox.ledger()[0].file).toEqual({
			mimeType: 'image/png',
			filename: 'chart.png',
			size: 300,
			sha256: sha256(png),
		});
		expect(run.output('Node')[0].json).toMatchObject({
			sent: true,
			phone: PHONE,
			fileName: 'chart.png',
			mimeType: 'image/png',
			fileSize: 300,
		});
	});

	it('reads another binary field, and the given name and type win over the metadata', async () => {
		const binary = await storeBinary(Buffer.from('a,b\n1,2\n'), {
			fileName: 'export.bin',
			mimeType: 'application/octet-stream',
		});
		const run = await runMessaging(
			sandbox,
			{
				resource: 'message',
				operation: 'sendFile',
				phone: PHONE,
				binaryPropertyName: 'attachment',
				caption: 'Numbers',
				fileFields: { fileName: 'numbers.csv', mimeType: 'text/csv' },
			},
			[{ json: {}, binary: { attachment: binary } }],
		);
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox)[0].params).toMatchObject({
			body: `data:text/csv;base64,${binary.data}`,
			filename: 'numbers.csv',
			caption: 'Numbers',
		});
	});

	it('streams a filesystem-mode binary from disk (binary.id), byte for byte', async () => {
		await setBinaryDataMode('filesystem', storagePath);
		const content = randomBytes(3 * 1024 * 1024 + 1); // not a multiple of 3: exercises the padding
		const binary = await storeBinary(
			Readable.from([content.subarray(0, 1000), content.subarray(1000)]),
			{
				fileName: 'report.pdf',
				mimeType: 'application/pdf',
			},
		);
		expect(binary.id).toMatch(/^filesystem(-v2)?:/);
		expect(binary.data).not.toMatch(/^[A-Za-z0-9+/]{100}/);

		const run = await runMessaging(
			sandbox,
			{ resource: 'message', operation: 'sendFile', phone: PHONE_PASTED, caption: 'Q3' },
			[{ json: {}, binary: { data: binary } }],
		);
		expect(run.error).toBeUndefined();
		const [request] = apiRequests(sandbox);
		const uriLength = 'data:application/pdf;base64,'.length + Math.ceil(content.length / 3) * 4;
		expect(wire(request)).toEqual({
			method: 'POST',
			path: '/api/wa/2.0/post',
			bearer: true,
			params: {
				method: 'sendFile',
				client_secret: SECRET,
				version: DEFAULT_VERSION,
				phone: PHONE,
				body: `<${uriLength} chars>`,
				filename: 'report.pdf',
				caption: 'Q3',
			},
		});
		expect(sandbox.ledger()[0].file).toEqual({
			mimeType: 'application/pdf',
			filename: 'report.pdf',
			size: content.length,
			sha256: sha256(content),
		});
		expect(run.output('Node')[0].json).toMatchObject({
			sent: true,
			fileName: 'report.pdf',
			mimeType: 'application/pdf',
			fileSize: content.length,
		});
	});
});

const fileUrl = (path: string) => `${sandbox.url}/files/${path}`;

function sendFromUrl(url: string, extra: INodeParameters = {}): INodeParameters {
	return {
		resource: 'message',
		operation: 'sendFile',
		phone: PHONE_PASTED,
		fileSource: 'url',
		fileUrl: url,
		caption: 'From a URL',
		...extra,
	};
}

describe('message: sendFile from a URL', () => {
	it('streams the download into the send: name from the path, type from the answer', async () => {
		const run = await runMessaging(
			sandbox,
			sendFromUrl(fileUrl('reports/q3.pdf?size=250000&type=application/pdf&seed=3')),
		);
		expect(run.error).toBeUndefined();
		const [entry] = sandbox.ledger();
		expect(entry).toMatchObject({
			kind: 'file',
			phone: PHONE,
			caption: 'From a URL',
			file: {
				mimeType: 'application/pdf',
				filename: 'q3.pdf',
				size: 250000,
				sha256: fileSha256(250000, 3),
			},
		});
		expect(run.output('Node')).toEqual([
			{
				json: expect.objectContaining({
					sent: true,
					id: entry.id,
					phone: PHONE,
					fileName: 'q3.pdf',
					mimeType: 'application/pdf',
					fileSize: 250000,
					// Query values hidden: signed links carry their credentials there.
					fileUrl: fileUrl('reports/q3.pdf?size=***&type=***&seed=***'),
				}),
				pairedItem: { item: 0 },
			},
		]);
		// The request carried the file's length: not chunked, nothing buffered to learn it.
		expect(apiRequests(sandbox)[0].bodyBytes).toBeGreaterThan(Math.ceil(250000 / 3) * 4);
	});

	it('a server without Content-Length: the send is streamed all the same and the size counted', async () => {
		const run = await runMessaging(
			sandbox,
			sendFromUrl(
				fileUrl(
					'dl?size=100000&chunked=1&type=none&disposition=attachment%3B%20filename%3D%22Price%20list.xlsx%22',
				),
			),
		);
		expect(run.error).toBeUndefined();
		expect(sandbox.ledger()[0].file).toMatchObject({
			filename: 'Price list.xlsx',
			mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
			size: 100000,
			sha256: fileSha256(100000),
		});
		expect(run.output('Node')[0].json).toMatchObject({
			fileName: 'Price list.xlsx',
			fileSize: 100000,
		});
	});

	it('File Name and MIME Type given by the user win over the answer', async () => {
		const run = await runMessaging(
			sandbox,
			sendFromUrl(fileUrl('a.bin?size=10&type=application/pdf'), {
				fileFields: { fileName: 'contract.pdf', mimeType: 'application/x-custom' },
			}),
		);
		expect(run.error).toBeUndefined();
		expect(sandbox.ledger()[0].file).toMatchObject({
			filename: 'contract.pdf',
			mimeType: 'application/x-custom',
		});
	});

	it('redirects are followed up to Max Redirects', async () => {
		const ok = await runMessaging(
			sandbox,
			sendFromUrl(fileUrl('r/file.png?redirects=2&size=64&type=image/png'), {
				downloadOptions: { maxRedirects: 2 },
			}),
		);
		expect(ok.error).toBeUndefined();
		expect(sandbox.ledger()[0].file).toMatchObject({ filename: 'file.png', mimeType: 'image/png' });

		const tooMany = await runMessaging(
			sandbox,
			sendFromUrl(fileUrl('r/file.png?redirects=3&size=64'), {
				downloadOptions: { maxRedirects: 2 },
			}),
		);
		expect(tooMany.error?.message).toMatch(
			/^Could not download the file from http:\/\/127\.0\.0\.1:\d+\/files\/r\/file\.png\?redirects=\*\*\*&size=\*\*\*: more than 2 redirects .* \[item 0\]$/,
		);
		expect(sandbox.ledger()).toHaveLength(1);
	});

	it('errors name the URL without its credentials and the HTTP status; with Continue the other items are sent', async () => {
		const secretUrl = `${sandbox.url.replace('http://', 'http://ann:hunter22@')}/files/gone.pdf?status=404&token=abc123secret`;
		const run = await runMessaging(
			sandbox,
			{ ...sendFromUrl('={{ $json.url }}') },
			[{ url: secretUrl }, { url: fileUrl('ok.pdf?size=20') }],
			{ onError: 'continueRegularOutput' },
		);
		expect(run.error).toBeUndefined();
		const [failed, sent] = run.output('Node');
		const failure = JSON.stringify(failed.json);
		expect(failure).toContain('the server answered HTTP 404 Not Found');
		expect(failure).toMatch(
			/http:\/\/\*\*\*@127\.0\.0\.1:\d+\/files\/gone\.pdf\?status=\*\*\*&token=\*\*\*/,
		);
		expect(failure).not.toMatch(/hunter22|abc123secret|ann:/);
		expect(sent.json).toMatchObject({ sent: true, fileName: 'ok.pdf' });
		expect(sandbox.ledger()).toHaveLength(1);
	});

	it('over Max File Size: refused from the announced length before the send, or cut off while streaming; nothing recorded', async () => {
		const announced = await runMessaging(
			sandbox,
			sendFromUrl(fileUrl('big.bin?size=3000000'), { downloadOptions: { maxSizeMb: 1 } }),
		);
		expect(announced.error?.message).toContain(
			'the file has 2.9 MB, over the limit of 1.0 MB (raise "Max File Size" to send it)',
		);
		expect(apiRequests(sandbox)).toHaveLength(0);

		const streamed = await runMessaging(
			sandbox,
			sendFromUrl(fileUrl('big.bin?size=3000000&chunked=1'), { downloadOptions: { maxSizeMb: 1 } }),
		);
		expect(streamed.error?.message).toContain('the file is larger than the limit of 1.0 MB');
		// Cut off mid-body: the gateway saw an incomplete request and recorded nothing; the error is the download's, not "maybe delivered".
		expect(sandbox.ledger()).toHaveLength(0);
		expect(streamed.error?.message).not.toMatch(/may have been/);
	});

	it('a stalled download fails after Download Timeout; bad URLs fail before any request', async () => {
		const stalled = await runMessaging(
			sandbox,
			sendFromUrl(fileUrl('s.bin?size=500000&stallAfter=100000'), {
				downloadOptions: { timeoutSeconds: 1 },
			}),
		);
		expect(stalled.error?.message).toContain(
			'(no data for 1 s (raise "Download Timeout" if the server is slow))',
		);
		expect(sandbox.ledger()).toHaveLength(0);

		const ftp = await runMessaging(sandbox, sendFromUrl('ftp://files.example.org/a.pdf'));
		expect(ftp.error?.message).toBe(
			'Field "File URL" uses ftp: only http and https URLs can be downloaded: "ftp://files.example.org/a.pdf" [item 0]',
		);
		const empty = await runMessaging(sandbox, sendFromUrl('  '));
		expect(empty.error?.message).toBe('Field "File URL" is empty [item 0]');
		expect(apiRequests(sandbox)).toHaveLength(0);
	});

	it('a slow download without Content-Length gets the time allowance of its size cap, not just the request timeout', async () => {
		// 1 MB in 16 pieces 200 ms apart: about 3 s, over the credential's 2 s Request Timeout.
		const workflow = singleNodeWorkflow(
			'messaging',
			sendFromUrl(fileUrl('slow.bin?size=1000000&chunked=1&chunkDelayMs=200'), {
				downloadOptions: { maxSizeMb: 4 },
			}),
		);
		const run = await runWorkflow(workflow, sandboxCredential(sandbox.url, { timeoutSeconds: 2 }));
		expect(run.error).toBeUndefined();
		expect(sandbox.ledger()[0].file).toMatchObject({ size: 1000000, sha256: fileSha256(1000000) });
	});

	it.each([true, '={{ "true" }}', '={{ "yes" }}', '={{ 1 }}', '={{ "TRUE " }}'])(
		'Block Private Addresses %j refuses the sandbox (a loopback address): a switch it does not understand is on',
		async (value) => {
			const run = await runMessaging(
				sandbox,
				sendFromUrl(fileUrl('a.pdf'), { downloadOptions: { blockPrivateAddresses: value } }),
			);
			expect(run.error?.message).toContain(
				'127.0.0.1 is a private or local address, and "Block Private Addresses" is on',
			);
			expect(sandbox.fileRequests()).toHaveLength(0);
		},
	);

	it.each([false, '={{ "false" }}', '={{ false }}'])(
		'Block Private Addresses %j is off',
		async (value) => {
			const run = await runMessaging(
				sandbox,
				sendFromUrl(fileUrl('a.pdf?size=10'), {
					downloadOptions: { blockPrivateAddresses: value },
				}),
			);
			expect(run.error).toBeUndefined();
			expect(sandbox.ledger()).toHaveLength(1);
		},
	);

	it('Show Full URL keeps the query and the fragment in the output; by default they are hidden', async () => {
		// Values no random hex (a resume token, an id) can contain.
		const url = fileUrl('a.pdf?size=10&X-Amz-Signature=s1gq&jwt=eyJhbGc#access_token=ya29.tok');
		const hidden = await runMessaging(sandbox, sendFromUrl(url));
		expect(hidden.output('Node')[0].json.fileUrl).toBe(
			fileUrl('a.pdf?size=***&X-Amz-Signature=***&jwt=***#***'),
		);
		expect(JSON.stringify(hidden.run)).not.toMatch(/s1gq|eyJhbGc|ya29/);
		// Another caption: not a repeat of the first send (Skip Repeats Within).
		const shown = await runMessaging(
			sandbox,
			sendFromUrl(url, { caption: 'again', downloadOptions: { showFullUrl: true } }),
		);
		expect(shown.output('Node')[0].json.fileUrl).toBe(url);
	});

	it('a file name from the URL or the server with a right-to-left override is cleaned before it is sent', async () => {
		const run = await runMessaging(
			sandbox,
			sendFromUrl(fileUrl('invoice%E2%80%AEfdp.exe?size=10')),
		);
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox)[0].params).toMatchObject({ filename: 'invoicefdp.exe' });
		const named = await runMessaging(
			sandbox,
			sendFromUrl(fileUrl('a.pdf?size=10'), { fileFields: { fileName: 'Rechnung\u202Efdp.exe' } }),
		);
		expect(named.output('Node')[0].json.fileName).toBe('Rechnungfdp.exe');
	});
});

describe('bad inputs: a clear error naming the field and the item, and nothing sent', () => {
	it.each(BAD_INPUTS.map((c) => [c.what, c] as const))('%s', async (_what, bad) => {
		await expectRefusedInput(sandbox, bad, storagePath);
	});
});

describe('server refusals', () => {
	it('a send refused by the gateway (not connected) says so', async () => {
		const offline = await startSandbox({
			accounts: [{ clientId: 'demo-client', clientSecret: 'demo-secret', status: 'loading' }],
		});
		try {
			const run = await runMessaging(offline, sendFileText('aGVsbG8='));
			expect(run.error?.message).toBe(
				'Send File (POST /api/wa/2.0/post method=sendFile) failed: the message was not sent: "WhatsApp is not connected: scan the QR code first" [item 0]',
			);
		} finally {
			await offline.close();
		}
	});
});
