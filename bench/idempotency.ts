/**
 * What Skip Repeats Within costs per item: 1,000 Send Text items through n8n's engine with the
 * option on (8 h, the default) against the same run with it off (0), in one run,
 * against a sandbox in a child process:
 *
 * - **one process** (regular mode): the claims in this process's memory, n8n's processed-items
 *   store as n8n's database implementation behaves (test/harness/processedItems.ts: a row read and
 *   written whole, here in memory, so the database's own time is not in it);
 * - **queue mode**: the claims in a real redis-server the bench starts on loopback (one batched
 *   claim, one round trip per item just before its request, one settle), plus the same store.
 *
 * Also the run that finds all 1,000 already sent (a re-run: every item skipped, no request).
 * Rounds alternate the variants (a busy moment hits all alike); medians are printed, with the
 * cost per item in µs and the ratio on / off.
 *
 * Run: npx ts-node --transpile-only bench/idempotency.ts [items] [rounds]
 */
import '../test/harness/env';

import { performance } from 'perf_hooks';

import { startChildSandbox } from './sandbox-child';
import { sendOptions } from '../test/harness/sendOptions';

const ITEMS = Number(process.argv[2] ?? 1000);
const ROUNDS = Number(process.argv[3] ?? 5);
const PARALLELISM = [1, 8];

type Variant = 'off' | 'on' | 'repeat';

async function main(): Promise<void> {
	const { runWorkflow, sandboxCredential, singleNodeWorkflow } =
		await import('../test/harness/engine');
	const { processedItems } = await import('../test/harness/processedItems');
	const { startRedisServer } = await import('../test/harness/redisServer');
	const { MemoryTable } = await import('../nodes/shared/store');
	const { closeQueueRedis } = await import('../nodes/shared/store');
	const { sharedTokenCache } = await import('../nodes/shared/transport');

	const sandbox = await startChildSandbox();
	const redis = await startRedisServer();
	const credential = sandboxCredential(sandbox.url);
	let tag = 0;

	/** One run's node time (ms); `repeat` runs the same items twice and times the second. */
	const run = async (variant: Variant, parallel: number, items: number) => {
		await sandbox.reset();
		sharedTokenCache.clear();
		MemoryTable.forgetAll();
		processedItems.clear();
		await redis.cli('FLUSHALL');
		const list = Array.from({ length: items }, (_, i) => ({
			phone: '6281288776713',
			text: `Order ${i} is ready (${++tag})`,
		}));
		const workflow = singleNodeWorkflow(
			'messaging',
			{
				resource: 'message',
				operation: 'sendText',
				phone: '={{ $json.phone }}',
				text: '={{ $json.text }}',
				options: sendOptions({ parallel, skipRepeatsHours: variant === 'off' ? 0 : 8 }),
			},
			list,
			{ typeVersion: 1 },
		);
		if (variant === 'repeat') await runWorkflow(workflow, credential);
		const started = performance.now();
		const result = await runWorkflow(workflow, credential);
		const wall = performance.now() - started;
		if (result.error) throw result.error;
		const out = result.output('Node').map((item) => item.json);
		const expected = variant === 'repeat' ? 'skipped' : 'sent';
		if (out.filter((json) => json[expected] === true).length !== items)
			throw new Error(`${variant}: not every item ${expected}`);
		return result.run.data.resultData.runData.Node[0].executionTime || wall;
	};

	const modes: Array<{ name: string; enter(): void }> = [
		{
			name: 'one process (memory + store)',
			enter: () => {
				delete process.env.EXECUTIONS_MODE;
			},
		},
		{
			name: `queue mode (redis-server on :${redis.port} + store)`,
			enter: () => {
				process.env.EXECUTIONS_MODE = 'queue';
				process.env.QUEUE_BULL_REDIS_HOST = '127.0.0.1';
				process.env.QUEUE_BULL_REDIS_PORT = String(redis.port);
			},
		},
	];

	console.log(
		`Skip Repeats Within on (8 h, the default) / off (0): ${ITEMS} Send Text items, median of ${ROUNDS} rounds (node execution time)\n`,
	);
	const summary: string[] = [];
	try {
		for (const mode of modes) {
			mode.enter();
			// Warm-up: JIT, keep-alive connections, the Redis client and its scripts.
			for (const variant of ['off', 'on', 'repeat'] as Variant[]) await run(variant, 1, 200);
			for (const parallel of PARALLELISM) {
				const times: Record<Variant, number[]> = { off: [], on: [], repeat: [] };
				const order: Variant[] = ['off', 'on', 'repeat'];
				for (let round = 0; round < ROUNDS; round++) {
					for (const variant of order) times[variant].push(await run(variant, parallel, ITEMS));
					order.push(order.shift() as Variant);
				}
				const off = median(times.off);
				const on = median(times.on);
				const repeat = median(times.repeat);
				const perItem = ((on - off) / ITEMS) * 1000;
				console.log(`${mode.name}, parallel ${parallel}:`);
				console.log(`  off:        ${perMs(off)}  (rounds ${times.off.map(fixed).join(', ')})`);
				console.log(`  on (8 h):   ${perMs(on)}  (rounds ${times.on.map(fixed).join(', ')})`);
				console.log(
					`  re-run, all ${ITEMS} skipped: ${perMs(repeat)}  (rounds ${times.repeat.map(fixed).join(', ')})`,
				);
				console.log(
					`  cost of Skip Repeats Within: ${perItem.toFixed(0)} µs per item, on / off = ${(on / off).toFixed(2)}\n`,
				);
				summary.push(
					`${mode.name}, parallel ${parallel}: +${perItem.toFixed(0)} µs per item (${(on / off).toFixed(2)}x); a re-run skips ${ITEMS} in ${repeat.toFixed(0)} ms`,
				);
			}
		}
		console.log(summary.join('\n'));
	} finally {
		delete process.env.EXECUTIONS_MODE;
		await closeQueueRedis();
		await redis.close();
		await sandbox.close();
	}
}

function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.floor(sorted.length / 2)];
}

const fixed = (ms: number) => ms.toFixed(0);
const perMs = (ms: number) =>
	`${ms.toFixed(0)} ms, ${((ms / ITEMS) * 1000).toFixed(0)} µs per item`;

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
