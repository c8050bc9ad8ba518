import type {
	IExecuteFunctions,
	INode,
	INodeExecutionData,
	NodeApiError,
	NodeOperationError,
} from 'n8n-workflow';

/**
 * What one run of a node already did, kept for n8n's "Retry On Fail".
 *
 * n8n retries a node by running it again, whole, with the same input, in the same execution
 * (n8n-core `WorkflowExecute.processRunExecutionData`: the `tryIndex` loop around `runNode`): after
 * a thrown error, or with On Error → Continue when the first output item is an error item.
 * Without this memory every try sends every item again. With it, a try hands back the results of
 * the items an earlier try completed and the errors of the sends that may have been delivered,
 * and redoes only the rest: what failed for sure, and what was never started.
 *
 * Kept only when the node has Retry On Fail on, per execution id, node name and run index
 * (a node in a loop runs once per round, each round its own entry), in this process's memory
 * (n8n's tries of one node run on the same process, queue mode included). Bounded: entries
 * are dropped as soon as n8n cannot try again (the run succeeded, or the last try failed), after
 * `TTL_MS` without use, and the oldest first beyond `MAX_RUNS` runs or `MAX_ITEMS` items in all.
 */

const TTL_MS = 10 * 60_000;
const MAX_RUNS = 256;
const MAX_ITEMS = 200_000;

type Remembered = { output: INodeExecutionData[] } | { error: NodeApiError | NodeOperationError };

interface RunEntry {
	touchedAt: number;
	tries: number;
	items: Map<number, Remembered>;
}

const runs = new Map<string, RunEntry>();
let rememberedItems = 0;

/** The memory of one run of a node, or undefined when n8n will not try it again (Retry On Fail off). */
export function retryMemoryFor(
	ctx: IExecuteFunctions,
	node: INode,
	now = Date.now(),
): RunMemory | undefined {
	if (node.retryOnFail !== true) return undefined;
	const executionId = ctx.getExecutionId();
	if (!executionId) return undefined;
	// n8n's ExecuteContext holds its run index; the interface does not declare it.
	const runIndex = (ctx as unknown as { runIndex?: unknown }).runIndex;
	const key = `${executionId}\u0000${node.name}\u0000${typeof runIndex === 'number' ? runIndex : 0}`;
	prune(now);
	let entry = runs.get(key);
	if (!entry) {
		entry = { touchedAt: now, tries: 0, items: new Map() };
		runs.set(key, entry);
	}
	entry.touchedAt = now;
	entry.tries++;
	return new RunMemory(key, entry, maxTries(node));
}

/** n8n's own reading of Max Tries (n8n-core `WorkflowExecute.getRetryParams`: 2 to 5, default 3). */
function maxTries(node: INode): number {
	return Math.min(5, Math.max(2, node.maxTries || 3));
}

export class RunMemory {
	constructor(
		private readonly key: string,
		private readonly entry: RunEntry,
		private readonly tries: number,
	) {}

	/** Which try of n8n's this is (1 = the first run). */
	get attempt(): number {
		return this.entry.tries;
	}

	/** What an earlier try did with this item, if anything worth keeping. */
	recall(itemIndex: number): Remembered | undefined {
		return this.entry.items.get(itemIndex);
	}

	/** The item's output: a later try hands it back instead of sending again. */
	rememberOutput(itemIndex: number, output: INodeExecutionData[]): void {
		this.set(itemIndex, { output });
	}

	/** A failure that may have been delivered: a later try reports it again instead of sending again. */
	rememberError(itemIndex: number, error: NodeApiError | NodeOperationError): void {
		this.set(itemIndex, { error });
	}

	/**
	 * The run is over: forgets it when n8n will not try again (`willRetry` false, or this was
	 * the last of n8n's tries).
	 */
	finish(willRetry: boolean): void {
		if (willRetry && this.entry.tries < this.tries) return;
		forget(this.key);
	}

	private set(itemIndex: number, value: Remembered): void {
		if (!this.entry.items.has(itemIndex)) rememberedItems++;
		this.entry.items.set(itemIndex, value);
		if (rememberedItems > MAX_ITEMS) prune(Date.now(), this.key);
	}
}

function forget(key: string): void {
	const entry = runs.get(key);
	if (!entry) return;
	rememberedItems -= entry.items.size;
	runs.delete(key);
}

/** Drops runs unused for `TTL_MS`, then the oldest while over the bounds (never `keep`). */
function prune(now: number, keep?: string): void {
	for (const [key, entry] of runs) {
		if (now - entry.touchedAt > TTL_MS) forget(key);
	}
	for (const key of runs.keys()) {
		if (runs.size <= MAX_RUNS && rememberedItems <= MAX_ITEMS) break;
		if (key !== keep) forget(key);
	}
}

/** For tests: how many runs and items are remembered now. */
export function retryMemorySize(): { runs: number; items: number } {
	return { runs: runs.size, items: rememberedItems };
}
