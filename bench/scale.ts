/**
 * `npm run bench:scale`: cost that grows with the work. One execution of 1,000, 10,000 and 100,000
 * Send Text items (`{{ $json.phone }}` / `{{ $json.text }}`) through n8n's engine against a
 * sandbox in a child process, Skip Repeats Within off (0) and on (8 h, the default), pacing off.
 * Prints for each size:
 *   - time per item (the node's executionTime / items; 1,000 and 10,000: median of several runs),
 *     and its ratio to the 1,000-item figure (goal: within 10 % at 100,000);
 *   - the process's retained memory per item: V8's heap after a forced GC with the run's result
 *     still held (as n8n holds it until the execution is saved), minus the heap before the run;
 *   - n8n's share of it: the same workflow with a stand-in in place of the Messaging node (a
 *     `test.items` node emitting items of Send Text's output shape), measured the same way;
 *   - the package's own = the two's difference (goal: at most 1 KB per item), and what stays after
 *     the result is released (the package's tables: claims, retry memory; bounded, see below).
 *
 * Run: npm run bench:scale [-- --sizes 1000,10000,100000 --parallel 1]
 * (node --expose-gc: the measurements need `global.gc`).
 */
import '../test/harness/env';

import type { IDataObject } from 'n8n-workflow';

import { startChildSandbox } from './sandbox-child';
import { pacingNote, sendOptions } from '../test/harness/sendOptions';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string) => {
	const at = args.indexOf(`--${name}`);
	return at >= 0 ? args[at + 1] : fallback;
};
const SIZES = arg('sizes', '1000,10000,100000').split(',').map(Number);
const PARALLEL = Number(arg('parallel', '1'));
const TIME_GOAL = 0.1;
const MEMORY_GOAL_BYTES = 1024;

const gc = (globalThis as { gc?: () => void }).gc;

/** The heap after a full collection (twice: weak maps and finalizers settle on the second). */
function heapAfterGc(): number {
	gc?.();
	gc?.();
	return process.memoryUsage().heapUsed;
}

function sendItems(count: number, tag: string): IDataObject[] {
	return Array.from({ length: count }, (_, i) => ({
		phone: `62812${String(10_000_000 + i)}`,
		text: `Order ${i} is ready for pick-up (${tag})`,
	}));
}

async function main(): Promise<void> {
	if (!gc) throw new Error('Run with node --expose-gc (npm run bench:scale does)');
	const { runWorkflow, sandboxCredential, singleNodeWorkflow } =
		await import('../test/harness/engine');
	const { processedItems } = await import('../test/harness/processedItems');
	const { MemoryTable } = await import('../nodes/shared/store');
	const { sharedTokenCache } = await import('../nodes/shared/transport');

	const sandbox = await startChildSandbox({ blockLimit: 10_000_000 });
	const credential = sandboxCredential(sandbox.url);
	let runs = 0;

	const sendWorkflow = (count: number, skipRepeats: boolean) =>
		singleNodeWorkflow(
			'messaging',
			{
				resource: 'message',
				operation: 'sendText',
				phone: '={{ $json.phone }}',
				text: '={{ $json.text }}',
				options: sendOptions(
					skipRepeats ? { parallel: PARALLEL } : { parallel: PARALLEL, skipRepeatsHours: 0 },
				),
			},
			sendItems(count, `run ${++runs}`),
			{ typeVersion: 1 },
		);

	/** Send Text's output for item i, in the shape a real run gives (taken from a small run). */
	let outputShape: IDataObject | undefined;
	const standInWorkflow = (count: number) => {
		const template = JSON.stringify(outputShape);
		const workflow = singleNodeWorkflow('messaging', {}, sendItems(count, `run ${++runs}`));
		const outputs = Array.from({ length: count }, (_, i) => {
			const json = JSON.parse(template) as IDataObject;
			json.phone = `62812${String(10_000_000 + i)}`;
			json.id = `${String(json.id).slice(0, -8)}${String(10_000_000 + i)}`;
			return json;
		});
		const node = workflow.nodes[2];
		workflow.nodes[2] = {
			...node,
			type: 'test.items',
			typeVersion: 1,
			parameters: { items: JSON.stringify(outputs) },
			credentials: undefined,
		};
		return workflow;
	};

	const reset = async () => {
		await sandbox.reset();
		sharedTokenCache.clear();
		MemoryTable.forgetAll();
		processedItems.clear();
	};

	/** One measured run: time per item, retained bytes per item with the result held, and after. */
	const measure = async (workflow: ReturnType<typeof sendWorkflow>, count: number) => {
		await reset();
		const before = heapAfterGc();
		let run: Awaited<ReturnType<typeof runWorkflow>> | undefined = await runWorkflow(
			workflow,
			credential,
		);
		if (run.error) throw run.error;
		const nodeMs = run.run.data.resultData.runData.Node[0].executionTime;
		const held = heapAfterGc() - before;
		const out = run.output('Node');
		if (out.length !== count) throw new Error(`${out.length} of ${count} items came out`);
		if (workflow.nodes[2].type !== 'test.items') {
			const sent = out.filter((item) => item.json.sent === true).length;
			if (sent !== count) throw new Error(`${sent} of ${count} sent`);
			outputShape ??= structuredClone(out[0].json);
		}
		out.length = 0;
		run = undefined;
		const after = heapAfterGc() - before;
		return { usPerItem: (nodeMs / count) * 1000, heldPerItem: held / count, after: after / count };
	};

	console.log(
		`bench:scale: one execution of N Send Text items (mapped fields, parallel ${PARALLEL}), sandbox in a child process; ${pacingNote()}`,
	);
	console.log(
		'retained = heap after a forced GC with the run result held, minus before; n8n = the same workflow with a stand-in node emitting the same output items\n',
	);
	try {
		// Warm-up: JIT, keep-alive connections; and the output shape for the stand-in.
		for (const skip of [false, true]) await measure(sendWorkflow(500, skip), 500);
		console.log(
			`| Skip Repeats | items | µs per item | vs ${SIZES[0].toLocaleString('en')} | retained per item | n8n share | package own | kept after release |`,
		);
		console.log('|---|---|---|---|---|---|---|---|');
		const verdicts: string[] = [];
		for (const skip of [false, true]) {
			let base = 0;
			for (const size of SIZES) {
				const repeats = size <= 1000 ? 5 : size <= 10_000 ? 3 : 1;
				const sends = [];
				const standIns = [];
				for (let r = 0; r < repeats; r++) {
					sends.push(await measure(sendWorkflow(size, skip), size));
					standIns.push(await measure(standInWorkflow(size), size));
				}
				const us = median(sends.map((s) => s.usPerItem));
				const held = median(sends.map((s) => s.heldPerItem));
				const n8n = median(standIns.map((s) => s.heldPerItem));
				const kept = median(sends.map((s) => s.after));
				if (size === SIZES[0]) base = us;
				const ratio = us / base;
				const own = held - n8n;
				console.log(
					`| ${skip ? 'on (8 h, the default)' : 'off (0)'} | ${size.toLocaleString('en')} | ${us.toFixed(0)} | ${ratio.toFixed(2)} | ${bytes(held)} | ${bytes(n8n)} | ${bytes(own)} | ${bytes(kept)} |`,
				);
				if (size !== SIZES[0])
					verdicts.push(
						`Skip Repeats ${skip ? 'on' : 'off'}, ${size.toLocaleString('en')} items: time per item ${ratio.toFixed(2)}x the ${SIZES[0].toLocaleString('en')}-item figure (goal <= ${1 + TIME_GOAL}: ${ratio <= 1 + TIME_GOAL ? 'met' : 'NOT met'}); package's own memory ${bytes(own)} per item (goal <= 1 KB: ${own <= MEMORY_GOAL_BYTES ? 'met' : 'NOT met'})`,
					);
			}
		}
		console.log(`\n${verdicts.join('\n')}`);
	} finally {
		await sandbox.close();
	}
}

function bytes(value: number): string {
	return Math.abs(value) >= 1024 ? `${(value / 1024).toFixed(2)} KB` : `${value.toFixed(0)} B`;
}

function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.floor(sorted.length / 2)];
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
