/**
 * Skip Repeats Within in queue mode: the claims in n8n's queue Redis (a redis-server of this
 * file's own, test/harness/redisServer.ts), through n8n's real engine against the sandbox. What a
 * run leaves in Redis, a run that died (its claims taken over or kept), another run taking a claim
 * over while this one waits, and an unreachable Redis (nothing sent unprotected).
 */
import type { INodeExecutionData } from 'n8n-workflow';

import {
	apiRequests,
	mappedSendText,
	orderItems,
	runMessaging,
} from '../../../harness/messagingNode';
import { processedItems } from '../../../harness/processedItems';
import { useQueueMode } from '../../../harness/redisServer';
import { sendOptions } from '../../../harness/sendOptions';
import { useSandbox } from '../../../harness/useSandbox';
import { useVirtualTime } from '../../../harness/virtualTime';
import {
	MemoryTable,
	QueueRedisState,
	SharedStateUnavailable,
} from '../../../../nodes/shared/store';

const sandbox = useSandbox();
const queue = useQueueMode();
// Version 2's pacing (2–6 s between messages) stays on: its waits take virtual time.
useVirtualTime();

const PREFIX = 'n8n-nodes-messaging-rate:{test-workflow:3}';
const json = (items: INodeExecutionData[]) => items.map((item) => item.json);
const sends = () => apiRequests(sandbox).filter((entry) => entry.params?.method === 'sendMessage');

/** The idempotency keys of `orderItems(count)`, read from the skipped items of a second run. */
async function keysOf(count: number): Promise<string[]> {
	await runMessaging(sandbox, mappedSendText(), orderItems(count));
	const again = await runMessaging(sandbox, mappedSendText(), orderItems(count));
	const keys = json(again.output('Node')).map((item) => String(item.idempotencyKey));
	await queue.redis().cli('FLUSHALL');
	processedItems.clear();
	sandbox.reset();
	return keys;
}

it("keeps each claim in n8n's queue Redis under the package's own prefix, until the window's end", async () => {
	const run = await runMessaging(sandbox, mappedSendText(), orderItems(3));
	expect(run.error).toBeUndefined();
	const keys = (await queue.redis().cli('--scan', '--pattern', '*')).split('\n').sort();
	expect(keys).toHaveLength(3);
	expect(keys.every((key) => new RegExp(`^${escape(PREFIX)}:send:[0-9a-f]{32}$`).test(key))).toBe(
		true,
	);
	const record = await queue.redis().cli('GET', keys[0]);
	expect(record).toMatch(/^s\|test-\d+\.[0-9a-f]{12}\|test-\d+\|\d{13}$/);
	const ttl = Number(await queue.redis().cli('PTTL', keys[0]));
	// Until the end of the next 8-hour bucket: more than 8 h, at most 16 h.
	expect(ttl).toBeGreaterThan(8 * 3_600_000 - 60_000);
	expect(ttl).toBeLessThanOrEqual(16 * 3_600_000);
});

it('another process (another worker) finds what this one sent, whatever its memory holds', async () => {
	await runMessaging(sandbox, mappedSendText(), orderItems(2));
	// A worker has its own memory and, here, no shared database store: Redis alone holds the claims.
	MemoryTable.forgetAll();
	processedItems.clear();
	const again = await runMessaging(sandbox, mappedSendText(), orderItems(2));
	expect(json(again.output('Node'))).toEqual([
		expect.objectContaining({
			skipped: true,
			reason: expect.stringMatching(
				/^Not sent again: the same message was sent by execution test-\d+ at /,
			),
			protection: 'redis',
		}),
		expect.objectContaining({ skipped: true }),
	]);
	expect(sandbox.ledger()).toHaveLength(2);
});

it('a run that died while sending: its claim is kept, as may have been delivered; the rest is sent', async () => {
	const [sending] = await keysOf(2);
	const at = Date.now() - 60_000;
	// Run "dead.1" of execution 77 was sending item 0 when its worker died.
	await queue.redis().cli('SET', `${PREFIX}:send:${sending}`, `d|dead.1|77|${at}`, 'PX', '3600000');
	const run = await runMessaging(sandbox, mappedSendText(), orderItems(2));
	const out = json(run.output('Node'));
	expect(out[0]).toMatchObject({
		skipped: true,
		reason: expect.stringContaining(
			`the same message was being sent by execution 77 at ${new Date(at).toISOString()}, with no answer yet: it may have been delivered`,
		),
		earlierSend: { executionId: '77', at: new Date(at).toISOString() },
	});
	expect(out[1]).toMatchObject({ sent: true });
	expect(sandbox.ledger().map((entry) => entry.text)).toEqual(['Order 1 is ready']);
});

it('sends only what it still holds: a claim taken over while the item waited for its turn is not sent', async () => {
	const keys = await keysOf(3);
	const redis = queue.redis();
	// Real time here: the other run takes item 2 over while this one waits 400 ms for its turn.
	jest.restoreAllMocks();
	const running = runMessaging(
		sandbox,
		mappedSendText({ messageDelay: { range: { minSeconds: 0.4, maxSeconds: 0.4 } } }),
		orderItems(3),
	);
	// Once item 0 is sent, another run takes item 2 over.
	while (sandbox.ledger().length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
	await redis.cli(
		'SET',
		`${PREFIX}:send:${keys[2]}`,
		`d|other.1|79|${Date.now()}`,
		'PX',
		'3600000',
	);
	const out = json((await running).output('Node'));
	expect(out.map((item) => item.sent ?? item.skipped)).toEqual([true, true, true]);
	expect(out[2]).toMatchObject({ skipped: true, reason: expect.stringContaining('execution 79') });
	expect(sandbox.ledger()).toHaveLength(2);
	// It is left to its holder: this run did not give it back.
	expect(await redis.cli('GET', `${PREFIX}:send:${keys[2]}`)).toMatch(/^d\|other\.1\|79\|/);
});

it('a stopped run gives back what it did not send: only the sent claim is left, and the Retry sends the rest, once', async () => {
	sandbox.addFaults([
		{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, skip: 1, times: 1 },
	]);
	const stopped = await runMessaging(sandbox, mappedSendText(), orderItems(4));
	expect(stopped.error?.description).toContain('skips item 0 (sent) and sends items 1–3');
	const records = await Promise.all(
		(await queue.redis().cli('--scan', '--pattern', `${PREFIX}:send:*`))
			.split('\n')
			.map(async (key) => await queue.redis().cli('GET', key)),
	);
	// Only item 0's claim is left, as sent.
	expect(records.map((record) => record[0])).toEqual(['s']);
	await runMessaging(sandbox, mappedSendText(), orderItems(4));
	expect(sandbox.ledger().map((entry) => entry.text)).toEqual([
		'Order 0 is ready',
		'Order 1 is ready',
		'Order 2 is ready',
		'Order 3 is ready',
	]);
});

it('with Redis unreachable nothing is sent: every item "not attempted", naming Redis; sent once it is back', async () => {
	const redis = queue.redis();
	await redis.stop();
	try {
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(2), {
			onError: 'continueRegularOutput',
		});
		expect(json(run.output('Node'))).toEqual([
			{
				error: expect.stringMatching(
					new RegExp(
						`^Not sent: Skip Repeats Within could not check whether this message was already sent: n8n's queue Redis \\(127\\.0\\.0\\.1:${redis.port}, database 0\\) did not answer: connection refused by 127\\.0\\.0\\.1:${redis.port} \\[item 0\\]$`,
					),
				),
				details: expect.objectContaining({ notAttempted: true, deliveryUnknown: false }),
			},
			expect.objectContaining({ error: expect.stringContaining('[item 1]') }),
		]);
		expect(sends()).toEqual([]);
	} finally {
		await redis.start();
	}
	const later = await runMessaging(sandbox, mappedSendText(), orderItems(2));
	expect(json(later.output('Node')).map((item) => item.sent)).toEqual([true, true]);
});

it('2,000 messages, read from Redis in batches: each sent once, and the same run again sends none', async () => {
	// A multiple of the batch: no empty batch is read after the last.
	const items = orderItems(2000);
	const options = sendOptions({ parallel: 8 });
	const first = await runMessaging(sandbox, mappedSendText(options), items);
	expect(first.error).toBeUndefined();
	expect(sandbox.ledger()).toHaveLength(2000);
	MemoryTable.forgetAll();
	const again = await runMessaging(sandbox, mappedSendText(options), items);
	expect(json(again.output('Node')).filter((item) => item.skipped === true)).toHaveLength(2000);
	expect(sandbox.ledger()).toHaveLength(2000);
});

describe('Redis failing at one step of a send', () => {
	const SETTLE = 'messagingSettleSend';
	const TAKE = 'messagingTakeSend';
	/** Redis refuses the script `name` from now on; every other command goes through. */
	const failScript = (name: string) => {
		const run = QueueRedisState.prototype.run;
		jest.spyOn(QueueRedisState.prototype, 'run').mockImplementation(async function (
			this: QueueRedisState,
			script,
			keys,
			args,
		) {
			if (script.name === name) throw new SharedStateUnavailable(`${this.where} did not answer`);
			return await run.call(this, script, keys, args);
		});
	};

	it('at the claim: that item is not sent, unprotected or otherwise', async () => {
		failScript(TAKE);
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(2), {
			onError: 'continueRegularOutput',
		});
		expect(json(run.output('Node'))).toEqual(
			[0, 1].map((item) =>
				expect.objectContaining({
					error: expect.stringMatching(
						new RegExp(`^Not sent: Skip Repeats Within could not check .* \\[item ${item}\\]$`),
					),
				}),
			),
		);
		expect(sends()).toEqual([]);
	});

	it('giving back a message the gateway refused: the run warns that a Retry skips it', async () => {
		sandbox.addFaults([{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, times: 1 }]);
		failScript(SETTLE);
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(3), {
			onError: 'continueRegularOutput',
		});
		expect(json(run.output('Node')).map((item) => item.sent ?? false)).toEqual([false, true, true]);
		const hints = run.run.data.resultData.runData.Node[0].hints ?? [];
		// One warning, for the refused message only: the sent ones keep their claims either way.
		expect(hints.filter((hint) => hint.message.includes('could not be given back'))).toEqual([
			expect.objectContaining({
				type: 'warning',
				message:
					'1 message not sent in this run could not be given back: a Retry within 8 h skips it as if sent.',
			}),
		]);
		jest.restoreAllMocks();
		const retry = await runMessaging(sandbox, mappedSendText(), orderItems(3));
		expect(json(retry.output('Node')).map((item) => item.skipped)).toEqual([true, true, true]);
	});
});

function escape(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
