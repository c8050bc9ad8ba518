/**
 * What a user meets when things go wrong, through the real engine against the sandbox: bad
 * inputs with their exact messages, server refusals with the server's words, Continue On Fail,
 * order and pairing at any parallelism, and one token for a whole run.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { sharedTokenCache } from '../nodes/shared/transport';
import { startSandbox } from '../sandbox/server';
import { setBinaryDataMode, storeBinary } from './harness/engine';
import { PHONE, PHONE_PASTED, apiRequests, runMessaging } from './harness/messagingNode';
import { useSandbox } from './harness/useSandbox';

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

const sendText = (phone: string, extra: INodeParameters = {}): INodeParameters => ({ resource: 'message', operation: 'sendText', phone, text: 'Hi', ...extra });
const sendFileText = (fileContent: string, extra: INodeParameters = {}): INodeParameters => ({
	resource: 'message',
	operation: 'sendFile',
	phone: PHONE,
	fileSource: 'base64',
	fileContent,
	...extra,
});
const sendFileBinary = (extra: INodeParameters = {}): INodeParameters => ({ resource: 'message', operation: 'sendFile', phone: PHONE, ...extra });
const account = (whatsappNumber: string, webhookUrl: string): INodeParameters => ({ resource: 'account', operation: 'update', whatsappNumber, webhookUrl });

interface BadInput {
	what: string;
	parameters: INodeParameters;
	/** Items, or a function making them (binaries must be stored in the mode under test first). */
	items?: Array<IDataObject | INodeExecutionData> | (() => Promise<INodeExecutionData[]>);
	filesystem?: boolean;
	message: string;
	/** Words the "how to fix" description must hold. */
	fix: RegExp;
}

const BAD_INPUTS: BadInput[] = [
	// Phone numbers
	{ what: 'letters as phone', parameters: sendText('call me'), message: 'Field "Phone Number" is not a phone number: "call me" [item 0]', fix: /country code/ },
	{ what: 'empty phone', parameters: sendText('={{ $json.phone }}'), items: [{ phone: '' }], message: 'Field "Phone Number" is empty [item 0]', fix: /country code/ },
	{
		what: 'local phone, no default country',
		parameters: sendText('0812 8877 6713'),
		message:
			'Field "Phone Number" has no country code: "0812 8877 6713". Write it with its country code (e.g. +62…) or set the "Default Country" option [item 0]',
		fix: /Default Country/,
	},
	{ what: 'too short', parameters: sendText('+62 12'), message: 'Field "Phone Number" is too short to be a phone number: "+62 12" [item 0]', fix: /country code/ },
	{
		what: 'too long',
		parameters: sendText('+62 812 8877 6713 8888 8888'),
		message: 'Field "Phone Number" is too long to be a phone number: "+62 812 8877 6713 8888 8888" [item 0]',
		fix: /country code/,
	},
	{ what: 'unknown country code', parameters: sendText('+999 1234567'), message: 'Field "Phone Number" has an unknown country code: "+999 1234567" [item 0]', fix: /country code/ },
	{
		what: 'bad default country',
		parameters: sendText('0812 8877 6713', { options: { defaultCountry: 'Indonesia' } }),
		message: 'Field "Phone Number" cannot be read: the default country "Indonesia" is not an ISO country code such as ID or US [item 0]',
		fix: /Default Country/,
	},
	{
		what: 'account number',
		parameters: account('my number', 'https://example.com/hook'),
		message: 'Field "WhatsApp Number" is not a phone number: "my number" [item 0]',
		fix: /country code/,
	},
	{
		what: 'relative webhook URL',
		parameters: account(PHONE, 'example.com/hook'),
		message: 'Field "Webhook URL" is not an absolute http(s) URL: "example.com/hook" [item 0]',
		fix: /https:\/\//,
	},
	// File given as text
	{ what: 'empty file content', parameters: sendFileText('  '), message: 'Field "File Content" is empty [item 0]', fix: /base64/ },
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
		message: 'Field "File Content" is not valid base64 (its length is not possible for base64) [item 0]',
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
		message: 'Field "File Content" is a data URI without ";base64": only base64 data URIs can be sent [item 0]',
		fix: /base64/,
	},
	{ what: 'data URI of an empty file', parameters: sendFileText('data:text/plain;base64,'), message: 'Field "File Content" holds an empty file [item 0]', fix: /base64/ },
	{
		what: 'broken data URI',
		parameters: sendFileText('data:application/pdf;base64'),
		message: 'Field "File Content" starts with "data:" but is not a data URI of the form data:<mime type>;base64,<data> [item 0]',
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
		message: 'Field "Input Binary Field" names a binary field the item does not have: "data" (the item has no binary data) [item 0]',
		fix: /produces a file/,
	},
	{
		what: 'wrong binary field',
		parameters: sendFileBinary(),
		items: async () => [{ json: {}, binary: { attachment: await storeBinary(Buffer.from('x'), { fileName: 'x.txt' }) } }],
		message: 'Field "Input Binary Field" names a binary field the item does not have: "data" (it has: "attachment") [item 0]',
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
		items: async () => [{ json: {}, binary: { data: await storeBinary(Buffer.alloc(0), { fileName: 'empty.txt' }) } }],
		message: 'Field "Input Binary Field" holds an empty file (field "data", 0 bytes) [item 0]',
		fix: /without content/,
	},
	{
		what: 'empty filesystem binary',
		filesystem: true,
		parameters: sendFileBinary(),
		items: async () => [{ json: {}, binary: { data: await storeBinary(Buffer.alloc(0), { fileName: 'empty.txt' }) } }],
		message: 'Field "Input Binary Field" holds an empty file (field "data", 0 bytes) [item 0]',
		fix: /without content/,
	},
	{
		what: 'hand-built binary that is not base64',
		parameters: sendFileBinary(),
		items: [{ json: {}, binary: { data: { data: 'data:text/plain;base64,aGVsbG8=', mimeType: 'text/plain' } } }],
		message: 'Field "Input Binary Field" holds binary data that is not base64 (field "data") [item 0]',
		fix: /Convert to File/,
	},
];

describe('bad inputs: a clear error naming the field and the item, and nothing sent', () => {
	it.each(BAD_INPUTS.map((c) => [c.what, c] as const))('%s', async (_what, bad) => {
		if (bad.filesystem) await setBinaryDataMode('filesystem', storagePath);
		const items = typeof bad.items === 'function' ? await bad.items() : bad.items;
		const run = await runMessaging(sandbox, bad.parameters, items);
		expect(run.error?.message).toBe(bad.message);
		expect(run.error?.description).toMatch(bad.fix);
		expect(apiRequests(sandbox)).toEqual([]);
		expect(sandbox.ledger()).toEqual([]);
	});

	it('names the item that is wrong, and sends nothing: every item is checked before the first send', async () => {
		const run = await runMessaging(sandbox, sendText('={{ $json.phone }}'), [{ phone: PHONE_PASTED }, { phone: '+62 812-8877-6714' }, { phone: 'unknown' }]);
		expect(run.error?.message).toBe('Field "Phone Number" is not a phone number: "unknown" [item 2]');
		expect(run.error?.description).toContain("Failed: item 2. Nothing was sent: every item's input is checked before the first request.");
		expect(apiRequests(sandbox)).toEqual([]);
		expect(sandbox.ledger()).toEqual([]);
	});
});

describe('server refusals', () => {
	it('sent:false fails the item with the server\'s own words', async () => {
		sandbox.addFaults([{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, message: 'Number is blocked by WhatsApp' }]);
		const run = await runMessaging(sandbox, sendText(PHONE_PASTED));
		expect(run.error?.message).toBe(
			'Send Message (POST /api/wa/2.0/post method=sendMessage) failed: the message was not sent: "Number is blocked by WhatsApp" [item 0]',
		);
		expect(sandbox.ledger()).toEqual([]);
	});

	it('a send refused by the gateway (not connected) says so', async () => {
		const offline = await startSandbox({ accounts: [{ clientId: 'demo-client', clientSecret: 'demo-secret', status: 'loading' }] });
		try {
			const run = await runMessaging(offline, sendFileText('aGVsbG8='));
			expect(run.error?.message).toBe(
				'Send File (POST /api/wa/2.0/post method=sendFile) failed: the message was not sent: "WhatsApp is not connected: scan the QR code first" [item 0]',
			);
		} finally {
			await offline.close();
		}
	});

	it('a JSON-RPC error on a read fails the item with the server text', async () => {
		sandbox.addFaults([{ kind: 'rpcError', match: { path: '/api/wa/2.0/check' }, message: 'Service temporarily disabled' }]);
		const run = await runMessaging(sandbox, { resource: 'number', operation: 'check', phone: PHONE });
		expect(run.error?.message).toContain('Check Number (GET /api/wa/2.0/check) failed');
		expect(run.error?.message).toContain('Service temporarily disabled');
	});
});

describe('Continue On Fail', () => {
	it('keeps one output per input, in order, with error items in place', async () => {
		// The first send is refused by the gateway; item 1 has a bad number; the others go out.
		sandbox.addFaults([{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, message: 'Failed to send message' }]);
		const phones = ['+62 812-8877-6710', 'not a number', '+62 812-8877-6712', '+62 812-8877-6713'];
		const run = await runMessaging(sandbox, sendText('={{ $json.phone }}', { text: '={{ "Hello " + $json.phone }}' }), phones.map((phone) => ({ phone })), {
			continueOnFail: true,
		});
		expect(run.error).toBeUndefined();
		const output = run.output('Node');
		expect(output.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }, { item: 3 }]);
		expect(output[0].json).toEqual({
			error: 'Send Message (POST /api/wa/2.0/post method=sendMessage) failed: the message was not sent: "Failed to send message" [item 0]',
			details: { item: 0, kind: 'rejected', httpStatus: 200, serverMessage: 'Failed to send message', deliveryUnknown: false },
		});
		expect(output[1].json).toMatchObject({ error: 'Field "Phone Number" is not a phone number: "not a number" [item 1]' });
		const ledger = sandbox.ledger();
		expect(ledger.map((entry) => [entry.phone, entry.text])).toEqual([
			['6281288776712', 'Hello +62 812-8877-6712'],
			['6281288776713', 'Hello +62 812-8877-6713'],
		]);
		expect(output[2].json).toMatchObject({ sent: true, phone: '6281288776712', id: ledger[0].id });
		expect(output[3].json).toMatchObject({ sent: true, phone: '6281288776713', id: ledger[1].id });
	});

	it('also with onError: continueRegularOutput', async () => {
		const run = await runMessaging(sandbox, { resource: 'number', operation: 'check', phone: '={{ $json.phone }}' }, [{ phone: 'x' }, { phone: PHONE }], {
			onError: 'continueRegularOutput',
		});
		expect(run.output('Node').map((item) => Object.keys(item.json)[0])).toEqual(['error', 'phone']);
	});
});

describe('batching', () => {
	const phones = Array.from({ length: 12 }, (_, i) => `+62 812-8877-${String(6700 + i)}`);
	const items = phones.map((phone, i) => ({ phone, n: i }));
	const digits = (phone: string) => phone.replace(/\D/g, '');

	async function sendAll(parallel: number) {
		// The first send answers late: with parallel > 1 the next ones finish before it.
		sandbox.addFaults([{ kind: 'slow', match: { rpcMethod: 'sendMessage' }, delayMs: 400, times: 1 }]);
		return await runMessaging(sandbox, sendText('={{ $json.phone }}', { text: '={{ "item " + $json.n }}', options: { parallel } }), items);
	}

	it.each([1, 4])('parallel %i: output order and pairedItem follow the input; one token for the run', async (parallel) => {
		const run = await sendAll(parallel);
		expect(run.error).toBeUndefined();
		const output = run.output('Node');
		expect(output.map((item) => item.pairedItem)).toEqual(items.map((_, i) => ({ item: i })));
		expect(output.map((item) => item.json.phone)).toEqual(phones.map(digits));
		const idByPhone = new Map(sandbox.ledger().map((entry) => [entry.phone, entry.id]));
		expect(output.map((item) => item.json.id)).toEqual(phones.map((phone) => idByPhone.get(digits(phone))));
		expect(sandbox.ledger().find((entry) => entry.phone === digits(phones[5]))?.text).toBe('item 5');

		// One token request; every send carried that same token.
		expect(sandbox.stats().tokensIssued.wa).toBe(1);
		const bearers = new Set(apiRequests(sandbox).map((entry) => entry.authorization));
		expect(bearers.size).toBe(1);
	});

	it('parallel 4 really overlaps requests; parallel 1 never does', async () => {
		// The log is written when an answer goes out, `seq` when a request comes in: an answer
		// logged before one that came in earlier proves two requests were in flight together.
		const overlapped = () => {
			const seqs = sandbox.requests().filter((entry) => entry.path === '/api/wa/2.0/post').map((entry) => entry.seq);
			return seqs.some((seq, i) => i > 0 && seq < seqs[i - 1]);
		};
		await sendAll(1);
		expect(overlapped()).toBe(false);
		sandbox.reset();
		sharedTokenCache.clear();
		await sendAll(4);
		expect(overlapped()).toBe(true);
	});

	it('without Continue On Fail, a parallel run stops starting items after a failure and says what happened', async () => {
		sandbox.addFaults([{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, message: 'Message limit reached' }]);
		const run = await runMessaging(sandbox, sendText('={{ $json.phone }}', { options: { parallel: 3 } }), items);
		expect(run.error?.message).toContain('"Message limit reached" [item 0]');
		expect(run.error?.description).toMatch(/Failed: item 0\./);
		expect(sandbox.ledger().length).toBeLessThan(items.length);
	});
});
