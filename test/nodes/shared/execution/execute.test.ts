/**
 * The item loop (nodes/shared/execution/execute.ts) through the engine, with Send Text
 * as the operation: Continue On Fail keeps one output per input in order; Parallel Requests keeps
 * the output order and pairing and really overlaps requests; "Delay Between Requests" spaces the
 * starts of the sends; a failure without Continue On Fail starts no further item.
 */
import type { INodeParameters } from 'n8n-workflow';

import { sharedTokenCache } from '../../../../nodes/shared/transport';
import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../../../harness/engine';
import { PHONE, apiRequests, runMessaging } from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';

const sandbox = useSandbox();

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ text: `batch-${i}` }));
// The item loop on its own: no pause between messages (Delay Between Messages is pacing.test.ts's).
const NO_PAUSE = { messageDelay: { range: { minSeconds: 0, maxSeconds: 0 } } };
const sendText = (options: Record<string, number>) => ({
	resource: 'message',
	operation: 'sendText',
	phone: '6281288776713',
	text: '={{ $json.text }}',
	options: { ...NO_PAUSE, ...options },
});
const sendTextTo = (phone: string, extra: INodeParameters = {}): INodeParameters => ({
	resource: 'message',
	operation: 'sendText',
	phone,
	text: 'Hi',
	options: NO_PAUSE,
	...extra,
});

// Delay Between Requests is for the operations that do not send (a send has Delay Between Messages).
const checkNumbers = (options: Record<string, number>) => ({
	resource: 'number',
	operation: 'check',
	phone: '={{ $json.phone }}',
	options,
});
const numbers = (n: number) =>
	Array.from({ length: n }, (_, i) => ({ phone: `+62 812-8877-${6700 + i}` }));
const checkTimes = () =>
	sandbox
		.requests()
		.filter((entry) => entry.path === '/api/wa/2.0/check')
		.map((entry) => entry.receivedAt)
		.sort((a, b) => a - b);

test.each([1, 3])('Delay Between Requests spaces the requests (parallel %i)', async (parallel) => {
	const delayMs = 150;
	const run = await runWorkflow(
		singleNodeWorkflow('messaging', checkNumbers({ delayMs, parallel }), numbers(5)),
		sandboxCredential(sandbox.url),
	);
	expect(run.error).toBeUndefined();
	const times = checkTimes();
	expect(times).toHaveLength(5);
	// These are arrival times: on a loaded machine one request's way to the sandbox can take tens of
	// milliseconds longer than another's, hence the margin (without the delay the spread is near 0).
	expect(times[4] - times[0]).toBeGreaterThanOrEqual(4 * delayMs - 60);
	expect(run.output('Node')).toHaveLength(5);
});

test('without the delay, the same requests are not spaced out', async () => {
	// Compared with the delay in the same test: a loaded machine stretches both runs.
	const spreads: number[] = [];
	const runs: Array<Record<string, number>> = [{ parallel: 1 }, { parallel: 1, delayMs: 150 }];
	for (const options of runs) {
		const before = checkTimes().length;
		const run = await runWorkflow(
			singleNodeWorkflow('messaging', checkNumbers(options), numbers(5)),
			sandboxCredential(sandbox.url),
		);
		expect(run.error).toBeUndefined();
		const times = checkTimes().slice(before);
		spreads.push(times[4] - times[0]);
	}
	expect(spreads[0]).toBeLessThan(spreads[1] - 2 * 150);
});

test('without Continue On Fail, a failure starts no further item and the error lists what was sent', async () => {
	// times 2: sandbox.reset() dropped its tokens, so the first send may be refused as "Invalid
	// token" (which spends one firing) and repeated with a new token. Either way item 0 fails;
	// with parallel 1 nothing after it may be sent.
	sandbox.addFaults([
		{
			kind: 'sentFalse',
			message: 'Number is banned',
			match: { rpcMethod: 'sendMessage' },
			times: 2,
		},
	]);
	const run = await runWorkflow(
		singleNodeWorkflow('messaging', sendText({ parallel: 1 }), items(4)),
		sandboxCredential(sandbox.url),
	);
	expect(run.error?.description).toMatch(/not sent: "Number is banned"/);
	expect(run.error?.description).toMatch(/Failed: item 0\. Not started: items 1–3\./);
	expect(sandbox.ledger()).toHaveLength(0);
});

describe('Continue On Fail', () => {
	it('keeps one output per input, in order, with error items in place', async () => {
		// The first send is refused by the gateway; item 1 has a bad number; the others go out.
		sandbox.addFaults([
			{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, message: 'Failed to send message' },
		]);
		const phones = ['+62 812-8877-6710', 'not a number', '+62 812-8877-6712', '+62 812-8877-6713'];
		const run = await runMessaging(
			sandbox,
			sendTextTo('={{ $json.phone }}', { text: '={{ "Hello " + $json.phone }}' }),
			phones.map((phone) => ({ phone })),
			{
				continueOnFail: true,
			},
		);
		expect(run.error).toBeUndefined();
		const output = run.output('Node');
		expect(output.map((item) => item.pairedItem)).toEqual([
			{ item: 0 },
			{ item: 1 },
			{ item: 2 },
			{ item: 3 },
		]);
		expect(output[0].json).toEqual({
			error:
				'Send Message (POST /api/wa/2.0/post method=sendMessage) failed: the message was not sent: "Failed to send message" [item 0]',
			details: {
				item: 0,
				kind: 'rejected',
				httpStatus: 200,
				serverMessage: 'Failed to send message',
				deliveryUnknown: false,
			},
		});
		expect(output[1].json).toMatchObject({
			error: 'Field "Phone Number" is not a phone number: "not a number" [item 1]',
		});
		const ledger = sandbox.ledger();
		expect(ledger.map((entry) => [entry.phone, entry.text])).toEqual([
			['6281288776712', 'Hello +62 812-8877-6712'],
			['6281288776713', 'Hello +62 812-8877-6713'],
		]);
		expect(output[2].json).toMatchObject({ sent: true, phone: '6281288776712', id: ledger[0].id });
		expect(output[3].json).toMatchObject({ sent: true, phone: '6281288776713', id: ledger[1].id });
	});

	it('also with onError: continueRegularOutput', async () => {
		const run = await runMessaging(
			sandbox,
			{ resource: 'number', operation: 'check', phone: '={{ $json.phone }}' },
			[{ phone: 'x' }, { phone: PHONE }],
			{
				onError: 'continueRegularOutput',
			},
		);
		expect(run.output('Node').map((item) => Object.keys(item.json)[0])).toEqual(['error', 'phone']);
	});
});

describe('batching', () => {
	const phones = Array.from({ length: 12 }, (_, i) => `+62 812-8877-${String(6700 + i)}`);
	const items = phones.map((phone, i) => ({ phone, n: i }));
	const digits = (phone: string) => phone.replace(/\D/g, '');

	async function sendAll(parallel: number) {
		// The first send answers late: with parallel > 1 the next ones finish before it.
		sandbox.addFaults([
			{ kind: 'slow', match: { rpcMethod: 'sendMessage' }, delayMs: 400, times: 1 },
		]);
		return await runMessaging(
			sandbox,
			sendTextTo('={{ $json.phone }}', {
				text: `={{ "item " + $json.n + " (parallel ${parallel})" }}`,
				options: { ...NO_PAUSE, parallel },
			}),
			items,
		);
	}

	it.each([1, 4])(
		'parallel %i: output order and pairedItem follow the input; one token for the run',
		async (parallel) => {
			const run = await sendAll(parallel);
			expect(run.error).toBeUndefined();
			const output = run.output('Node');
			expect(output.map((item) => item.pairedItem)).toEqual(items.map((_, i) => ({ item: i })));
			expect(output.map((item) => item.json.phone)).toEqual(phones.map(digits));
			const idByPhone = new Map(sandbox.ledger().map((entry) => [entry.phone, entry.id]));
			expect(output.map((item) => item.json.id)).toEqual(
				phones.map((phone) => idByPhone.get(digits(phone))),
			);
			expect(sandbox.ledger().find((entry) => entry.phone === digits(phones[5]))?.text).toBe(
				`item 5 (parallel ${parallel})`,
			);

			// One token request; every send carried that same token.
			expect(sandbox.stats().tokensIssued.wa).toBe(1);
			const bearers = new Set(apiRequests(sandbox).map((entry) => entry.authorization));
			expect(bearers.size).toBe(1);
		},
	);

	it('parallel 4 really overlaps requests; parallel 1 never does', async () => {
		// The log is written when an answer goes out, `seq` when a request comes in: an answer
		// logged before one that came in earlier proves two requests were in flight together.
		const overlapped = () => {
			const seqs = sandbox
				.requests()
				.filter((entry) => entry.path === '/api/wa/2.0/post')
				.map((entry) => entry.seq);
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
		sandbox.addFaults([
			{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, message: 'Message limit reached' },
		]);
		const run = await runMessaging(
			sandbox,
			sendTextTo('={{ $json.phone }}', { options: { parallel: 3 } }),
			items,
		);
		expect(run.error?.message).toContain('"Message limit reached" [item 0]');
		expect(run.error?.description).toMatch(/Failed: item 0\./);
		expect(sandbox.ledger().length).toBeLessThan(items.length);
	});
});

describe('the check phase', () => {
	it('gives way to other work during a long check: n8n and other executions are not blocked', async () => {
		// 2,000 mapped items with Skip Repeats Within on: every item is read and keyed before any send.
		const many = Array.from({ length: 2_000 }, (_, i) => ({ text: `check-${i}` }));
		const ticks: number[] = [];
		const ticker = setInterval(() => ticks.push(Date.now()), 1);
		let nodeStartedAt = 0;
		const run = await runWorkflow(
			singleNodeWorkflow('messaging', sendText({}), many, { typeVersion: 1 }),
			sandboxCredential(sandbox.url),
			{
				onNodeExecuteBefore: (name) => {
					if (name === 'Node') nodeStartedAt = Date.now();
				},
			},
		);
		clearInterval(ticker);
		expect(run.error).toBeUndefined();
		expect(sandbox.ledger()).toHaveLength(2_000);
		// Between the node's start and its first request the check runs: timers still fire in it,
		// with no gap near the length of the whole check.
		const firstRequestAt = Math.min(...sandbox.requests().map((entry) => entry.receivedAt));
		const during = [nodeStartedAt, ...ticks.filter((at) => at > nodeStartedAt), firstRequestAt];
		const window = during.filter((at) => at <= firstRequestAt);
		const longestGap = Math.max(...window.slice(1).map((at, i) => at - window[i]));
		expect(longestGap).toBeLessThan((firstRequestAt - nodeStartedAt) / 3);
	});
});
