import {
	NodeOperationError,
	type IDataObject,
	type IExecuteFunctions,
	type INode,
	type INodeExecutionData,
	type NodeApiError,
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
 * `TTL_MS` without use, and the oldest runs first beyond `MAX_RUNS` runs or `limits.maxBytes`.
 *
 * The byte bound holds for the run in progress too: when one run alone outgrows it, its outputs
 * are kept in short (their top-level fields of up to 200 characters, `retryOutput: "trimmed"`),
 * and beyond that only that the item was done (an item `{ retryOutput: "dropped" }` is handed
 * back). What avoids a resend is never dropped: that an item was done, and the error of a send
 * that may have been delivered (kept as its message and facts, not the error object).
 */

const TTL_MS = 10 * 60_000;
const MAX_RUNS = 256;
/** Longest text of a field kept in a trimmed output. */
const TRIMMED_TEXT = 200;
/** What a remembered error costs, counted (its message and facts). */
const ERROR_BYTES = 512;
/** What a done-only item costs, counted (its map entry; the record itself is shared). */
const DONE_BYTES = 48;
const DONE: Kept = { kind: 'done', bytes: DONE_BYTES };

/** The bounds: all runs together hold at most `maxBytes` of remembered outputs and errors. */
const limits = { maxBytes: 32 * 1024 * 1024 };

type Remembered = { output: INodeExecutionData[] } | { error: NodeApiError | NodeOperationError };

/** How much of an item is kept: its output, its output in short, only that it was done, or its error's facts. */
type Kept =
	| { kind: 'full'; output: INodeExecutionData[]; bytes: number }
	| { kind: 'trimmed'; json: IDataObject[]; bytes: number }
	| { kind: 'done'; bytes: number }
	| { kind: 'error'; error: KeptError; bytes: number };

/** A may-have-been-delivered error, as the next try must report it again. */
interface KeptError {
	message: string;
	description?: string;
	kind: string;
	httpStatus?: number;
	serverMessage?: string;
	itemIndex: number;
}

interface RunEntry {
	touchedAt: number;
	tries: number;
	items: Map<number, Kept>;
	bytes: number;
	/** How new outputs of this run are kept once it outgrew the bound. */
	level: 'full' | 'trimmed' | 'done';
}

const runs = new Map<string, RunEntry>();
let rememberedItems = 0;
let rememberedBytes = 0;

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
		entry = { touchedAt: now, tries: 0, items: new Map(), bytes: 0, level: 'full' };
		runs.set(key, entry);
	}
	entry.touchedAt = now;
	entry.tries++;
	return new RunMemory(key, entry, maxTries(node), node);
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
		private readonly node: INode,
	) {}

	/** Which try of n8n's this is (1 = the first run). */
	get attempt(): number {
		return this.entry.tries;
	}

	/** What an earlier try did with this item, if anything worth keeping. */
	recall(itemIndex: number): Remembered | undefined {
		const kept = this.entry.items.get(itemIndex);
		if (!kept) return undefined;
		const pairedItem = { item: itemIndex };
		switch (kept.kind) {
			case 'full':
				return { output: kept.output };
			case 'trimmed':
				return { output: kept.json.map((json) => ({ json, pairedItem })) };
			case 'done':
				return { output: [{ json: { retryOutput: 'dropped' }, pairedItem }] };
			case 'error':
				return { error: keptErrorToNodeError(this.node, kept.error) };
		}
	}

	/** The item's output: a later try hands it back instead of sending again. */
	rememberOutput(itemIndex: number, output: INodeExecutionData[]): void {
		this.set(itemIndex, keep(output, this.entry.level));
		this.bound();
	}

	/** A failure that may have been delivered: a later try reports it again instead of sending again. */
	rememberError(itemIndex: number, error: NodeApiError | NodeOperationError): void {
		this.set(itemIndex, { kind: 'error', error: keptError(error, itemIndex), bytes: ERROR_BYTES });
		this.bound();
	}

	/**
	 * The run is over: forgets it when n8n will not try again (`willRetry` false, or this was
	 * the last of n8n's tries).
	 */
	finish(willRetry: boolean): void {
		if (willRetry && this.entry.tries < this.tries) return;
		forget(this.key);
	}

	private set(itemIndex: number, kept: Kept): void {
		const before = this.entry.items.get(itemIndex);
		if (before) this.account(-1, -before.bytes);
		this.entry.items.set(itemIndex, kept);
		this.account(1, kept.bytes);
	}

	private account(items: number, bytes: number): void {
		rememberedItems += items;
		rememberedBytes += bytes;
		this.entry.bytes += bytes;
	}

	/**
	 * Over the byte bound: other runs go first (oldest first); then this run keeps its outputs in
	 * short, then only that its items were done. Each step rewrites the run once, and what comes
	 * after is kept at the new level: linear in the run's items however large it grows.
	 */
	private bound(): void {
		if (rememberedBytes <= limits.maxBytes) return;
		prune(Date.now(), this.key);
		while (rememberedBytes > limits.maxBytes && this.entry.level !== 'done') {
			this.entry.level = this.entry.level === 'full' ? 'trimmed' : 'done';
			for (const [itemIndex, kept] of this.entry.items) {
				if (kept.kind === 'error' || kept.kind === 'done') continue;
				const output =
					kept.kind === 'full'
						? kept.output
						: kept.json.map((json) => ({ json, pairedItem: { item: itemIndex } }));
				this.set(itemIndex, keep(output, this.entry.level));
			}
		}
	}
}

/** An output as kept at a level, with what it costs. */
function keep(output: INodeExecutionData[], level: RunEntry['level']): Kept {
	if (level === 'done') return DONE;
	if (level === 'full') return { kind: 'full', output, bytes: outputBytes(output) };
	const json = output.map((item) => trimmed(item.json));
	return { kind: 'trimmed', json, bytes: outputBytes(json.map((j) => ({ json: j }))) };
}

/** The top-level fields that are short values (texts cut to TRIMMED_TEXT), marked as trimmed. */
function trimmed(json: IDataObject): IDataObject {
	const out: IDataObject = {};
	for (const [key, value] of Object.entries(json)) {
		if (typeof value === 'string')
			out[key] = value.length > TRIMMED_TEXT ? `${value.slice(0, TRIMMED_TEXT)}…` : value;
		else if (value === null || typeof value === 'number' || typeof value === 'boolean')
			out[key] = value;
	}
	out.retryOutput = 'trimmed';
	return out;
}

/** About what an output takes in memory: its JSON's length (binary data counted by what is held in the item). */
function outputBytes(output: INodeExecutionData[]): number {
	let bytes = 64;
	for (const item of output) {
		bytes += 2 * (JSON.stringify(item.json)?.length ?? 0);
		if (item.binary) bytes += 2 * (JSON.stringify(item.binary)?.length ?? 0);
	}
	return bytes;
}

function keptError(error: NodeApiError | NodeOperationError, itemIndex: number): KeptError {
	const apiError = (
		error as { apiError?: { kind?: string; httpStatus?: number; serverMessage?: string } }
	).apiError;
	return {
		message: error.message,
		description: error.description ?? undefined,
		kind: apiError?.kind ?? 'network',
		httpStatus: apiError?.httpStatus,
		serverMessage: apiError?.serverMessage,
		itemIndex,
	};
}

/** The remembered failure as the error of this try: the same message, still "may have been delivered". */
function keptErrorToNodeError(node: INode, kept: KeptError): NodeOperationError {
	const error = new NodeOperationError(node, kept.message, {
		itemIndex: kept.itemIndex,
		description: kept.description,
	});
	// Read by errorItemJson and the scheduler as the transport's facts about the failure.
	Object.assign(error, {
		apiError: {
			kind: kept.kind,
			httpStatus: kept.httpStatus,
			serverMessage: kept.serverMessage,
			deliveryUnknown: true,
		},
	});
	return error;
}

function forget(key: string): void {
	const entry = runs.get(key);
	if (!entry) return;
	rememberedItems -= entry.items.size;
	rememberedBytes -= entry.bytes;
	runs.delete(key);
}

/** Drops runs unused for `TTL_MS`, then the oldest while over the bounds (never `keep`). */
function prune(now: number, keep?: string): void {
	for (const [key, entry] of runs) {
		if (now - entry.touchedAt > TTL_MS) forget(key);
	}
	for (const key of runs.keys()) {
		if (runs.size <= MAX_RUNS && rememberedBytes <= limits.maxBytes) break;
		if (key !== keep) forget(key);
	}
}

/** For tests: how many runs, items and bytes are remembered now. */
export function retryMemorySize(): { runs: number; items: number; bytes: number } {
	return { runs: runs.size, items: rememberedItems, bytes: rememberedBytes };
}

/** For tests: a smaller byte bound (returns the function that puts the previous one back). */
export function setRetryMemoryLimit(maxBytes: number): () => void {
	const previous = limits.maxBytes;
	limits.maxBytes = maxBytes;
	return () => {
		limits.maxBytes = previous;
	};
}
