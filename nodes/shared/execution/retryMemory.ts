import {
	NodeOperationError,
	type IExecuteFunctions,
	type INode,
	type INodeExecutionData,
	type NodeApiError,
} from 'n8n-workflow';

// n8n's Retry On Fail runs the whole node again, in the same process (queue mode too): a try hands
// back what an earlier one completed and fails again what may have been delivered. Bounded in
// bytes, but what avoids a resend is never dropped.

const TTL_MS = 10 * 60_000;
const MAX_RUNS = 256;
const ERROR_BYTES = 512;

type ItemError = NodeApiError | NodeOperationError;
type Remembered = { output: INodeExecutionData[] } | { error: ItemError };
/** Past the byte bound a run keeps only that its items were done (`output` undefined). */
type Kept = { output?: INodeExecutionData[]; error?: ItemError; bytes: number };

interface RunEntry {
	touchedAt: number;
	tries: number;
	items: Map<number, Kept>;
	bytes: number;
	full: boolean;
}

const runs = new Map<string, RunEntry>();
/** The bytes of every run together. */
let totalBytes = 0;

export function retryMemoryFor(ctx: IExecuteFunctions, node: INode): RunMemory | undefined {
	if (node.retryOnFail !== true) return undefined;
	const executionId = ctx.getExecutionId();
	if (!executionId) return undefined;
	// n8n's ExecuteContext holds its run index; the interface does not declare it.
	const runIndex = (ctx as unknown as { runIndex?: unknown }).runIndex;
	const key = `${executionId}\u0000${node.name}\u0000${typeof runIndex === 'number' ? runIndex : 0}`;
	const now = Date.now();
	prune(now);
	const entry = runs.get(key) ?? {
		touchedAt: now,
		tries: 0,
		items: new Map(),
		bytes: 0,
		full: true,
	};
	runs.set(key, entry);
	entry.touchedAt = now;
	entry.tries++;
	// As n8n reads Max Tries (WorkflowExecute.getRetryParams).
	return new RunMemory(key, entry, Math.min(5, Math.max(2, node.maxTries || 3)));
}

export class RunMemory {
	/** For all runs together, the run in progress included. */
	static maxBytes = 32 * 1024 * 1024;

	/** What every run remembers (the test harness checks the bound and that a run forgets). */
	static usage(): { runs: number; bytes: number } {
		return { runs: runs.size, bytes: totalBytes };
	}

	constructor(
		private readonly key: string,
		private readonly entry: RunEntry,
		private readonly tries: number,
	) {}

	recall(itemIndex: number): Remembered | undefined {
		const kept = this.entry.items.get(itemIndex);
		if (!kept) return undefined;
		if (kept.error) return { error: kept.error };
		const pairedItem = { item: itemIndex };
		return { output: kept.output ?? [{ json: { retryOutput: 'dropped' }, pairedItem }] };
	}

	rememberOutput(itemIndex: number, output: INodeExecutionData[]): void {
		this.set(itemIndex, this.entry.full ? { output, bytes: outputBytes(output) } : { bytes: 0 });
		if (totalBytes <= RunMemory.maxBytes) return;
		// Other runs go first, then this run's outputs: only that its items were done stays.
		prune(Date.now(), this.key);
		if (totalBytes <= RunMemory.maxBytes) return;
		this.entry.full = false;
		for (const [index, kept] of this.entry.items) if (!kept.error) this.set(index, { bytes: 0 });
	}

	rememberError(itemIndex: number, error: ItemError): void {
		this.set(itemIndex, { error: keptError(error, itemIndex), bytes: ERROR_BYTES });
	}

	finish(willRetry: boolean): void {
		if (!willRetry || this.entry.tries >= this.tries) forget(this.key);
	}

	private set(itemIndex: number, kept: Kept): void {
		const added = kept.bytes - (this.entry.items.get(itemIndex)?.bytes ?? 0);
		this.entry.bytes += added;
		// A run pruned while it goes on counts no more.
		if (runs.get(this.key) === this.entry) totalBytes += added;
		this.entry.items.set(itemIndex, kept);
	}
}

function forget(key: string): void {
	totalBytes -= runs.get(key)?.bytes ?? 0;
	runs.delete(key);
}

function outputBytes(output: INodeExecutionData[]): number {
	let bytes = 64;
	for (const item of output) {
		bytes += 2 * (JSON.stringify(item.json)?.length ?? 0);
		if (item.binary) bytes += 2 * (JSON.stringify(item.binary)?.length ?? 0);
	}
	return bytes;
}

/** A fresh error of the same facts: n8n may change the one it was given. */
function keptError(error: ItemError, itemIndex: number): ItemError {
	const {
		kind = 'network',
		httpStatus,
		serverMessage,
	} = (error as { apiError?: { kind?: string; httpStatus?: number; serverMessage?: string } })
		.apiError ?? {};
	const kept = new NodeOperationError(error.node, error.message, {
		itemIndex,
		description: error.description ?? undefined,
	});
	// Read by errorItemJson and the stop summary as the transport's facts about the failure.
	const apiError = { kind, httpStatus, serverMessage, deliveryUnknown: true };
	return Object.assign(kept, { apiError });
}

function prune(now: number, keep?: string): void {
	for (const [key, entry] of runs) if (now - entry.touchedAt > TTL_MS) forget(key);
	for (const key of runs.keys()) {
		if (runs.size <= MAX_RUNS && totalBytes <= RunMemory.maxBytes) break;
		if (key !== keep) forget(key);
	}
}
