/**
 * 2,000 Send Text items through n8n's engine (the Messaging node, its transport, its token cache) against two bare undici loops sending the same requests with the
 * same parallelism, all against the same sandbox, in one run: one with undici's `request` (what a
 * bare client usually writes; the goal is set against it) and one with its `dispatch` and a
 * minimal handler (the transport's own path: the cheapest the same HTTP calls get in undici, so
 * the limit). Prints per variant and parallelism:
 *   - items per second of each, the ratio engine / bare `request` next to its goal (>= 0.8
 *     typed-in and with `{{ $json.* }}` mappings, at parallel 1 and 8), and
 *     the ratio engine / bare `dispatch`;
 *   - token requests the engine run made (goal: 1);
 *   - for mapped fields: plain `{{ $json.x }}` mappings against `{{ ($json.x) }}`, both evaluated
 *     by n8n, as a ratio.
 * Skip Repeats Within is off (0) in every variant but `mapped, skip repeats on` (8 h, the default;
 * claims in this process's memory and the processed-items store of test/harness/processedItems.ts):
 * the two are reported separately. Pacing is off (test/harness/sendOptions.ts).
 *
 * The sandbox runs in a child process, so its CPU (parsing, answering) is not spent on this
 * process's event loop, where it would slow whichever side happened to be running. Both sides
 * are warmed up first (JIT, keep-alive connections), then run alternately; the median is used.
 *
 * Run: npx ts-node --transpile-only bench/send-throughput.ts [items] [rounds]
 */
import '../test/harness/env';

import { performance } from 'perf_hooks';
import { Agent, request } from 'undici';

import { startChildSandbox, type ChildSandbox } from './sandbox-child';
import { pacingNote, sendOptions } from '../test/harness/sendOptions';

const ITEMS = Number(process.argv[2] ?? 2000);
const ROUNDS = Number(process.argv[3] ?? 5);
const PARALLELISM = [1, 8];
const SECRET = 'demo-secret';
const VERSION = '16.0.1.3';

/** Numbers as a user's sheet would hold them: pasted with spaces and dashes; `tag` makes every run's texts new. */
function items(count: number, tag = ''): Array<{ phone: string; text: string }> {
	return Array.from({ length: count }, (_, i) => ({
		phone: `+62 812-${String(1000 + (i % 9000)).padStart(4, '0')}-${String(1000 + i).slice(-4)}`,
		text: `Order ${i} is ready for pick-up${tag}`,
	}));
}

type Item = { phone: string; text: string };

/** The answer a bare loop reads from a send. */
type SendAnswer = { result?: { message?: { sent?: boolean } } };

/** How a bare loop makes one POST: undici's `request`, or its `dispatch` with a minimal handler. */
type Post = (
	agent: Agent,
	url: URL,
	headers: Record<string, string>,
	body: string,
) => Promise<SendAnswer>;

const BARE_LOOPS: Record<'request' | 'dispatch', Post> = {
	/** What a bare client usually writes: `request` and `body.json()`. */
	request: async (agent, url, headers, body) => {
		const response = await request(url, { method: 'POST', headers, body, dispatcher: agent });
		return (await response.body.json()) as SendAnswer;
	},
	/**
	 * The least the same HTTP call can cost in undici: `dispatch` with a handler that collects the
	 * answer's chunks and parses them (the transport's own path, without its checks and limits).
	 */
	dispatch: async (agent, url, headers, body) =>
		await new Promise<SendAnswer>((resolve, reject) => {
			const chunks: Buffer[] = [];
			agent.dispatch(
				{ origin: url.origin, path: url.pathname, method: 'POST', headers, body },
				{
					// Its presence selects undici's current handler API (without it, the legacy one).
					onRequestStart: () => undefined,
					onResponseData: (_controller, chunk) => void chunks.push(chunk),
					onResponseEnd: () =>
						resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as SendAnswer),
					onResponseError: (_controller, error) => reject(error),
				},
			);
		}),
};

/** The baseline: the same requests with undici and nothing else (digits already normalised). */
async function bareLoop(
	sandbox: ChildSandbox,
	list: Item[],
	parallel: number,
	agent: Agent,
	post: Post,
): Promise<number> {
	const started = performance.now();
	const tokenResponse = await request(`${sandbox.url}/api/wa/authentication`, {
		method: 'GET',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ params: { client_id: 'demo-client', client_secret: SECRET } }),
		dispatcher: agent,
	});
	const token = ((await tokenResponse.body.json()) as { result: { token: string } }).result.token;
	const phones = list.map((item) => item.phone.replace(/\D/g, ''));
	const url = new URL(`${sandbox.url}/api/wa/2.0/post`);
	let next = 0;
	const worker = async () => {
		while (next < list.length) {
			const i = next++;
			const body = JSON.stringify({
				params: {
					method: 'sendMessage',
					client_secret: SECRET,
					version: VERSION,
					phone: phones[i],
					body: list[i].text,
				},
			});
			const headers = {
				'content-type': 'application/json',
				'authorization': `Bearer ${token}`,
				'content-length': String(Buffer.byteLength(body)),
			};
			const answer = await post(agent, url, headers, body);
			if (answer.result?.message?.sent !== true) throw new Error(`bare loop: item ${i} not sent`);
		}
	};
	await Promise.all(Array.from({ length: parallel }, worker));
	return performance.now() - started;
}

/**
 * How the 1000 items reach the node's parameters:
 * - `mapped`: Phone Number `{{ $json.phone }}` and Text `{{ $json.text }}`, as a real workflow
 *   does; the node's parameter reader reads these plain paths straight from the item;
 * - `evaluated`: `{{ ($json.phone) }}` and `{{ ($json.text) }}`, the same values through n8n's
 *   expression evaluation (not a plain path), two expressions per item: what every mapping cost
 *   before the reader;
 * - `fixed`: the same phone and text typed into the node, so the time is the node's own
 *   (parameters, phone parsing, transport) and the engine's per-item bookkeeping;
 * - `mapped, skip repeats on`: `mapped` with Skip Repeats Within at its default (8 h),
 *   every run's texts new (a repeat would be skipped, not sent).
 */
type Variant = 'fixed' | 'mapped' | 'mapped, skip repeats on' | 'evaluated';
const VARIANTS: Variant[] = ['fixed', 'mapped', 'mapped, skip repeats on', 'evaluated'];

/** The goals for engine / bare undici (none where none is set). */
const GOALS: Partial<Record<Variant, Record<number, number>>> = {
	fixed: { 1: 0.8, 8: 0.8 },
	mapped: { 1: 0.8, 8: 0.8 },
};

async function main(): Promise<void> {
	const { runWorkflow, sandboxCredential, singleNodeWorkflow } =
		await import('../test/harness/engine');
	const { sharedTokenCache } = await import('../nodes/shared/transport');
	const { processedItems } = await import('../test/harness/processedItems');
	const { MemoryTable } = await import('../nodes/shared/store');
	let runs = 0;

	const sandbox = await startChildSandbox();
	const agent = new Agent({ keepAliveTimeout: 10_000 });
	const credential = sandboxCredential(sandbox.url);

	const inputs = (variant: Variant, count: number): Item[] => {
		const list = items(count, variant === 'mapped, skip repeats on' ? ` (${++runs})` : '');
		return variant === 'fixed' ? list.map(() => list[0]) : list;
	};

	/** Wall time of the whole workflow, and the node's own time as the engine records it. */
	const engineRun = async (variant: Variant, list: Item[], parallel: number) => {
		await sandbox.reset();
		// A run as a fresh n8n process would do it: no token cached yet.
		sharedTokenCache.clear();
		MemoryTable.forgetAll();
		processedItems.clear();
		const fields =
			variant === 'mapped' || variant === 'mapped, skip repeats on'
				? { phone: '={{ $json.phone }}', text: '={{ $json.text }}' }
				: variant === 'evaluated'
					? { phone: '={{ ($json.phone) }}', text: '={{ ($json.text) }}' }
					: { phone: list[0].phone, text: list[0].text };
		const workflow = singleNodeWorkflow(
			'messaging',
			{
				resource: 'message',
				operation: 'sendText',
				...fields,
				options: sendOptions(
					variant === 'mapped, skip repeats on' ? { parallel } : { parallel, skipRepeatsHours: 0 },
				),
			},
			list,
			{ typeVersion: 1 },
		);
		const started = performance.now();
		const run = await runWorkflow(workflow, credential);
		const workflowMs = performance.now() - started;
		if (run.error) throw run.error;
		const sent = run.output('Node').filter((item) => item.json.sent === true).length;
		if (sent !== list.length) throw new Error(`engine: ${sent} of ${list.length} sent`);
		const nodeMs = run.run.data.resultData.runData.Node[0].executionTime;
		const stats = await sandbox.stats();
		return { nodeMs, workflowMs, tokenRequests: stats.tokensIssued.wa };
	};
	const bareRun = async (list: Item[], parallel: number, post: Post) => {
		await sandbox.reset();
		return await bareLoop(sandbox, list, parallel, agent, post);
	};

	console.log(
		`Send Text throughput: ${ITEMS} items, sandbox in a child process at ${sandbox.url}, median of ${ROUNDS} rounds`,
	);
	console.log(
		`engine = the Messaging node's execution time as n8n records it (whole workflow in brackets); ${pacingNote()}\n`,
	);
	try {
		// Warm-up: JIT, the engine's first-run costs, keep-alive connections.
		for (const variant of VARIANTS) {
			for (const parallel of PARALLELISM) {
				await engineRun(variant, inputs(variant, 200), parallel);
				await bareRun(inputs(variant, 200), parallel, BARE_LOOPS.request);
				await bareRun(inputs(variant, 200), parallel, BARE_LOOPS.dispatch);
			}
		}
		const nodeMedian: Partial<Record<Variant, Record<number, number>>> = {};
		for (const variant of VARIANTS) {
			for (const parallel of PARALLELISM) {
				const nodeMs: number[] = [];
				const workflowMs: number[] = [];
				const bareMs: number[] = [];
				const floorMs: number[] = [];
				const tokens: number[] = [];
				for (let round = 0; round < ROUNDS; round++) {
					const list = inputs(variant, ITEMS);
					const engine = await engineRun(variant, list, parallel);
					nodeMs.push(engine.nodeMs);
					workflowMs.push(engine.workflowMs);
					tokens.push(engine.tokenRequests);
					bareMs.push(await bareRun(list, parallel, BARE_LOOPS.request));
					floorMs.push(await bareRun(list, parallel, BARE_LOOPS.dispatch));
				}
				const node = median(nodeMs);
				const bare = median(bareMs);
				const floor = median(floorMs);
				nodeMedian[variant] = { ...nodeMedian[variant], [parallel]: node };
				console.log(`${variant}, parallel ${parallel}:`);
				console.log(
					`  engine:            ${rate(node)} items/s  (${node.toFixed(0)} ms; workflow ${median(workflowMs).toFixed(0)} ms; rounds ${nodeMs.map((m) => m.toFixed(0)).join(', ')})`,
				);
				console.log(
					`  bare undici loop:  ${rate(bare)} items/s  (${bare.toFixed(0)} ms; rounds ${bareMs.map((m) => m.toFixed(0)).join(', ')})`,
				);
				console.log(
					`  bare dispatch loop:${rate(floor)} items/s  (${floor.toFixed(0)} ms; rounds ${floorMs.map((m) => m.toFixed(0)).join(', ')})`,
				);
				const goal = GOALS[variant]?.[parallel];
				const ratio = bare / node;
				console.log(
					`  ratio engine/bare: ${ratio.toFixed(2)}  (${goal === undefined ? 'no goal set' : `goal >= ${goal}: ${ratio >= goal ? 'met' : 'NOT met'}`})`,
				);
				console.log(
					`  ratio engine/bare dispatch: ${(floor / node).toFixed(2)}  (the floor: the same HTTP calls at their cheapest in undici)`,
				);
				console.log(`  token requests:    ${[...new Set(tokens)].join(', ')} per run  (goal: 1)\n`);
			}
		}
		for (const parallel of PARALLELISM) {
			const mapped = nodeMedian.mapped?.[parallel] ?? 0;
			const evaluated = nodeMedian.evaluated?.[parallel] ?? 0;
			const toll = ((evaluated - mapped) / ITEMS) * 1000;
			console.log(
				`parallel ${parallel}: plain mappings ${(evaluated / mapped).toFixed(2)}x the speed of the parenthesised ones (both evaluated by n8n); the difference is about ${toll.toFixed(0)} µs per item`,
			);
		}
	} finally {
		await agent.close();
		await sandbox.close();
	}
}

function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function rate(ms: number): string {
	return ((ITEMS / ms) * 1000).toFixed(0).padStart(6);
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
