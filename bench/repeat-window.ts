/**
 * Does a send cost more when Skip Repeats Within's window already holds many messages? Send Text
 * through n8n's engine against a sandbox in a child process, after 0, 2,000 and 20,000 other
 * messages were sent by the same node within the window, as a broadcast (one run of 200 items, one
 * at a time: µs per item) and as a chatbot (runs of one item: the median run, and the median time
 * from its start to the gateway's answer, when the reply is sent); the ratio is against
 * the empty window, measured in the same run, rounds alternating.
 *
 * - **one process**, memory knowing the window (n8n has run two windows since it started): the
 *   claims in memory; n8n's processed-items store (test/harness/processedItems.ts, a row read and
 *   written whole) told alongside the sends, the run's end waiting for it;
 * - **one process, just restarted**: memory empty, so every run asks the store first: what a send
 *   costs in the two windows after a restart;
 * - **queue mode**: the claims in a real redis-server on loopback.
 *
 * Run: npm run bench:window [rounds]
 */
import '../test/harness/env';

import { subscribe } from 'diagnostics_channel';
import { performance } from 'perf_hooks';

import { startChildSandbox } from './sandbox-child';
import { sendOptions } from '../test/harness/sendOptions';

const ROUNDS = Number(process.argv[2] ?? 3);
const MEASURED = 200;
const CHATBOT_RUNS = 50;
const SHAPES = ['broadcast', 'chatbot', 'reply'] as const;
type Shape = (typeof SHAPES)[number];
const SHAPE_NAMES: Record<Shape, string> = {
	broadcast: `one run of ${MEASURED} (µs per item)`,
	chatbot: `${CHATBOT_RUNS} runs of one (median run)`,
	reply: `${CHATBOT_RUNS} runs of one (median time to the gateway's answer)`,
};
const FILLS = [0, 2_000, 20_000];
const HOUR = 3_600_000;

async function main(): Promise<void> {
	const { runWorkflow, sandboxCredential, singleNodeWorkflow } =
		await import('../test/harness/engine');
	const { processedItems } = await import('../test/harness/processedItems');
	const { startRedisServer } = await import('../test/harness/redisServer');
	const { MemoryTable, closeQueueRedis } = await import('../nodes/shared/store');
	const { clock } = await import('../nodes/shared/clock');

	const sandbox = await startChildSandbox({ blockLimit: 1_000_000 });
	const redis = await startRedisServer();
	const credential = sandboxCredential(sandbox.url);
	const realNow = clock.now.bind(clock);
	let shift = 0;
	clock.now = () => realNow() + shift;
	let tag = 0;
	// When the gateway's answer to the last request arrived: the message is sent.
	let answeredAt = 0;
	subscribe('undici:request:headers', () => {
		answeredAt = performance.now();
	});

	const send = async (items: number, parallel: number) => {
		const round = ++tag;
		const workflow = singleNodeWorkflow(
			'messaging',
			{
				resource: 'message',
				operation: 'sendText',
				phone: '={{ $json.phone }}',
				text: '={{ $json.text }}',
				options: sendOptions({ parallel, skipRepeatsHours: 8 }),
			},
			Array.from({ length: items }, (_, i) => ({
				phone: '6281288776713',
				text: `Order ${i} is ready (${round})`,
			})),
			{ typeVersion: 1 },
		);
		const started = performance.now();
		const result = await runWorkflow(workflow, credential);
		const wall = performance.now() - started;
		if (result.error) throw result.error;
		if (!result.output('Node').every((item) => item.json.sent === true))
			throw new Error('not every item sent');
		return result.run.data.resultData.runData.Node[0].executionTime || wall;
	};

	/** µs per send of MEASURED sends after `fill` others in the window: one run, or one per send. */
	const measure = async (fill: number, restart: boolean, shape: Shape) => {
		await sandbox.reset();
		MemoryTable.forgetAll();
		processedItems.clear();
		await redis.cli('FLUSHALL');
		// Two windows on: memory now knows every send of the window.
		if (!restart) shift += 17 * HOUR;
		if (fill) await send(fill, 8);
		if (restart) MemoryTable.forgetAll();
		if (shape === 'broadcast') return ((await send(MEASURED, 1)) / MEASURED) * 1000;
		const times: number[] = [];
		for (let i = 0; i < CHATBOT_RUNS; i++) {
			const started = performance.now();
			const run = await send(1, 1);
			times.push(shape === 'chatbot' ? run : answeredAt - started);
		}
		return median(times) * 1000;
	};

	const modes = [
		{ name: 'one process, memory knowing the window', queue: false, restart: false },
		{ name: 'one process, just restarted (store asked)', queue: false, restart: true },
		{ name: `queue mode (redis-server on :${redis.port})`, queue: true, restart: false },
	].flatMap((mode) =>
		SHAPES.map((shape) => ({ ...mode, shape, name: `${mode.name}, ${SHAPE_NAMES[shape]}` })),
	);
	console.log(
		`Send cost by messages already in the window: ${MEASURED} Send Text items, one at a time, median of ${ROUNDS} rounds (node execution time)\n`,
	);
	const summary: string[] = [];
	try {
		for (const mode of modes) {
			if (mode.queue) {
				process.env.EXECUTIONS_MODE = 'queue';
				process.env.QUEUE_BULL_REDIS_HOST = '127.0.0.1';
				process.env.QUEUE_BULL_REDIS_PORT = String(redis.port);
			} else delete process.env.EXECUTIONS_MODE;
			await measure(0, mode.restart, mode.shape); // warm-up
			const times = new Map<number, number[]>(FILLS.map((fill) => [fill, []]));
			const order = [...FILLS];
			for (let round = 0; round < ROUNDS; round++) {
				for (const fill of order)
					times.get(fill)!.push(await measure(fill, mode.restart, mode.shape));
				order.push(order.shift()!);
			}
			const empty = median(times.get(0)!);
			console.log(`${mode.name}:`);
			for (const fill of FILLS) {
				const cost = median(times.get(fill)!);
				console.log(
					`  ${String(fill).padStart(6)} in the window: ${cost.toFixed(0)} µs per send, ${(cost / empty).toFixed(2)}x empty (rounds ${times
						.get(fill)!
						.map((t) => t.toFixed(0))
						.join(', ')})`,
				);
			}
			const full = median(times.get(FILLS[FILLS.length - 1])!);
			summary.push(
				`${mode.name}: ${FILLS[FILLS.length - 1]} in the window ÷ empty = ${(full / empty).toFixed(2)}`,
			);
			console.log('');
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

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
