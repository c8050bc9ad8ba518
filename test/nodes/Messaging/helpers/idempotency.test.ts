/**
 * Skip Repeats Within (nodes/Messaging/helpers/idempotency.ts, sendClaims.ts) through n8n's real
 * engine, with n8n's processed-items store as n8n's database implements it (races included:
 * test/harness/processedItems.ts), against the sandbox's ledger: nothing is sent twice across
 * executions (n8n's Retry, re-runs, two at once, a restart), and nothing that certainly was not
 * sent is held back. Version 2's pacing is on in every test (a send that waits its turn is never
 * sent twice or lost), on a virtual clock.
 */
import { randomBytes } from 'crypto';
import { mkdtempSync, rmSync } from 'fs';
import type { INode, INodeExecutionData, INodeParameters } from 'n8n-workflow';
import { tmpdir } from 'os';
import { join } from 'path';

import { clock } from '../../../../nodes/shared/clock';
import {
	runWorkflow,
	sandboxCredential,
	setBinaryDataMode,
	singleNodeWorkflow,
	storeBinary,
} from '../../../harness/engine';
import {
	PHONE,
	apiRequests,
	mappedSendText,
	orderItems,
	runMessaging,
} from '../../../harness/messagingNode';
import { processedItems } from '../../../harness/processedItems';
import { useSandbox } from '../../../harness/useSandbox';
import { sendOptions } from '../../../harness/sendOptions';
import { useVirtualTime } from '../../../harness/virtualTime';
import { MemoryTable } from '../../../../nodes/shared/store';
import { ApiClient } from '../../../../nodes/shared/transport';

const sandbox = useSandbox();
// Version 2's pacing (2–6 s between messages) stays on: its waits take virtual time.
const time = useVirtualTime();

const HOUR = 3_600_000;

const texts = () => sandbox.ledger().map((entry) => entry.text);
const sends = () => apiRequests(sandbox).filter((entry) => entry.params?.method === 'sendMessage');
const json = (items: INodeExecutionData[]) => items.map((item) => item.json);
/** How often each text is in the ledger. */
const counts = () =>
	texts().reduce<Record<string, number>>(
		(all, text = '') => ({ ...all, [text]: (all[text] ?? 0) + 1 }),
		{},
	);

describe("n8n's Retry of a stopped run", () => {
	const dropThird = () =>
		sandbox.addFaults([
			{ kind: 'dropAfterProcessing', match: { rpcMethod: 'sendMessage' }, skip: 2, times: 1 },
		]);

	it('sends what the first run did not, once: items sent or maybe delivered are skipped, in place and paired', async () => {
		dropThird();
		const first = await runMessaging(sandbox, mappedSendText(), orderItems(5));
		expect(first.error?.message).toContain('[item 2]');
		expect(first.error?.description).toContain(
			"Running the same input again within 8 h (n8n's Retry, a re-run) skips items 0–1 (sent), item 2 (may have been delivered: check the recipient) and sends items 3–4: Skip Repeats Within.",
		);
		expect(first.error?.description).not.toContain('repeats them');
		expect(texts()).toEqual(['Order 0 is ready', 'Order 1 is ready', 'Order 2 is ready']);

		const retry = await runMessaging(sandbox, mappedSendText(), orderItems(5));
		expect(retry.error).toBeUndefined();
		const out = retry.output('Node');
		expect(out.map((item) => item.pairedItem)).toEqual([0, 1, 2, 3, 4].map((item) => ({ item })));
		expect(json(out).map((item) => item.skipped ?? false)).toEqual([
			true,
			true,
			true,
			false,
			false,
		]);
		expect(json(out).map((item) => item.sent ?? false)).toEqual([false, false, false, true, true]);
		expect(out[0].json).toEqual({
			skipped: true,
			reason: expect.stringMatching(
				/^Not sent again: the same message was sent by execution test-\d+ at \d{4}-.*Z \(Skip Repeats Within 8 h\)$/,
			),
			phone: PHONE,
			idempotencyKey: expect.stringMatching(/^[0-9a-f]{32}$/),
			earlierSend: {
				executionId: expect.stringMatching(/^test-\d+$/),
				at: expect.any(String),
			},
			protection: 'database',
		});
		expect(out[2].json.reason).toContain('may have been delivered by execution');
		expect(Object.values(counts())).toEqual([1, 1, 1, 1, 1]);
	});

	it("after a restart (memory gone) n8n's store still knows what was sent", async () => {
		const first = await runMessaging(sandbox, mappedSendText(), orderItems(3));
		MemoryTable.forgetAll();
		const again = await runMessaging(sandbox, mappedSendText(), orderItems(3));
		expect(json(again.output('Node')).map((item) => item.skipped)).toEqual([true, true, true]);
		expect(again.output('Node')[0].json.reason).toMatch(
			/the same message was sent by an earlier execution, not before .*n8n's database holds it/,
		);
		// The store keeps no time, only the window's slot: the earliest the send can have been.
		expect(again.output('Node')[0].json.earlierSend).toEqual({
			at: null,
			executionId: null,
			notBefore: expect.stringMatching(/^\d{4}-.*Z$/),
		});
		// The start of the window slot before the send's: at most two windows before it.
		const sentAt = Date.parse(String(first.output('Node')[0].json.sentAt));
		const notBefore = Date.parse(
			String((again.output('Node')[0].json.earlierSend as { notBefore: string }).notBefore),
		);
		expect(notBefore).toBeLessThanOrEqual(sentAt);
		expect(sentAt - notBefore).toBeLessThan(2 * 8 * HOUR);
		expect(again.run.data.resultData.runData.Node[0].hints).toContainEqual(
			expect.objectContaining({
				type: 'warning',
				message: expect.stringMatching(
					/^Nothing was sent: all 3 messages are repeats of messages sent by an earlier execution, within 8 h .* so they were not sent again\./,
				),
			}),
		);
		expect(texts()).toHaveLength(3);
	});
});

describe('what a stopped run says a re-run does, and what the hints say', () => {
	const rerun = (what: string) =>
		`Running the same input again within 8 h (n8n's Retry, a re-run) ${what}: Skip Repeats Within.`;
	const hintsOf = (run: Awaited<ReturnType<typeof runMessaging>>) =>
		(run.run.data.resultData.runData.Node[0].hints ?? []).map((hint) => hint.message);
	/** The executions the skipped items name, in item order. */
	const earlierExecutions = (run: Awaited<ReturnType<typeof runMessaging>>) =>
		json(run.output('Node'))
			.filter((item) => item.skipped)
			.map((item) => (item.earlierSend as { executionId: string }).executionId);

	it('a last item that may have been delivered: the re-run sends nothing', async () => {
		sandbox.addFaults([{ kind: 'dropAfterProcessing', match: { rpcMethod: 'sendMessage' } }]);
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(1));
		expect(run.error?.description).toContain(
			rerun('skips item 0 (may have been delivered: check the recipient), and sends nothing'),
		);
	});

	it('a first item the gateway refused: the re-run skips nothing and sends every item', async () => {
		sandbox.addFaults([{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, times: 1 }]);
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(2));
		expect(run.error?.description).toContain(rerun('skips nothing and sends items 0–1'));
	});

	it('a re-run that stops: what it skipped as sent before is skipped again', async () => {
		await runMessaging(sandbox, mappedSendText(), orderItems(1));
		sandbox.addFaults([{ kind: 'dropAfterProcessing', match: { rpcMethod: 'sendMessage' } }]);
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(2));
		expect(run.error?.description).toContain(
			rerun(
				'skips item 0 (sent before), item 1 (may have been delivered: check the recipient), and sends nothing',
			),
		);
	});

	it('two messages whose claims cannot be given back: the warning counts them', async () => {
		sandbox.addFaults([
			{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, skip: 1, times: 2 },
		]);
		const running = runMessaging(sandbox, mappedSendText(), orderItems(3), {
			onError: 'continueRegularOutput',
		});
		while (sends().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
		processedItems.failing = [new Error('database is locked'), new Error('database is locked')];
		expect(hintsOf(await running)).toContain(
			'2 messages not sent in this run could not be given back: a Retry within 8 h skips them as if sent.',
		);
	});

	it('one message, a repeat: the hint speaks of it, not of all of them', async () => {
		await runMessaging(sandbox, mappedSendText(), orderItems(1));
		const again = await runMessaging(sandbox, mappedSendText(), orderItems(1));
		const [first] = earlierExecutions(again);
		expect(hintsOf(again)).toContain(
			`Nothing was sent: the message is a repeat of messages sent by execution ${first}, within 8 h (Options → Skip Repeats Within), so it was not sent again. Each item says when it was sent. To send again on purpose, give each event its own Idempotency Key or set Skip Repeats Within to 0.`,
		);
	});

	it('repeats of two executions: the hint names both', async () => {
		await runMessaging(sandbox, mappedSendText(), orderItems(1));
		await runMessaging(sandbox, mappedSendText(), orderItems(1, 1));
		const again = await runMessaging(sandbox, mappedSendText(), orderItems(3));
		const [first, second] = earlierExecutions(again);
		expect(first).not.toBe(second);
		expect(hintsOf(again)).toContain(
			`2 of 3 messages were not sent again: repeats of messages sent by executions ${first} and ${second}, within 8 h (Options → Skip Repeats Within). Each skipped item says when.`,
		);
	});

	it("Retry On Fail: the hint names the execution's earlier try, not another execution", async () => {
		sandbox.addFaults([
			{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, skip: 1, times: 1 },
		]);
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(2), {
			retryOnFail: true,
			maxTries: 2,
			waitBetweenTries: 0,
		});
		expect(hintsOf(run)).toContain(
			'1 of 2 messages were not sent again: repeats of an earlier try of this execution (Retry On Fail), within 8 h (Options → Skip Repeats Within). Each skipped item says when.',
		);
	});
});

/** A schedule's firing split into items: every item comes from the one event. */
async function runFromOneEvent(parameters: INodeParameters, items: object[]) {
	const workflow = singleNodeWorkflow('messaging', parameters, items as INodeExecutionData[]);
	workflow.nodes[0].type = 'n8n-nodes-base.scheduleTrigger';
	return await runWorkflow(workflow, sandboxCredential(sandbox.url));
}

describe('two executions at once', () => {
	it("n8n's store alone would let both send (it reads, then writes): the race the claim closes", async () => {
		const context = { workflow: { id: 'wf', active: true }, node: { id: 'n' } as INode };
		const options = { mode: 'entries' as const };
		await processedItems.checkProcessedAndRecord(['seed'], 'node', context, options);
		const both = await Promise.all([
			processedItems.checkProcessedAndRecord(['order-7'], 'node', context, options),
			processedItems.checkProcessedAndRecord(['order-7'], 'node', context, options),
		]);
		expect(both.map((answer) => answer.new)).toEqual([['order-7'], ['order-7']]);
	});

	it('send each message once (five items started twice at once: five messages, five skipped)', async () => {
		// An earlier message makes the store's row exist: two calls then race on it (not on its insert).
		await runMessaging(sandbox, mappedSendText(), [{ phone: PHONE, text: 'Earlier' }]);
		sandbox.reset();
		processedItems.queryDelayMs = 5;
		const runs = await Promise.all([
			runMessaging(sandbox, mappedSendText(), orderItems(5)),
			runMessaging(sandbox, mappedSendText(), orderItems(5)),
		]);
		expect(runs.map((run) => run.error)).toEqual([undefined, undefined]);
		expect(Object.values(counts())).toEqual([1, 1, 1, 1, 1]);
		const outputs = runs.flatMap((run) => json(run.output('Node')));
		expect(outputs.filter((item) => item.sent === true)).toHaveLength(5);
		const skipped = outputs.filter((item) => item.skipped === true);
		expect(skipped).toHaveLength(5);
		// Each skip names the other execution, however far it had got.
		for (const item of skipped) {
			expect(item.reason).toMatch(/by execution test-\d+/);
			expect((item.earlierSend as { executionId: string }).executionId).toMatch(/^test-\d+$/);
		}
	});
});

describe('what makes two messages the same', () => {
	it('a mapped Idempotency Key: one message per order, whatever the text; the repeat names the earlier item', async () => {
		const items = [
			{ phone: PHONE, text: 'Your order 41 shipped', orderId: 41 },
			{ phone: PHONE, text: 'Your order 41 has shipped!', orderId: 41 },
			{ phone: PHONE, text: 'Your order 42 shipped', orderId: 42 },
		];
		const options = { idempotencyKey: '={{ $json.orderId }}' };
		const run = await runMessaging(sandbox, mappedSendText(options), items);
		expect(json(run.output('Node')).map((item) => item.sent ?? item.skipped)).toEqual([
			true,
			true,
			true,
		]);
		expect(run.output('Node')[1].json).toMatchObject({
			skipped: true,
			reason: 'Not sent again: the same message as item 0 of this run (Skip Repeats Within 8 h)',
			earlierSend: { item: 0 },
		});
		const later = await runMessaging(sandbox, mappedSendText(options), [
			{ phone: PHONE, text: 'Order 41: shipped (resent)', orderId: 41 },
		]);
		expect(later.output('Node')[0].json.skipped).toBe(true);
		expect(texts()).toEqual(['Your order 41 shipped', 'Your order 42 shipped']);
	});

	it('an Idempotency Key that is the same for every item while the messages differ is refused, naming the field', async () => {
		// `order-{{ $json.orderId }}` over rows without that field: `order-undefined` for every item.
		const options = { idempotencyKey: '=order-{{ $json.orderId }}' };
		const items = [
			{ phone: PHONE, text: 'Your table is ready' },
			{ phone: PHONE, text: 'Your bill is ready' },
		];
		const run = await runMessaging(sandbox, mappedSendText(options), items);
		expect(run.error?.message).toMatch(
			/^Field "Options → Idempotency Key" is "order-(undefined)?" for every item, and item 0 sends another message to the same number: one key stands for one message, so this one would never be sent \[item 1\]$/,
		);
		expect(run.error?.description).toMatch(/an expression over a missing field/);
		expect(sends()).toEqual([]);
		// The same key for a broadcast (one message per person) is what a key is for.
		const broadcast = [PHONE, '+62 812-8877-6714'].map((phone) => ({ phone, text: 'Sale!' }));
		const sale = await runMessaging(
			sandbox,
			mappedSendText({ idempotencyKey: 'march-sale' }),
			broadcast,
		);
		expect(sale.error).toBeUndefined();
		expect(texts()).toEqual(['Sale!', 'Sale!']);
	});

	it('one event sent to many numbers reaches every number, with and without an Idempotency Key', async () => {
		const onCall = ['+62 812-8877-6713', '+62 812-8877-6714', '+62 812-8877-6715'];
		const alert = onCall.map((phone) => ({ phone, text: 'db1 is DOWN', orderId: 7 }));
		const run = await runMessaging(sandbox, mappedSendText(), alert);
		expect(json(run.output('Node')).map((item) => item.sent)).toEqual([true, true, true]);
		const keyed = await runMessaging(
			sandbox,
			mappedSendText({ idempotencyKey: '={{ $json.orderId }}' }),
			alert.map((item) => ({ ...item, text: 'Order 7 shipped' })),
		);
		expect(json(keyed.output('Node')).map((item) => item.sent)).toEqual([true, true, true]);
		expect(sandbox.ledger().map((entry) => entry.phone)).toEqual([
			'6281288776713',
			'6281288776714',
			'6281288776715',
			'6281288776713',
			'6281288776714',
			'6281288776715',
		]);
	});

	it('one event, two texts to one number: both are sent (two messages, not a repeat)', async () => {
		const parts = [
			{ phone: PHONE, text: 'Your order shipped.' },
			{ phone: PHONE, text: 'Track it at example.com/t/1' },
		];
		const run = await runFromOneEvent(mappedSendText(), parts);
		expect(json(run.output('Node')).map((item) => item.sent)).toEqual([true, true]);
		expect(texts()).toEqual(['Your order shipped.', 'Track it at example.com/t/1']);
	});

	it('an Idempotency Key shared by two equal rows skips the second, refusing nothing', async () => {
		const rows = [1, 2].map(() => ({ phone: PHONE, text: 'Order 7 shipped', orderId: 7 }));
		const run = await runMessaging(
			sandbox,
			mappedSendText({ idempotencyKey: '={{ $json.orderId }}' }),
			rows,
		);
		expect(run.error).toBeUndefined();
		expect(json(run.output('Node')).map((item) => item.sent ?? item.skipped)).toEqual([true, true]);
		expect(run.output('Node')[1].json.skipped).toBe(true);
		expect(texts()).toEqual(['Order 7 shipped']);
		// A repeat within the run is the user's own data twice: said quietly.
		expect(run.run.data.resultData.runData.Node[0].hints).toContainEqual({
			type: 'info',
			location: 'outputPane',
			message:
				'1 of 2 messages were not sent again: repeats of messages earlier in this run, within 8 h (Options → Skip Repeats Within). Each skipped item says when.',
		});
	});

	it('the same text to another number, or another text, is another message', async () => {
		await runMessaging(sandbox, mappedSendText(), orderItems(1));
		await runMessaging(sandbox, mappedSendText(), [
			{ phone: '+62 812-8877-6714', text: 'Order 0 is ready' },
			{ phone: PHONE, text: 'Order 0 is ready.' },
		]);
		expect(texts()).toHaveLength(3);
	});

	it('the execution hint warns of the repeats and names the execution that sent them', async () => {
		const first = await runMessaging(sandbox, mappedSendText(), orderItems(2));
		// Nothing repeated, nothing to say but the pause between messages.
		expect(
			first.run.data.resultData.runData.Node[0].hints?.map((hint) => hint.message.split(' ')[0]),
		).toEqual(['This']);
		const again = await runMessaging(sandbox, mappedSendText(), orderItems(3));
		expect(texts()).toHaveLength(3);
		// A repeat of another execution may be a new event whose data looks the same: a warning.
		expect(again.run.data.resultData.runData.Node[0].hints).toEqual(
			expect.arrayContaining([
				expect.objectContaining({
					type: 'warning',
					message: expect.stringMatching(
						/^2 of 3 messages were not sent again: repeats of messages sent by execution test-\d+, within 8 h \(Options → Skip Repeats Within\)\. Each skipped item says when\.$/,
					),
				}),
			]),
		);
	});

	it('0 turns it off in a version 2 node', async () => {
		await runMessaging(sandbox, mappedSendText({ skipRepeatsHours: 0 }), orderItems(2));
		await runMessaging(sandbox, mappedSendText({ skipRepeatsHours: 0 }), orderItems(2));
		expect(texts()).toHaveLength(4);
	});
});

describe('the window', () => {
	/** Runs at `at` (ms), with the node's clock set there. */
	const runAt = async (at: number, options: INodeParameters = {}) => {
		jest.spyOn(clock, 'now').mockReturnValue(at);
		return await runMessaging(sandbox, mappedSendText(options), orderItems(1));
	};
	// 01:00 UTC on a day: the 8-hour windows start at 00:00, 08:00 and 16:00.
	const start = Date.UTC(2026, 10, 23, 1);

	it('a repeat within 8 h is skipped; a daily message, 24 h later, is sent', async () => {
		await runAt(start);
		expect((await runAt(start + 8 * HOUR - 1)).output('Node')[0].json.skipped).toBe(true);
		expect((await runAt(start + 24 * HOUR)).output('Node')[0].json.sent).toBe(true);
		expect(texts()).toHaveLength(2);
	});

	it('after two windows a repeat is always sent; between one and two it may be (at least W, at most 2W)', async () => {
		await runAt(start, { skipRepeatsHours: 1 });
		// 2 h later: the claim of 01:xx covered 01:00–03:00.
		expect(
			(await runAt(start + 2 * HOUR, { skipRepeatsHours: 1 })).output('Node')[0].json.sent,
		).toBe(true);
		expect(texts()).toHaveLength(2);
	});

	it('after a restart the store keeps the same window', async () => {
		await runAt(start);
		MemoryTable.forgetAll();
		expect((await runAt(start + 7 * HOUR)).output('Node')[0].json.skipped).toBe(true);
		MemoryTable.forgetAll();
		expect((await runAt(start + 16 * HOUR)).output('Node')[0].json.sent).toBe(true);
	});
});

describe('a failure the package does not know', () => {
	afterEach(() => jest.restoreAllMocks());

	it('after the request (a fault of ours): the message may have left, so the next run skips it', async () => {
		const call = ApiClient.prototype.call;
		jest.spyOn(ApiClient.prototype, 'call').mockImplementationOnce(async function (
			this: ApiClient,
			...args
		) {
			await call.apply(this, args);
			throw new TypeError('a fault after the answer');
		});
		const first = await runMessaging(sandbox, mappedSendText(), orderItems(2), {
			onError: 'continueRegularOutput',
		});
		expect(json(first.output('Node')).map((item) => item.error ?? 'sent')).toEqual([
			expect.stringContaining('a fault after the answer'),
			'sent',
		]);
		const second = await runMessaging(sandbox, mappedSendText(), orderItems(2));
		expect(json(second.output('Node'))[0].reason).toContain('may have been delivered by execution');
		expect(Object.values(counts())).toEqual([1, 1]);
	});
});

describe('what certainly was not sent goes out later', () => {
	it('a send the gateway refused (sent: false) is sent by the next run; the others are not repeated', async () => {
		sandbox.addFaults([
			{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, skip: 1, times: 1 },
		]);
		const first = await runMessaging(sandbox, mappedSendText(), orderItems(3), {
			onError: 'continueRegularOutput',
		});
		expect(json(first.output('Node')).map((item) => (item.error ? 'error' : 'sent'))).toEqual([
			'sent',
			'error',
			'sent',
		]);
		const second = await runMessaging(sandbox, mappedSendText(), orderItems(3), {
			onError: 'continueRegularOutput',
		});
		expect(json(second.output('Node')).map((item) => (item.skipped ? 'skipped' : 'sent'))).toEqual([
			'skipped',
			'sent',
			'skipped',
		]);
		expect(Object.values(counts())).toEqual([1, 1, 1]);
	});

	it('after a stop, the Retry sends the refused item and those not started, and only them', async () => {
		sandbox.addFaults([
			{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, skip: 1, times: 1 },
		]);
		const first = await runMessaging(sandbox, mappedSendText(), orderItems(4));
		expect(first.error?.description).toContain(
			'skips item 0 (sent) and sends items 1–3: Skip Repeats Within.',
		);
		await runMessaging(sandbox, mappedSendText(), orderItems(4));
		expect(Object.values(counts())).toEqual([1, 1, 1, 1]);
	});

	it('a message not sent whose claim the store cannot give back: the run warns that a Retry skips it, and it does', async () => {
		sandbox.addFaults([
			{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, skip: 1, times: 1 },
		]);
		const running = runMessaging(sandbox, mappedSendText(), orderItems(2), {
			onError: 'continueRegularOutput',
		});
		// The record before the first send has been made; the store fails from here on.
		while (sends().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
		processedItems.failing = [new Error('database is locked'), new Error('database is locked')];
		const first = await running;
		expect(first.run.data.resultData.runData.Node[0].hints).toEqual(
			expect.arrayContaining([
				expect.objectContaining({
					type: 'warning',
					message:
						'1 message not sent in this run could not be given back: a Retry within 8 h skips it as if sent.',
				}),
			]),
		);
		MemoryTable.forgetAll();
		const retry = await runMessaging(sandbox, mappedSendText(), orderItems(2));
		expect(json(retry.output('Node')).map((item) => item.skipped)).toEqual([true, true]);
		expect(texts()).toEqual(['Order 0 is ready']);
	});

	it('with Continue (using error output): failures on the error output, skipped items on the success output in place', async () => {
		await runMessaging(sandbox, mappedSendText(), orderItems(2));
		sandbox.addFaults([{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, times: 1 }]);
		const run = await runWorkflow(
			singleNodeWorkflow('messaging', mappedSendText(), orderItems(4), {
				onError: 'continueErrorOutput',
			}),
			sandboxCredential(sandbox.url),
		);
		expect(
			run.output('Node', 0).map((item) => [item.pairedItem, item.json.skipped ?? item.json.sent]),
		).toEqual([
			[{ item: 0 }, true],
			[{ item: 1 }, true],
			[{ item: 3 }, true],
		]);
		expect(run.output('Node', 0)[2].json.sent).toBe(true);
		expect(run.output('Node', 1).map((item) => item.json.text)).toEqual(['Order 2 is ready']);
	});

	it('Retry On Fail still redoes only what failed, and the claims agree', async () => {
		sandbox.addFaults([
			{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, skip: 2, times: 1 },
		]);
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(3), {
			retryOnFail: true,
			maxTries: 2,
			waitBetweenTries: 0,
		});
		expect(run.error).toBeUndefined();
		// The second try: what the first sent is skipped, naming the try; the refused one is sent.
		expect(json(run.output('Node')).map((item) => item.sent ?? item.skipped)).toEqual([
			true,
			true,
			true,
		]);
		expect(json(run.output('Node'))[0].reason).toMatch(
			/by an earlier try of this execution \(Retry On Fail\)/,
		);
		expect(Object.values(counts())).toEqual([1, 1, 1]);
		const again = await runMessaging(sandbox, mappedSendText(), orderItems(3));
		expect(json(again.output('Node')).map((item) => item.skipped)).toEqual([true, true, true]);
	});
});

describe("when n8n's store cannot be used", () => {
	it('nothing is sent unprotected: every item is "not attempted", and a later run sends them', async () => {
		processedItems.failing = [new Error('database is locked'), new Error('database is locked')];
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(2), {
			onError: 'continueRegularOutput',
		});
		expect(json(run.output('Node'))).toEqual([
			{
				error: expect.stringMatching(
					/^Not sent: Skip Repeats Within could not check whether this message was already sent: n8n's processed-items store \(its database\) failed: database is locked \[item 0\]$/,
				),
				details: expect.objectContaining({
					kind: 'not-attempted',
					notAttempted: true,
					description: expect.stringMatching(
						/^Check that n8n reaches its database \(and, in queue mode, its Redis\), or set Skip Repeats Within to 0 to send without this check\. /,
					),
				}),
			},
			expect.objectContaining({ error: expect.stringContaining('[item 1]') }),
		]);
		expect(sends()).toEqual([]);
		await runMessaging(sandbox, mappedSendText(), orderItems(2));
		expect(texts()).toHaveLength(2);
	});

	it('a first failure is tried once more (two processes creating the row at once fail one insert)', async () => {
		processedItems.failing = [new Error('UNIQUE constraint failed')];
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(2));
		expect(run.error).toBeUndefined();
		expect(texts()).toHaveLength(2);
	});
});

describe('1,000 items', () => {
	it('one store call claims them all; a re-run after a restart sends nothing and makes one store call', async () => {
		const items = orderItems(1000);
		// Pacing off: 1,000 pauses of 2–6 s move the virtual clock about an hour, and a re-run in the
		// next window bucket rightly adds (and undoes) one more store call than this test counts.
		const options = sendOptions({ parallel: 8 });
		const first = await runMessaging(sandbox, mappedSendText(options), items);
		expect(first.error).toBeUndefined();
		expect(texts()).toHaveLength(1000);
		expect(processedItems.calls).toEqual([{ method: 'checkProcessedAndRecord', items: 2000 }]);

		MemoryTable.forgetAll();
		processedItems.calls.length = 0;
		const requestsBefore = sends().length;
		const again = await runMessaging(sandbox, mappedSendText(options), items);
		expect(json(again.output('Node')).every((item) => item.skipped === true)).toBe(true);
		expect(sends().length).toBe(requestsBefore);
		expect(processedItems.calls).toEqual([{ method: 'checkProcessedAndRecord', items: 2000 }]);
	});
});

describe('when memory knows the whole window (n8n has run two windows since it started)', () => {
	const options = sendOptions({ parallel: 8 });
	/** Two 8-hour windows after the restart every test starts with. */
	const later = () => clock.now() + 17 * HOUR;

	it('the send does not wait for the store, the end of the run does; a restart still skips it', async () => {
		time.set(later());
		processedItems.queryDelayMs = 300;
		const running = runMessaging(sandbox, mappedSendText(options), orderItems(1));
		while (texts().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
		// Sent while the store is still reading its row.
		expect(processedItems.calls).toEqual([{ method: 'checkProcessedAndRecord', items: 2 }]);
		expect(processedItems.stored()).toBe(0);
		const first = await running;
		expect(first.error).toBeUndefined();
		expect(processedItems.stored()).toBe(2);

		processedItems.queryDelayMs = 0;
		processedItems.calls.length = 0;
		const repeat = await runMessaging(sandbox, mappedSendText(options), orderItems(1));
		expect(repeat.output('Node')[0].json.skipped).toBe(true);
		expect(processedItems.calls).toEqual([]);

		MemoryTable.forgetAll();
		const afterRestart = await runMessaging(sandbox, mappedSendText(options), orderItems(1));
		expect(afterRestart.output('Node')[0].json.skipped).toBe(true);
		expect(texts()).toHaveLength(1);
	});

	it('two executions at once: both find nothing before their turn, and the claim taken first sends each message once', async () => {
		time.set(later());
		const runs = await Promise.all([
			runMessaging(sandbox, mappedSendText(), orderItems(3)),
			runMessaging(sandbox, mappedSendText(), orderItems(3)),
		]);
		expect(Object.values(counts())).toEqual([1, 1, 1]);
		const outputs = runs.flatMap((run) => json(run.output('Node')));
		expect(outputs.filter((item) => item.sent === true)).toHaveLength(3);
		const skipped = outputs.filter((item) => item.skipped === true);
		expect(skipped).toHaveLength(3);
		// Found at the claim, not in the store: the other run's send has its time.
		for (const item of skipped) {
			expect(item.reason).toMatch(/by execution test-\d+/);
			expect(item.earlierSend).toMatchObject({ at: expect.any(String) });
		}
	});

	it('what was not sent is removed from the store again, so a later run sends it', async () => {
		time.set(later());
		sandbox.addFaults([
			{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, skip: 1, times: 1 },
		]);
		const first = await runMessaging(sandbox, mappedSendText(options), orderItems(3), {
			onError: 'continueRegularOutput',
		});
		expect(json(first.output('Node')).map((item) => item.sent === true)).toEqual([
			true,
			false,
			true,
		]);
		expect(processedItems.stored()).toBe(4);
		MemoryTable.forgetAll();
		const retry = await runMessaging(sandbox, mappedSendText(options), orderItems(3));
		expect(json(retry.output('Node')).map((item) => item.sent === true)).toEqual([
			false,
			true,
			false,
		]);
		expect(Object.values(counts())).toEqual([1, 1, 1]);
	});

	it('a store that fails: the messages go out, and the run warns that a restart forgets them', async () => {
		time.set(later());
		processedItems.failing = [new Error('database is locked'), new Error('database is locked')];
		const run = await runMessaging(sandbox, mappedSendText(options), orderItems(2));
		expect(run.error).toBeUndefined();
		expect(texts()).toHaveLength(2);
		expect(run.run.data.resultData.runData.Node[0].hints).toEqual(
			expect.arrayContaining([
				expect.objectContaining({
					type: 'warning',
					message:
						"n8n's processed-items store could not record this run's messages (n8n's processed-items store (its database) failed: database is locked): Skip Repeats Within knows them only until n8n restarts.",
				}),
			]),
		);
		const repeat = await runMessaging(sandbox, mappedSendText(options), orderItems(2));
		expect(json(repeat.output('Node')).map((item) => item.skipped)).toEqual([true, true]);
	});
});

describe('Send File', () => {
	const pdf = Buffer.from('%PDF-1.7 the same invoice');
	it('the same file is the same message, from a binary field or as base64 text', async () => {
		await runMessaging(
			sandbox,
			{
				resource: 'message',
				operation: 'sendFile',
				phone: PHONE,
				fileSource: 'base64',
				fileContent: pdf.toString('base64'),
				fileFields: { fileName: 'invoice.pdf' },
			},
			[{}],
		);
		const again = await runMessaging(
			sandbox,
			{ resource: 'message', operation: 'sendFile', phone: PHONE, fileSource: 'binary' },
			[
				{
					json: {},
					binary: {
						data: {
							data: pdf.toString('base64'),
							mimeType: 'application/pdf',
							fileName: 'invoice.pdf',
						},
					},
				},
			],
		);
		expect(again.output('Node')[0].json.skipped).toBe(true);
		expect(sandbox.ledger()).toHaveLength(1);
	});

	it('the same file from a base64 text and from a file n8n keeps on disk is the same message', async () => {
		// Larger than one piece of the base64 digest: the pieces and the stream must hash alike.
		const report = randomBytes(300 * 1024);
		const storagePath = mkdtempSync(join(tmpdir(), 'messaging-repeats-'));
		try {
			await setBinaryDataMode('filesystem', storagePath);
			const binary = await storeBinary(report, { fileName: 'report.pdf' });
			expect(binary.id).toBeDefined();
			const fromText = await runMessaging(sandbox, {
				resource: 'message',
				operation: 'sendFile',
				phone: PHONE,
				fileSource: 'base64',
				fileContent: report.toString('base64'),
				fileFields: { fileName: 'report.pdf' },
			});
			expect(fromText.output('Node')[0].json.sent).toBe(true);
			const fromDisk = await runMessaging(
				sandbox,
				{ resource: 'message', operation: 'sendFile', phone: PHONE, fileSource: 'binary' },
				[{ json: {}, binary: { data: binary } }],
			);
			expect(fromDisk.output('Node')[0].json.skipped).toBe(true);
			expect(sandbox.ledger()).toHaveLength(1);
		} finally {
			await setBinaryDataMode('memory');
			rmSync(storagePath, { recursive: true, force: true });
		}
	});

	it('one event, two files to one number: both are sent', async () => {
		const files = ['%PDF-1.7 invoice 1', '%PDF-1.7 invoice 2'].map((text) => ({
			file: Buffer.from(text).toString('base64'),
		}));
		const run = await runFromOneEvent(
			{
				resource: 'message',
				operation: 'sendFile',
				phone: PHONE,
				fileSource: 'base64',
				fileContent: '={{ $json.file }}',
				fileFields: { fileName: 'invoice.pdf' },
			},
			files,
		);
		expect(json(run.output('Node')).map((item) => item.sent)).toEqual([true, true]);
		expect(sandbox.ledger()).toHaveLength(2);
	});

	const sendFromUrl = (fileUrl: string) => ({
		resource: 'message',
		operation: 'sendFile',
		phone: PHONE,
		fileSource: 'url',
		fileUrl,
	});
	const fromUrl = async (urls: string[]) =>
		await runMessaging(
			sandbox,
			sendFromUrl('={{ $json.url }}'),
			urls.map((url) => ({ url: `${sandbox.url}/files/${url}` })),
		);

	it('from a URL: another value of an ordinary query parameter is another file, whatever its name holds (assignment, passenger, keyword, authorId)', async () => {
		const queries = ['assignment=1001', 'assignment=1002', 'passenger=1', 'passenger=2'];
		queries.push('keyword=tax', 'keyword=rent', 'authorId=7', 'authorId=8');
		const run = await fromUrl(queries.map((query) => `homework.pdf?size=10&${query}`));
		expect(json(run.output('Node')).map((item) => item.skipped ?? false)).toEqual(
			queries.map(() => false),
		);
		expect(sandbox.ledger()).toHaveLength(8);
	});

	it('from a URL whose download breaks off mid-send: the gateway got nothing, so the next run tries it again', async () => {
		const broken = async () =>
			await runMessaging(
				sandbox,
				sendFromUrl(`${sandbox.url}/files/short.bin?size=1000&declare=5000`),
				[{}],
				{ onError: 'continueRegularOutput' },
			);
		for (const run of [await broken(), await broken()])
			expect(run.output('Node')[0].json).toEqual({
				error: expect.stringContaining('Could not download the file from'),
				details: expect.objectContaining({ deliveryUnknown: false }),
			});
		expect(sandbox.ledger()).toHaveLength(0);
	});

	it('from a URL: the same file under a link signed again (S3, Azure, a token) is the same message', async () => {
		const signed = (n: number) =>
			`q3.pdf?size=10&X-Amz-Date=2026010${n}T000000Z&X-Amz-Credential=AKIA%2F2026010${n}&X-Amz-Signature=${n}f00d&sig=${n}&se=2026-01-0${n}&token=${n}`;
		// Typed in, so both runs come from the same event (the same input item).
		const fromTypedUrl = async (url: string) =>
			await runMessaging(sandbox, sendFromUrl(`${sandbox.url}/files/${url}`), [{}]);
		await fromTypedUrl(signed(1));
		const again = await fromTypedUrl(signed(2));
		expect(again.output('Node')[0].json.skipped).toBe(true);
		expect(sandbox.ledger()).toHaveLength(1);
	});
});

describe("where n8n's processed-items store cannot hold the node's messages (n8n older than 1.64)", () => {
	it('claims live in this process only: a re-run is skipped with protection "process" and a warning; a restart forgets', async () => {
		const noStore = async () =>
			await runWorkflow(
				singleNodeWorkflow('messaging', mappedSendText(), orderItems(1)),
				sandboxCredential(sandbox.url),
				{ workflowId: null },
			);
		await noStore();
		const again = await noStore();
		expect(again.output('Node')[0].json).toMatchObject({ skipped: true, protection: 'process' });
		expect(again.run.data.resultData.runData.Node[0].hints).toEqual(
			expect.arrayContaining([
				expect.objectContaining({
					type: 'warning',
					message:
						'Skip Repeats Within holds until n8n restarts: this n8n has no processed-items store (n8n 1.66 or newer keeps it in its database).',
				}),
				expect.objectContaining({
					type: 'warning',
					message: expect.stringMatching(
						/^Nothing was sent: the message is a repeat of messages sent by execution \S+, within 8 h \(Options → Skip Repeats Within\)/,
					),
				}),
			]),
		);
		expect(processedItems.calls).toEqual([]);
		MemoryTable.forgetAll();
		await noStore();
		expect(texts()).toHaveLength(2);
	});
});
