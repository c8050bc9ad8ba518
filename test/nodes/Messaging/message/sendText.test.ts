/**
 * Message → Send Text through n8n's real engine against the sandbox: the exact request and the
 * output, its input errors (every item checked before the first send), the gateway's refusals,
 * and mapped fields (plain `{{ $json… }}` mappings read straight from the item, numbers and
 * booleans sent as their text, mapped Options per item; other expressions keep n8n's results).
 */
import type { INodeParameters } from 'n8n-workflow';

import { probe } from '../../../harness/parameterEquivalence';
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

const sendText = (phone: string, extra: INodeParameters = {}): INodeParameters => ({
	resource: 'message',
	operation: 'sendText',
	phone,
	text: 'Hi',
	...extra,
});
const sentTexts = () => sandbox.ledger().map((entry) => ({ phone: entry.phone, text: entry.text }));

const BAD_INPUTS: BadInput[] = [
	{
		what: 'letters as phone',
		parameters: sendText('call me'),
		message: 'Field "Phone Number" is not a phone number: "call me" [item 0]',
		fix: /country code/,
	},
	{
		what: 'empty phone',
		parameters: sendText('={{ $json.phone }}'),
		items: [{ phone: '' }],
		message: 'Field "Phone Number" is empty [item 0]',
		fix: /country code/,
	},
	{
		what: 'local phone, no default country',
		parameters: sendText('0812 8877 6713'),
		message:
			'Field "Phone Number" has no country code: "0812 8877 6713". Write it with its country code (e.g. +62…) or set the "Default Country" option [item 0]',
		fix: /Default Country/,
	},
	{
		what: 'too short',
		parameters: sendText('+62 12'),
		message: 'Field "Phone Number" is too short to be a phone number: "+62 12" [item 0]',
		fix: /country code/,
	},
	{
		what: 'too long',
		parameters: sendText('+62 812 8877 6713 8888 8888'),
		message:
			'Field "Phone Number" is too long to be a phone number: "+62 812 8877 6713 8888 8888" [item 0]',
		fix: /country code/,
	},
	{
		what: 'unknown country code',
		parameters: sendText('+999 1234567'),
		message: 'Field "Phone Number" has an unknown country code: "+999 1234567" [item 0]',
		fix: /country code/,
	},
	{
		what: 'bad default country',
		parameters: sendText('0812 8877 6713', { options: { defaultCountry: 'Indonesia' } }),
		message:
			'Field "Phone Number" cannot be read: the default country "Indonesia" is not an ISO country code such as ID or US [item 0]',
		fix: /Default Country/,
	},
];

describe('message: sendText', () => {
	it('sends digits with country code, the text and the version, with a bearer token', async () => {
		const run = await runMessaging(sandbox, {
			resource: 'message',
			operation: 'sendText',
			phone: PHONE_PASTED,
			text: 'Hello from n8n',
		});
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox).map(wire)).toEqual([
			{
				method: 'POST',
				path: '/api/wa/2.0/post',
				bearer: true,
				params: {
					method: 'sendMessage',
					client_secret: SECRET,
					version: DEFAULT_VERSION,
					phone: PHONE,
					body: 'Hello from n8n',
				},
			},
		]);
		const [entry] = sandbox.ledger();
		expect(run.output('Node')).toEqual([
			{
				json: {
					sent: true,
					id: entry.id,
					phone: PHONE,
					message: 'Message sent',
					response: { message: { sent: true, message: 'Message sent', id: entry.id } },
				},
				pairedItem: { item: 0 },
			},
		]);
	});

	it('uses the Options: API version and default country for local numbers', async () => {
		const run = await runMessaging(sandbox, {
			resource: 'message',
			operation: 'sendText',
			phone: '0812 8877 6713',
			text: 'Hi',
			options: { version: 'v16', defaultCountry: 'id' },
		});
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox)[0].params).toEqual({
			method: 'sendMessage',
			client_secret: SECRET,
			version: 'v16',
			phone: PHONE,
			body: 'Hi',
		});
		expect(sandbox.ledger()).toMatchObject([{ phone: PHONE, version: 'v16', text: 'Hi' }]);
	});
});

describe('bad inputs: a clear error naming the field and the item, and nothing sent', () => {
	it.each(BAD_INPUTS.map((c) => [c.what, c] as const))('%s', async (_what, bad) => {
		await expectRefusedInput(sandbox, bad);
	});

	it('names the item that is wrong, and sends nothing: every item is checked before the first send', async () => {
		const run = await runMessaging(sandbox, sendText('={{ $json.phone }}'), [
			{ phone: PHONE_PASTED },
			{ phone: '+62 812-8877-6714' },
			{ phone: 'unknown' },
		]);
		expect(run.error?.message).toBe(
			'Field "Phone Number" is not a phone number: "unknown" [item 2]',
		);
		expect(run.error?.description).toContain(
			"Failed: item 2. Nothing was sent: every item's input is checked before the first request.",
		);
		expect(apiRequests(sandbox)).toEqual([]);
		expect(sandbox.ledger()).toEqual([]);
	});
});

describe('server refusals', () => {
	it("sent:false fails the item with the server's own words", async () => {
		sandbox.addFaults([
			{
				kind: 'sentFalse',
				match: { rpcMethod: 'sendMessage' },
				message: 'Number is blocked by WhatsApp',
			},
		]);
		const run = await runMessaging(sandbox, sendText(PHONE_PASTED));
		expect(run.error?.message).toBe(
			'Send Message (POST /api/wa/2.0/post method=sendMessage) failed: the message was not sent: "Number is blocked by WhatsApp" [item 0]',
		);
		expect(sandbox.ledger()).toEqual([]);
	});
});

describe('On Error → Continue (using error output)', () => {
	it('Send Text: a bad number and a refused send go to the error output, the sent ones to the success output', async () => {
		sandbox.addFaults([
			{
				kind: 'answer',
				result: { message: { sent: 'false', message: 'WhatsApp is not connected' } },
				match: { rpcMethod: 'sendMessage' },
				times: 1,
			},
		]);
		const items = [
			{ phone: '+62 812-8877-6710', n: 0 },
			{ phone: 'call me', n: 1 },
			{ phone: '+62 812-8877-6712', n: 2 },
		];
		const result = await runMessaging(
			sandbox,
			sendText('={{ $json.phone }}', { text: '={{ "hello " + $json.n }}' }),
			items,
			{ onError: 'continueErrorOutput' },
		);
		const success = result.output('Node', 0);
		const errors = result.output('Node', 1);
		expect(success.map((item) => [item.json.sent, item.json.phone])).toEqual([
			[true, '6281288776712'],
		]);
		expect(errors.map((item) => item.json)).toEqual([
			{
				phone: '+62 812-8877-6710',
				n: 0,
				error:
					'Send Message (POST /api/wa/2.0/post method=sendMessage) failed: the message was not sent: "WhatsApp is not connected" [item 0]',
				details: {
					item: 0,
					kind: 'rejected',
					httpStatus: 200,
					serverMessage: 'WhatsApp is not connected',
					deliveryUnknown: false,
				},
			},
			expect.objectContaining({
				phone: 'call me',
				n: 1,
				error: 'Field "Phone Number" is not a phone number: "call me" [item 1]',
			}),
		]);
		expect(sandbox.ledger().map((entry) => entry.phone)).toEqual(['6281288776712']);
	});
});

describe('mapped fields', () => {
	it('sends numbers and booleans mapped into Text as their text', async () => {
		const run = await runMessaging(
			sandbox,
			{
				resource: 'message',
				operation: 'sendText',
				phone: '={{ $json.phone }}',
				text: '={{ $json.n }}',
			},
			[
				{ phone: '+62 812-8877-6713', n: 42 },
				{ phone: '+62 812-8877-6714', n: 0 },
				{ phone: '+62 812-8877-6715', n: true },
				{ phone: '+62 812-8877-6716', n: 12.5 },
			],
		);
		expect(run.error).toBeUndefined();
		expect(sentTexts()).toEqual([
			{ phone: '6281288776713', text: '42' },
			{ phone: '6281288776714', text: '0' },
			{ phone: '6281288776715', text: 'true' },
			{ phone: '6281288776716', text: '12.5' },
		]);
	});

	it('reads keys with spaces, quotes, nested objects and array elements', async () => {
		const run = await runMessaging(
			sandbox,
			{
				resource: 'message',
				operation: 'sendText',
				phone: '={{ $json["Phone Number"] }}',
				text: "={{ $json.order['lines'][1].name }}",
				options: { defaultCountry: 'ID' },
			},
			[
				{
					'Phone Number': '0812 8877 6713',
					'order': { lines: [{ name: 'first' }, { name: 'second' }] },
				},
				{
					'Phone Number': 6281288776714,
					'order': { lines: [{ name: 'a' }, { name: 'it\'s "b"' }] },
				},
			],
		);
		expect(run.error).toBeUndefined();
		const nested = await runMessaging(
			sandbox,
			{
				resource: 'message',
				operation: 'sendText',
				phone: '={{ $json.customer.phone }}',
				text: "={{ $json['the text'] }}",
			},
			[{ 'customer': { phone: '+62 812 8877 6715' }, 'the text': 'nested' }],
		);
		expect(nested.error).toBeUndefined();
		expect(sentTexts()).toEqual([
			{ phone: '6281288776713', text: 'second' },
			{ phone: '6281288776714', text: 'it\'s "b"' },
			{ phone: '6281288776715', text: 'nested' },
		]);
	});

	it('applies a mapped Default Country to its own item only (typed-in Options are read once per run)', async () => {
		const run = await runMessaging(
			sandbox,
			{
				resource: 'message',
				operation: 'sendText',
				phone: '={{ $json.phone }}',
				text: 'Hi',
				options: { defaultCountry: '={{ $json.cc }}' },
			},
			[
				{ phone: '0812 8877 6713', cc: 'ID' },
				{ phone: '(415) 555-2671', cc: 'US' },
			],
		);
		expect(run.error).toBeUndefined();
		expect(sentTexts().map((entry) => entry.phone)).toEqual(['6281288776713', '14155552671']);
	});
});

describe("other expressions keep n8n's results", () => {
	it('sends what n8n evaluates for expressions that are more than a path', async () => {
		const run = await runMessaging(
			sandbox,
			{
				resource: 'message',
				operation: 'sendText',
				phone: '={{ $json.phone.trim() }}',
				text: '=Order {{ $json.n }} for {{ $json.name.toUpperCase() }}',
			},
			[{ phone: ' +62 812-8877-6713 ', n: 7, name: 'ana' }],
		);
		expect(run.error).toBeUndefined();
		expect(sentTexts()).toEqual([{ phone: '6281288776713', text: 'Order 7 for ANA' }]);
	});

	it("fails with n8n's own error when a mapping cannot be evaluated, and sends nothing", async () => {
		const items = [{ phone: '+62 812-8877-6713' }];
		const text = '={{ $json.constructor }}';
		const [expected] = await probe({ value: text }, items, [{ name: 'value', fallback: '' }]);
		expect('error' in expected.n8n).toBe(true);
		const run = await runMessaging(
			sandbox,
			{ resource: 'message', operation: 'sendText', phone: '={{ $json.phone }}', text },
			items,
		);
		expect(run.error?.message).toBe(`${(expected.n8n as { error: string }).error} [item 0]`);
		expect(sandbox.ledger()).toEqual([]);
	});

	it('reports a missing mapped field as before (the reader hands it to n8n)', async () => {
		const run = await runMessaging(
			sandbox,
			{
				resource: 'message',
				operation: 'sendText',
				phone: '={{ $json.phone }}',
				text: '={{ $json.missing }}',
			},
			[{ phone: '+62 812-8877-6713' }],
		);
		expect(run.error?.message).toBe('Field "Text" is empty [item 0]');
	});
});
