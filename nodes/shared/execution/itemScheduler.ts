import type {
	IExecuteFunctions,
	INode,
	INodeExecutionData,
	IPairedItemData,
	NodeApiError,
	NodeOperationError,
} from 'n8n-workflow';

import { clock } from '../clock';
import { errorItemJson, isErrorItemJson, itemList, toNodeError } from '../errors';
import { retryMemoryFor, type RunMemory } from './retryMemory';
import type { ItemCall } from './router';

export interface RunItemsOptions {
	parallel: number;
	/** Between the starts of two requests, in ms. */
	delayMs: number;
	/** Runs once, for the first item; its output is paired with every input item. */
	once?: boolean;
	gate?: CallGate;
}

export type ItemFate =
	| { kind: 'done' }
	| { kind: 'skipped' }
	| { kind: 'failed'; error: unknown }
	| { kind: 'notStarted' };

export type GateOutcome = { output: INodeExecutionData } | { error: Error };

// Runs between the check of every item and the first request (Messaging claims each message there,
// batched, so that no other execution sends it) and learns every item's fate, to keep or give back.
export interface CallGate {
	admit(itemIndexes: number[]): Promise<Map<number, GateOutcome>>;
	/** undefined to call the item, else its outcome instead. */
	beforeCall(itemIndex: number): Promise<GateOutcome | undefined>;
	settle(fates: ItemFate[]): Promise<void>;
	/** What n8n's Retry of the same input sends and skips, for a stopped run's error. */
	rerunNote(fates: ItemFate[]): string;
}

/** `beforeCall` stops at the first outcome, so the last gate acts just before the request. */
export function chainGates(...gates: Array<CallGate | undefined>): CallGate | undefined {
	const chain = gates.filter((gate): gate is CallGate => gate !== undefined);
	if (chain.length <= 1) return chain[0];
	return {
		async admit(itemIndexes) {
			const decided = new Map<number, GateOutcome>();
			for (const gate of chain) {
				const left = itemIndexes.filter((itemIndex) => !decided.has(itemIndex));
				for (const [itemIndex, outcome] of await gate.admit(left)) decided.set(itemIndex, outcome);
			}
			return decided;
		},
		async beforeCall(itemIndex) {
			for (const gate of chain) {
				const outcome = await gate.beforeCall(itemIndex);
				if (outcome) return outcome;
			}
			return undefined;
		},
		async settle(fates) {
			const failures: unknown[] = [];
			for (const gate of chain) await gate.settle(fates).catch((error) => failures.push(error));
			if (failures.length) throw failures[0];
		},
		rerunNote(fates) {
			return chain
				.map((gate) => gate.rerunNote(fates))
				.filter(Boolean)
				.join(' ');
		},
	};
}

export type ExecuteItem = (itemIndex: number) => ItemCall | Promise<ItemCall>;

type ItemError = NodeApiError | NodeOperationError;

// Every item is checked before the first request, so bad input is found before anything is sent.
export async function runItems(
	ctx: IExecuteFunctions,
	itemCount: number,
	execute: ExecuteItem,
	options: RunItemsOptions,
): Promise<INodeExecutionData[]> {
	const node = ctx.getNode();
	const continueOnFail = ctx.continueOnFail();
	const memory = retryMemoryFor(ctx, node);
	const count = options.once ? Math.min(itemCount, 1) : itemCount;
	const outcomes = new ItemOutcomes(count, continueOnFail);

	const { calls, recalledFailure } = await checkItems(node, execute, outcomes, memory);
	if (outcomes.failures.length > 0) {
		// Nothing new was sent: Stop means stop, before the first request.
		memory?.finish(true);
		throw stopError(outcomes, recalledFailure ? 'run' : 'input');
	}

	const gate = options.gate;
	try {
		if (gate) await admit(node, gate, calls, outcomes);
		if (!outcomes.stopped) await runCalls(node, calls, options, outcomes, memory);
	} finally {
		await gate?.settle(outcomes.fates());
	}
	if (outcomes.failures.length > 0) {
		memory?.finish(true);
		throw stopError(outcomes, 'run', gate);
	}
	const output = outcomes.results
		.flat()
		.filter((item): item is INodeExecutionData => item !== undefined);
	// n8n tries again in the Continue modes only when the first output item is an error item.
	memory?.finish(continueOnFail && output.length > 0 && isErrorItemJson(output[0].json));
	if (options.once && itemCount > 1) {
		const every: IPairedItemData[] = Array.from({ length: itemCount }, (_, item) => ({ item }));
		return output.map((item) => ({ ...item, pairedItem: every }));
	}
	return output;
}

class ItemOutcomes {
	readonly results: Array<INodeExecutionData[] | undefined>;
	readonly failures: Array<{ itemIndex: number; error: ItemError }> = [];
	private readonly skipped = new Set<number>();
	private readonly thrown = new Map<number, unknown>();

	constructor(
		readonly count: number,
		private readonly continueOnFail: boolean,
	) {
		this.results = new Array(count);
	}

	fail(itemIndex: number, error: ItemError, thrown: unknown = error): void {
		this.thrown.set(itemIndex, thrown);
		if (this.continueOnFail)
			this.results[itemIndex] = [{ json: errorItemJson(error), pairedItem: { item: itemIndex } }];
		else this.failures.push({ itemIndex, error });
	}

	skip(itemIndex: number, output: INodeExecutionData): void {
		this.skipped.add(itemIndex);
		this.results[itemIndex] = [{ ...output, pairedItem: output.pairedItem ?? { item: itemIndex } }];
	}

	fates(): ItemFate[] {
		return Array.from({ length: this.count }, (_, i): ItemFate => {
			if (this.thrown.has(i)) return { kind: 'failed', error: this.thrown.get(i) };
			if (this.skipped.has(i)) return { kind: 'skipped' };
			return this.results[i] ? { kind: 'done' } : { kind: 'notStarted' };
		});
	}

	get stopped(): boolean {
		return !this.continueOnFail && this.failures.length > 0;
	}
}

async function checkItems(
	node: INode,
	execute: ExecuteItem,
	outcomes: ItemOutcomes,
	memory: RunMemory | undefined,
): Promise<{ calls: Array<ItemCall | undefined>; recalledFailure: boolean }> {
	const calls: Array<ItemCall | undefined> = new Array(outcomes.count);
	// An earlier try's maybe-delivered sends fail again: part of the run, not bad input.
	let recalledFailure = false;
	for (let itemIndex = 0; itemIndex < outcomes.count; itemIndex++) {
		const recalled = memory?.recall(itemIndex);
		if (recalled && 'output' in recalled) {
			outcomes.results[itemIndex] = recalled.output;
			continue;
		}
		if (recalled) {
			recalledFailure = true;
			outcomes.fail(itemIndex, recalled.error);
			continue;
		}
		try {
			calls[itemIndex] = await execute(itemIndex);
		} catch (error) {
			outcomes.fail(itemIndex, toNodeError(node, error, { itemIndex }));
		}
	}
	return { calls, recalledFailure };
}

async function admit(
	node: INode,
	gate: CallGate,
	calls: Array<ItemCall | undefined>,
	outcomes: ItemOutcomes,
): Promise<void> {
	const admitted = calls.flatMap((call, itemIndex) => (call ? [itemIndex] : []));
	let decided: Map<number, GateOutcome>;
	try {
		decided = await gate.admit(admitted);
	} catch (error) {
		decided = new Map(admitted.map((itemIndex) => [itemIndex, { error: error as Error }]));
	}
	for (const [itemIndex, outcome] of decided) {
		calls[itemIndex] = undefined;
		if ('output' in outcome) outcomes.skip(itemIndex, outcome.output);
		else outcomes.fail(itemIndex, toNodeError(node, outcome.error, { itemIndex }), outcome.error);
	}
}

async function runCalls(
	node: INode,
	calls: Array<ItemCall | undefined>,
	options: RunItemsOptions,
	outcomes: ItemOutcomes,
	memory: RunMemory | undefined,
): Promise<void> {
	const { parallel, delayMs } = options;
	let next = 0;
	let nextStartAt = 0;
	const takeTurn = async () => {
		if (delayMs <= 0) return;
		const now = clock.now();
		const startAt = Math.max(now, nextStartAt);
		nextStartAt = startAt + delayMs;
		if (startAt > now) await clock.sleep(startAt - now);
	};
	const worker = async () => {
		while (!outcomes.stopped) {
			while (next < calls.length && !calls[next]) next++;
			if (next >= calls.length) return;
			const itemIndex = next++;
			const call = calls[itemIndex] as ItemCall;
			await takeTurn();
			// Another item failed while this one waited for its turn: it is never started.
			if (outcomes.stopped) return;
			try {
				const instead = await options.gate?.beforeCall(itemIndex);
				if (instead) {
					if ('output' in instead) outcomes.skip(itemIndex, instead.output);
					else throw instead.error;
					continue;
				}
				const output = await call();
				outcomes.results[itemIndex] = (Array.isArray(output) ? output : [output]).map((item) => ({
					...item,
					pairedItem: item.pairedItem ?? { item: itemIndex },
				}));
				memory?.rememberOutput(itemIndex, outcomes.results[itemIndex] as INodeExecutionData[]);
			} catch (error) {
				const nodeError = toNodeError(node, error, { itemIndex });
				if (isDeliveryUnknown(nodeError)) memory?.rememberError(itemIndex, nodeError);
				outcomes.fail(itemIndex, nodeError, error);
			}
		}
	};
	const workers = Math.max(1, Math.min(Math.floor(parallel) || 1, calls.filter(Boolean).length));
	await Promise.all(Array.from({ length: workers }, worker));
}

function isDeliveryUnknown(error: ItemError): boolean {
	return (error as { apiError?: { deliveryUnknown?: boolean } }).apiError?.deliveryUnknown === true;
}

function stopError(outcomes: ItemOutcomes, phase: 'input' | 'run', gate?: CallGate): ItemError {
	const { results, failures, count: itemCount } = outcomes;
	failures.sort((a, b) => a.itemIndex - b.itemIndex);
	const first = failures[0].error;
	// With Retry On Fail a remembered error fails again on the next try: its summary replaces the
	// previous try's instead of being added to it.
	if (!ownDescriptions.has(first)) ownDescriptions.set(first, first.description);
	first.description = [
		ownDescriptions.get(first),
		summarize(
			results,
			failures.map((f) => f.itemIndex),
			itemCount,
			phase,
			gate?.rerunNote(outcomes.fates()),
		),
	]
		.filter(Boolean)
		.join('\n\n');
	return first;
}

const ownDescriptions = new WeakMap<ItemError, string | null | undefined>();

function summarize(
	results: Array<INodeExecutionData[] | undefined>,
	failed: number[],
	itemCount: number,
	phase: 'input' | 'run',
	rerunNote?: string,
): string {
	const done: number[] = [];
	const notStarted: number[] = [];
	for (let i = 0; i < itemCount; i++) {
		if (results[i]) done.push(i);
		else if (!failed.includes(i)) notStarted.push(i);
	}
	const lines = [`Failed: ${itemList(failed)}.`];
	if (phase === 'input') {
		lines.push(
			done.length
				? `Nothing new was sent: every item's input is checked before the first request (${itemList(done)} completed in an earlier try).`
				: "Nothing was sent: every item's input is checked before the first request.",
		);
	} else {
		if (done.length) {
			const ids = done
				.flatMap((i) => results[i] ?? [])
				.map((item) => item.json.id)
				.filter((id) => typeof id === 'string');
			const idList = ids.length
				? ` (ids: ${ids.slice(0, 20).join(', ')}${ids.length > 20 ? ', …' : ''})`
				: '';
			lines.push(
				rerunNote
					? `Completed before the stop: ${itemList(done)}${idList}.`
					: `Completed before the stop: ${itemList(done)}${idList}; running the same input again repeats them.`,
			);
		}
		if (notStarted.length) lines.push(`Not started: ${itemList(notStarted)}.`);
		if (rerunNote) lines.push(rerunNote);
	}
	lines.push(
		'Set Settings → On Error to "Continue" (or "Continue (using error output)") to get one output item per input item, errors included.',
	);
	return lines.join(' ');
}
