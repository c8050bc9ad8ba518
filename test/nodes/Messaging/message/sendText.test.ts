/**
 * Message → Send Text through n8n's real engine against the sandbox: the exact request and the
 * output, its input errors (every item checked before the first send), the gateway's refusals,
 * and mapped fields (evaluated by n8n; numbers and booleans sent as their text, mapped Options
 * per item).
 */
import { ExecuteContext } from 'n8n-core';
import type { IDataObject, INode, INodeParameters } from 'n8n-workflow';

import type { FaultRule } from '../../../../sandbox/types';
import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../../../harness/engine';

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
					sentAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
					waitedMs: 0,
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

describe('a send that may have been delivered says so in the words people read', () => {
	const SEND = 'Send Message (POST /api/wa/2.0/post method=sendMessage) failed: ';
	const WARNING =
		'; the message may have been delivered, so it was not sent again: check the recipient before sending it again [item 0]';
	const cases: Array<{
		what: string;
		fault: FaultRule;
		credential?: IDataObject;
		headline: RegExp;
	}> = [
		{
			what: 'the connection closed after the gateway processed it',
			fault: { kind: 'dropAfterProcessing' },
			headline: /^the connection failed \(UND_ERR_SOCKET: other side closed\)$/,
		},
		{
			what: 'no answer within the Request Timeout',
			fault: { kind: 'slow', delayMs: 2_500 },
			credential: { timeoutSeconds: 1 },
			headline: /^no complete answer within 1 s \(Request Timeout\)$/,
		},
		{
			what: 'an answer that does not say it was sent',
			fault: { kind: 'answer', result: { message: { id: 'x1' } } },
			headline: /^the answer does not say the message was sent: "\{.*"x1".*\}"$/,
		},
		{
			what: 'an empty answer',
			fault: { kind: 'emptyBody' },
			headline: /^HTTP 200 with an empty body$/,
		},
		{
			what: 'an answer that is not JSON',
			fault: { kind: 'malformedJson' },
			headline: /^HTTP 200 with a body that is not JSON: ".*"$/,
		},
		{
			what: 'an answer larger than Max Response Size',
			fault: { kind: 'hugeBody', bytes: 2 * 1024 * 1024 },
			credential: { maxResponseMegabytes: 1 },
			headline:
				/^the answer is larger than 1 MB, the credential's "Max Response Size \(MB\)"; it was not read$/,
		},
		{
			what: "a proxy's 502 after the request reached it",
			fault: { kind: 'html502' },
			headline: /^HTTP 502 Bad Gateway: ".*"$/,
		},
		{
			what: "a proxy's 504 after the request reached it",
			fault: { kind: 'html504' },
			headline: /^HTTP 504 Gateway Timeout: ".*"$/,
		},
		{
			what: 'a 503: a router may give up while the gateway goes on',
			fault: { kind: 'html503' },
			headline: /^HTTP 503 Service Unavailable: ".*"$/,
		},
		{
			what: 'a server error after the gateway processed it',
			fault: { kind: 'http500AfterProcessing', message: 'Worker lost' },
			headline: /^HTTP 500 Internal Server Error: "Worker lost"$/,
		},
		{
			what: 'a JSON-RPC error: the gateway may have failed after sending',
			fault: { kind: 'rpcError', message: 'Invalid phone' },
			headline: /^the server answered an error: "Invalid phone"$/,
		},
		{
			what: 'a redirect: a server may answer one after acting',
			fault: { kind: 'redirect' },
			headline: /^HTTP 302: the server redirects to http:\/\/127\.0\.0\.1:1\/moved, .*$/,
		},
	];

	it.each(cases)(
		"$what: the error item's `error` and the stopped run's message end with the warning",
		async ({ fault, credential, headline }) => {
			const words = (message: string | undefined) => {
				expect(message?.startsWith(SEND)).toBe(true);
				expect(message?.endsWith(WARNING)).toBe(true);
				expect(message?.slice(SEND.length, -WARNING.length)).toMatch(headline);
			};
			const settings: Array<Partial<INode>> = [{ onError: 'continueRegularOutput' }, {}];
			for (const nodeSettings of settings) {
				sandbox.addFaults([{ ...fault, match: { rpcMethod: 'sendMessage' }, times: 1 }]);
				// Another text per run: the second is not a repeat of the first (Skip Repeats Within).
				const text = `Hi (${nodeSettings.onError ?? 'stop'})`;
				const run = await runWorkflow(
					singleNodeWorkflow('messaging', sendText(PHONE_PASTED, { text }), [{}], nodeSettings),
					sandboxCredential(sandbox.url, credential),
				);
				if (nodeSettings.onError) {
					const json = run.output('Node')[0].json;
					words(json.error as string);
					expect(json.details).toMatchObject({ deliveryUnknown: true });
				} else words(run.error?.message);
			}
			// Never sent again by the node: one request per run (a slow answer is logged when it ends).
			if (fault.kind === 'slow') await new Promise((resolve) => setTimeout(resolve, 1_600));
			expect(
				apiRequests(sandbox).filter(
					(r) => (r.params as IDataObject | undefined)?.method === 'sendMessage',
				),
			).toHaveLength(2);
		},
	);

	it.each([{ kind: 'sentFalse' }, { kind: 'http429', retryAfterSeconds: 120 }] as FaultRule[])(
		'a failure the gateway cannot have processed ($kind) carries no warning',
		async (fault) => {
			sandbox.addFaults([{ ...fault, match: { rpcMethod: 'sendMessage' }, times: 1 }]);
			const run = await runMessaging(sandbox, sendText(PHONE_PASTED), [{}], {
				onError: 'continueRegularOutput',
			});
			const json = run.output('Node')[0].json;
			expect(json.error).toMatch(/^Send Message .* failed: .* \[item 0\]$/);
			expect(json.error).not.toMatch(/may have been/);
			expect(json.details).toMatchObject({ deliveryUnknown: false });
		},
	);
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
		const run = await runMessaging(
			sandbox,
			{ resource: 'message', operation: 'sendText', phone: '={{ $json.phone }}', text },
			items,
		);
		// n8n's expression sandbox refuses the name; its words, not a field rule of the node.
		expect(run.error?.message).toMatch(/constructor|security|not allowed/i);
		expect(run.error?.message).not.toMatch(/^Field "Text"/);
		expect(sandbox.ledger()).toEqual([]);
	});

	it('reports a missing mapped field as an empty Text', async () => {
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

describe("n8n's evaluation of mapped fields", () => {
	it('reads each mapped field and the mapped Options once per item, however the items are run', async () => {
		// Every read of a parameter goes through n8n-core's own reader, which evaluates expressions.
		type Read = (name: string, itemIndex: number, ...rest: unknown[]) => unknown;
		const context = ExecuteContext.prototype as unknown as { _getNodeParameter: Read };
		const reads = new Map<string, number>();
		const original = context._getNodeParameter;
		const spy = jest.spyOn(context, '_getNodeParameter').mockImplementation(function (
			this: unknown,
			name,
			itemIndex,
			...rest
		) {
			const key = `${name}#${itemIndex}`;
			reads.set(key, (reads.get(key) ?? 0) + 1);
			return original.call(this, name, itemIndex, ...rest);
		});
		try {
			const items = [0, 1, 2, 3].map((n) => ({ phone: PHONE_PASTED, text: `Hi ${n}`, cc: 'ID' }));
			const run = await runMessaging(
				sandbox,
				{
					...sendText('={{ $json.phone }}', { text: '={{ $json.text }}' }),
					options: {
						defaultCountry: '={{ $json.cc }}',
						parallel: 2,
						messageDelay: { range: { minSeconds: 0, maxSeconds: 0 } },
					},
				},
				items,
			);
			expect(run.error).toBeUndefined();
			for (const name of ['phone', 'text', 'options'])
				for (const itemIndex of [0, 1, 2, 3]) expect(reads.get(`${name}#${itemIndex}`)).toBe(1);
		} finally {
			spy.mockRestore();
		}
	});
});
