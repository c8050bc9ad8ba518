/**
 * n8n's own settings as part of the contract, through n8n's engine against the sandbox:
 * On Error (Stop, Continue, Continue using error output) for every operation of every node,
 * Retry On Fail (no message sent twice, no retries multiplied), options per item.
 */
import { readFileSync } from 'fs';
import type { IDataObject, INode, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../harness/engine';
import { resources as rateResources } from '../../nodes/CurrencyRate/CurrencyRate.node';
import { resources as messagingResources } from '../../nodes/Messaging/Messaging.node';
import type { FaultRule } from '../../sandbox/types';
import { apiRequests, PHONE } from '../harness/messagingNode';
import { useSandbox } from '../harness/useSandbox';
import { useVirtualTime } from '../harness/virtualTime';

const sandbox = useSandbox();
// The pause between messages (a new node's default) takes virtual time.
useVirtualTime();

type NodeType = 'messaging' | 'currencyRate';

async function run(
	type: NodeType,
	parameters: INodeParameters,
	items: IDataObject[],
	settings: Partial<INode> = {},
) {
	return await runWorkflow(
		singleNodeWorkflow(type, parameters, items, settings),
		sandboxCredential(sandbox.url),
	);
}

const sendText = (extra: INodeParameters = {}): INodeParameters => ({
	resource: 'message',
	operation: 'sendText',
	phone: '={{ $json.phone }}',
	text: '={{ "hello " + $json.n }}',
	...extra,
});

/**
 * One way to make each operation fail, with an input item that succeeds beside it where the
 * operation has per-item parameters. Every operation of both nodes must have a case: a new
 * operation fails the test below until it is added here.
 */
interface FailureCase {
	type: NodeType;
	parameters: INodeParameters;
	items: IDataObject[];
	faults?: FaultRule[];
	/** Output items expected on success / error outputs with "Continue (using error output)". */
	ok: number;
	failed: number;
}

const rpcError = (path: string, rpcMethod?: string): FaultRule[] => [
	{
		kind: 'rpcError',
		message: 'Service temporarily disabled',
		match: { path, ...(rpcMethod ? { rpcMethod } : {}) },
		times: 5,
	},
];

const CASES: Record<string, FailureCase> = {
	'message/sendText': {
		type: 'messaging',
		parameters: sendText(),
		items: [
			{ phone: PHONE, n: 0 },
			{ phone: 'call me', n: 1 },
		],
		ok: 1,
		failed: 1,
	},
	'message/sendFile': {
		type: 'messaging',
		parameters: {
			resource: 'message',
			operation: 'sendFile',
			phone: PHONE,
			fileSource: 'base64',
			fileContent: '={{ $json.file }}',
		},
		items: [{ file: 'aGVsbG8=' }, { file: 'not base64!' }],
		ok: 1,
		failed: 1,
	},
	'message/sendAndWait': {
		type: 'messaging',
		parameters: {
			resource: 'message',
			operation: 'sendAndWait',
			phone: '={{ $json.phone }}',
			message: 'Approve?',
		},
		items: [{ phone: 'call me' }],
		ok: 0,
		failed: 1,
	},
	'message/waitForSendWindow': {
		type: 'messaging',
		parameters: {
			resource: 'message',
			operation: 'waitForSendWindow',
			start: '={{ $json.start }}',
			end: '24:00',
			timeZone: 'UTC',
		},
		items: [{ start: '00:00' }, { start: '9am' }],
		ok: 1,
		failed: 1,
	},
	'number/check': {
		type: 'messaging',
		parameters: { resource: 'number', operation: 'check', phone: '={{ $json.phone }}' },
		items: [{ phone: PHONE }, { phone: 'x' }],
		ok: 1,
		failed: 1,
	},
	'account/check': {
		type: 'messaging',
		parameters: {
			resource: 'account',
			operation: 'check',
			whatsappNumber: PHONE,
			webhookUrl: '={{ $json.url }}',
		},
		items: [{ url: 'https://example.com/hook' }, { url: 'not a url' }],
		ok: 1,
		failed: 1,
	},
	'account/update': {
		type: 'messaging',
		parameters: {
			resource: 'account',
			operation: 'update',
			whatsappNumber: PHONE,
			webhookUrl: '={{ $json.url }}',
		},
		items: [{ url: 'https://example.com/hook' }, { url: '' }],
		ok: 1,
		failed: 1,
	},
	'account/getLimit': {
		type: 'messaging',
		parameters: { resource: 'account', operation: 'getLimit' },
		items: [{}, {}],
		faults: rpcError('/api/wa/2.0/limit'),
		ok: 0,
		failed: 1,
	},
	'auth/getToken': {
		type: 'messaging',
		parameters: { resource: 'auth', operation: 'getToken' },
		items: [{}, {}],
		faults: rpcError('/api/wa/authentication'),
		ok: 0,
		failed: 1,
	},
	'auth/verifyToken': {
		type: 'messaging',
		parameters: { resource: 'auth', operation: 'verifyToken' },
		items: [{}],
		faults: rpcError('/api/wa/protected'),
		ok: 0,
		failed: 1,
	},
	'session/getQrCode': {
		type: 'messaging',
		parameters: { resource: 'session', operation: 'getQrCode' },
		items: [{}],
		faults: rpcError('/api/wa/2.0/qr'),
		ok: 0,
		failed: 1,
	},
	'session/getStatus': {
		type: 'messaging',
		parameters: { resource: 'session', operation: 'getStatus' },
		items: [{}],
		faults: rpcError('/api/wa/2.0/get', 'status'),
		ok: 0,
		failed: 1,
	},
	'session/login': {
		type: 'messaging',
		parameters: { resource: 'session', operation: 'login' },
		items: [{}],
		faults: rpcError('/api/wa/2.0/get', 'login'),
		ok: 0,
		failed: 1,
	},
	'rate/get': {
		type: 'currencyRate',
		parameters: {
			resource: 'rate',
			operation: 'get',
			provider: '={{ $json.provider }}',
			currencies: 'USD',
			output: 'allInOne',
		},
		items: [{ provider: 'bca' }, { provider: 'nobank' }],
		ok: 1,
		failed: 1,
	},
	'rate/convert': {
		type: 'currencyRate',
		parameters: {
			resource: 'rate',
			operation: 'convert',
			provider: 'bca',
			amount: 100,
			fromCurrency: 'USD',
			toCurrency: '={{ $json.to }}',
		},
		items: [{ to: 'IDR' }, { to: 'XYZ' }],
		ok: 1,
		failed: 1,
	},
	'rate-auth/getToken': {
		type: 'currencyRate',
		parameters: { resource: 'auth', operation: 'getToken' },
		items: [{}],
		faults: rpcError('/api/rate/1.0/authentication'),
		ok: 0,
		failed: 1,
	},
};

const caseKey = (type: NodeType, resource: string, operation: string) =>
	type === 'currencyRate' && resource === 'auth'
		? `rate-auth/${operation}`
		: `${resource}/${operation}`;

describe('On Error, for every operation of every node', () => {
	it('has a failure case for every operation', () => {
		const keys = [
			...messagingResources.flatMap((r) =>
				r.operations.map((o) => caseKey('messaging', r.option.value, o.value)),
			),
			...rateResources.flatMap((r) =>
				r.operations.map((o) => caseKey('currencyRate', r.option.value, o.value)),
			),
		];
		expect(keys.filter((key) => !(key in CASES))).toEqual([]);
	});

	describe.each(Object.entries(CASES))('%s', (_name, c) => {
		it('"Continue (using error output)": failures on the error output with the input\'s fields, the rest on the success output', async () => {
			if (c.faults) sandbox.addFaults(c.faults);
			const result = await run(c.type, c.parameters, c.items, { onError: 'continueErrorOutput' });
			expect(result.error).toBeUndefined();
			const success = result.output('Node', 0);
			const errors = result.output('Node', 1);
			expect(success).toHaveLength(c.ok);
			expect(errors).toHaveLength(c.failed);
			for (const item of success) expect(item.json.error).toBeUndefined();
			for (const item of errors) {
				expect(typeof item.json.error).toBe('string');
				expect(item.json.details).toMatchObject({
					kind: expect.any(String),
					deliveryUnknown: false,
				});
				// n8n merges the failed input item's fields in.
				const paired = [item.pairedItem].flat()[0] as { item: number };
				expect(item.json).toMatchObject(c.items[paired.item]);
			}
		});

		it('"Continue": failures in place on the one output', async () => {
			if (c.faults) sandbox.addFaults(c.faults);
			const result = await run(c.type, c.parameters, c.items, { onError: 'continueRegularOutput' });
			expect(result.error).toBeUndefined();
			const output = result.output('Node', 0);
			expect(output.filter((item) => item.json.error)).toHaveLength(c.failed);
			expect(output.filter((item) => !item.json.error)).toHaveLength(c.ok);
		});

		it('"Stop Workflow": the run stops with the error naming the item', async () => {
			if (c.faults) sandbox.addFaults(c.faults);
			const result = await run(c.type, c.parameters, c.items);
			expect(result.error?.message).toMatch(/\[item \d+\]$/);
			expect(result.error?.description).toMatch(/Failed: item \d+\./);
			expect(result.error?.description).toContain('Settings → On Error');
			expect(result.error?.description).not.toMatch(/Continue On Fail|Failed items/);
		});
	});
});

describe('Retry On Fail', () => {
	const retry = { retryOnFail: true, maxTries: 3, waitBetweenTries: 10 };
	const threeItems = [
		{ phone: '+62 812-8877-6710', n: 0 },
		{ phone: '+62 812-8877-6711', n: 1 },
		{ phone: 'call me', n: 2 },
	];

	it('bad input in the third item, On Error → Stop: nothing is sent, on any try', async () => {
		const result = await run('messaging', sendText(), threeItems, retry);
		expect(result.error?.message).toBe(
			'Field "Phone Number" is not a phone number: "call me" [item 2]',
		);
		expect(result.error?.description).toContain(
			"Nothing was sent: every item's input is checked before the first request.",
		);
		expect(sandbox.ledger()).toEqual([]);
		expect(apiRequests(sandbox)).toEqual([]);
	});

	it.each(['continueRegularOutput', 'continueErrorOutput'] as const)(
		'bad input in the first item, On Error → %s: n8n tries the node again, every good message is sent exactly once',
		async (onError) => {
			const items = [threeItems[2], threeItems[0], threeItems[1]];
			const result = await run('messaging', sendText(), items, { ...retry, onError });
			expect(result.error).toBeUndefined();
			expect(sandbox.ledger().map((entry) => entry.phone)).toEqual([
				'6281288776710',
				'6281288776711',
			]);
			// n8n's second try: what the first sent is skipped, and says which try sent it.
			const all = [...result.output('Node', 0), ...result.output('Node', 1)];
			const skipped = all.filter((item) => item.json.skipped === true);
			expect(skipped).toHaveLength(2);
			for (const item of skipped)
				expect(item.json.reason).toMatch(
					/^Not sent again: the same message was sent by an earlier try of this execution \(Retry On Fail\) at /,
				);
			expect(all.filter((item) => item.json.error)).toHaveLength(1);
		},
	);

	it("a refused third send, On Error → Stop: n8n's second try sends only the third; each message once", async () => {
		const items = threeItems.map((item, n) => ({ ...item, phone: `+62 812-8877-671${n}` }));
		sandbox.addFaults([
			{
				kind: 'sentFalse',
				message: 'Try again later',
				match: { rpcMethod: 'sendMessage' },
				skip: 2,
				times: 1,
			},
		]);
		const result = await run('messaging', sendText(), items, retry);
		expect(result.error).toBeUndefined();
		const ledger = sandbox.ledger();
		expect(ledger.map((entry) => entry.phone)).toEqual([
			'6281288776710',
			'6281288776711',
			'6281288776712',
		]);
		const output = result.output('Node').map((item) => item.json);
		expect(output.map((json) => json.skipped ?? false)).toEqual([true, true, false]);
		expect(output[2]).toMatchObject({ sent: true, id: ledger[2].id });
		// Two tries: the three sends of the first, then the third alone.
		expect(
			apiRequests(sandbox).filter(
				(r) => r.params && (r.params as IDataObject).method === 'sendMessage',
			),
		).toHaveLength(4);
	});

	it("a send that may have been delivered is never sent again by n8n's tries, and says so", async () => {
		const items = threeItems.map((item, n) => ({ ...item, phone: `+62 812-8877-671${n}` }));
		sandbox.addFaults([
			{ kind: 'dropAfterProcessing', match: { rpcMethod: 'sendMessage' }, skip: 1, times: 1 },
		]);
		const result = await run('messaging', sendText(), items, retry);
		// Item 1 reached the gateway once; the next try skips it, in its place, and sends item 2.
		expect(sandbox.ledger().map((entry) => entry.phone)).toEqual([
			'6281288776710',
			'6281288776711',
			'6281288776712',
		]);
		expect(result.output('Node')[1].json).toMatchObject({
			skipped: true,
			reason: expect.stringMatching(
				/may have been delivered by an earlier try of this execution \(Retry On Fail\)/,
			),
		});
		expect(
			apiRequests(sandbox).filter(
				(r) => r.params && (r.params as IDataObject).method === 'sendMessage',
			),
		).toHaveLength(3);
	});

	it("with Skip Repeats Within at 0, a try sends again what an earlier try sent (as n8n's own nodes do)", async () => {
		const items = threeItems.map((item, n) => ({ ...item, phone: `+62 812-8877-671${n}` }));
		sandbox.addFaults([
			{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, skip: 1, times: 1 },
		]);
		const result = await run(
			'messaging',
			sendText({ options: { skipRepeatsHours: 0 } }),
			items,
			retry,
		);
		expect(result.error).toBeUndefined();
		expect(sandbox.ledger().map((entry) => entry.phone)).toEqual([
			'6281288776710',
			'6281288776710',
			'6281288776711',
			'6281288776712',
		]);
	});

	it("a persistent 502 on Number Check: n8n's 3 tries make 3 requests, not 3 × 4", async () => {
		sandbox.addFaults([{ kind: 'html502', match: { path: '/api/wa/2.0/check' }, times: 100 }]);
		const result = await run(
			'messaging',
			{ resource: 'number', operation: 'check', phone: PHONE },
			[{}],
			retry,
		);
		expect(result.error?.message).toMatch(/HTTP 502/);
		expect(apiRequests(sandbox).filter((r) => r.path === '/api/wa/2.0/check')).toHaveLength(3);
	});

	it('without Retry On Fail the transport still retries a read (1 + 3 retries)', async () => {
		sandbox.addFaults([{ kind: 'html502', match: { path: '/api/wa/2.0/check' }, times: 100 }]);
		const result = await run(
			'messaging',
			{ resource: 'number', operation: 'check', phone: PHONE },
			[{}],
		);
		expect(result.error?.message).toMatch(/HTTP 502/);
		expect(apiRequests(sandbox).filter((r) => r.path === '/api/wa/2.0/check')).toHaveLength(4);
	});
});

describe('Options per item', () => {
	it('Default Country mapped per item applies to its own item only', async () => {
		const items = [
			{ phone: '0812 8877 6713', cc: 'ID', n: 0 },
			{ phone: '(415) 555-2671', cc: 'US', n: 1 },
		];
		const result = await run(
			'messaging',
			sendText({ options: { defaultCountry: '={{ $json.cc }}' } }),
			items,
		);
		expect(result.error).toBeUndefined();
		expect(sandbox.ledger().map((entry) => entry.phone)).toEqual(['6281288776713', '14155552671']);
		expect(result.output('Node').map((item) => item.json.phone)).toEqual([
			'6281288776713',
			'14155552671',
		]);
	});

	it.each([
		[{ parallel: 100_000 }, 'Parallel Requests', '100000', 'a whole number from 1 to 50'],
		[{ parallel: 2.5 }, 'Parallel Requests', '2.5', 'a whole number from 1 to 50'],
		[{ skipRepeatsHours: -1 }, 'Skip Repeats Within (Hours)', '-1', 'a number from 0 to 720'],
		[{ maxWaitMinutes: '90' }, 'Max Wait (Minutes)', '"90"', 'a number from 0 to 60'],
		[
			{ accountCap: { cap: { messages: 0, per: 'minute' } } },
			'Account Cap → Messages',
			'0',
			'a whole number from 1 to 1000',
		],
	])(
		'an option out of its range, %j, is refused before any send, naming the field, the value and the range',
		async (options, field, value, range) => {
			const result = await run('messaging', sendText({ options }), [{ phone: PHONE, n: 0 }]);
			expect(result.error?.message).toBe(
				`Field "Options → ${field}" is ${value}, not ${range} [item 0]`,
			);
			expect(apiRequests(sandbox)).toEqual([]);
		},
	);

	it('Delay Between Messages with Max below Min is refused, not read as Min', async () => {
		const result = await run(
			'messaging',
			sendText({ options: { messageDelay: { range: { minSeconds: 5, maxSeconds: 2 } } } }),
			[{ phone: PHONE, n: 0 }],
		);
		expect(result.error?.message).toBe(
			'Field "Options → Delay Between Messages → Max" is 2, below Min (5) [item 0]',
		);
		expect(apiRequests(sandbox)).toEqual([]);
	});

	it('an option that applies to the whole run, differing per item, refuses the run before any send', async () => {
		const items = [
			{ phone: PHONE, p: 1, n: 0 },
			{ phone: PHONE, p: 4, n: 1 },
		];
		const result = await run(
			'messaging',
			sendText({ options: { parallel: '={{ $json.p }}' } }),
			items,
		);
		expect(result.error?.message).toBe(
			'Option "Parallel Requests" is 1 for item 0 but 4 for item 1: it applies to the whole run',
		);
		expect(apiRequests(sandbox)).toEqual([]);
	});

	// Mapped per item, each is refused before any request; the docs name it, so a user knows why.
	const runWide: Array<[string, NodeType, INodeParameters]> = [
		['Parallel Requests', 'messaging', sendText({ options: { parallel: '={{ $json.n + 1 }}' } })],
		[
			'Delay Between Requests',
			'messaging',
			{
				resource: 'number',
				operation: 'check',
				phone: '={{ $json.phone }}',
				options: { delayMs: '={{ $json.n }}' },
			},
		],
		[
			'Skip Repeats Within',
			'messaging',
			sendText({ options: { skipRepeatsHours: '={{ $json.n + 1 }}' } }),
		],
		[
			'Delay Between Messages',
			'messaging',
			sendText({
				options: { messageDelay: { range: { minSeconds: '={{ $json.n }}', maxSeconds: 5 } } },
			}),
		],
		[
			'Account Cap',
			'messaging',
			sendText({
				options: { accountCap: { cap: { messages: '={{ $json.n + 5 }}', per: 'minute' } } },
			}),
		],
		['Max Wait', 'messaging', sendText({ options: { maxWaitMinutes: '={{ $json.n + 1 }}' } })],
		[
			'Keep Rates For',
			'currencyRate',
			{
				resource: 'rate',
				operation: 'convert',
				provider: 'bca',
				amount: 10,
				fromCurrency: 'USD',
				toCurrency: 'IDR',
				options: { keepRatesMinutes: '={{ $json.n + 1 }}' },
			},
		],
	];
	const optionsPerItemDocs = readFileSync('docs/delivery-and-scale.md', 'utf8')
		.split('### Options per item')[1]
		.split('\n### ')[0]
		.replace(/\s+/g, ' ');

	it.each(runWide)(
		'%s mapped per item is refused before any request, and the docs list it as run-wide',
		async (name, type, parameters) => {
			const result = await run(type, parameters, [
				{ phone: PHONE, n: 0 },
				{ phone: PHONE, n: 1 },
			]);
			expect(result.error?.message).toMatch(
				new RegExp(
					`^Option "${name}( \\(\\w+\\))?" is .* for item 0 but .* for item 1: it applies to the whole run$`,
				),
			);
			expect(sandbox.requests().filter((r) => !r.path.endsWith('authentication'))).toEqual([]);
			expect(optionsPerItemDocs).toContain(`**${name}**`);
		},
	);
});

describe('operations without per-item parameters run once per run', () => {
	it.each([
		['messaging', { resource: 'auth', operation: 'getToken' }, '/api/wa/authentication'],
		['messaging', { resource: 'account', operation: 'getLimit' }, '/api/wa/2.0/limit'],
		['messaging', { resource: 'session', operation: 'getStatus' }, '/api/wa/2.0/get'],
		['messaging', { resource: 'session', operation: 'getQrCode' }, '/api/wa/2.0/qr'],
		['currencyRate', { resource: 'auth', operation: 'getToken' }, '/api/rate/1.0/authentication'],
	] as const)(
		'%s %j with 5 items: one request, one output item paired with all 5',
		async (type, parameters, path) => {
			const result = await run(type, parameters, [{}, {}, {}, {}, {}]);
			expect(result.error).toBeUndefined();
			const output: INodeExecutionData[] = result.output('Node');
			expect(output).toHaveLength(1);
			expect(output[0].pairedItem).toEqual([0, 1, 2, 3, 4].map((item) => ({ item })));
			expect(sandbox.requests().filter((r) => r.path === path)).toHaveLength(1);
		},
	);
});
