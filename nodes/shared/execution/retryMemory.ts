import {
	NodeOperationError,
	type IDataObject,
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
const TRIMMED_TEXT = 200;
const ERROR_BYTES = 512;
const DONE_BYTES = 48;
const DONE: Kept = { kind: 'done', bytes: DONE_BYTES };

const limits = { maxBytes: 32 * 1024 * 1024 };

type Remembered = { output: INodeExecutionData[] } | { error: NodeApiError | NodeOperationError };

type Kept =
	| { kind: 'full'; output: INodeExecutionData[]; bytes: number }
	| { kind: 'trimmed'; json: IDataObject[]; bytes: number }
	| { kind: 'done'; bytes: number }
	| { kind: 'error'; error: KeptError; bytes: number };

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
	level: 'full' | 'trimmed' | 'done';
}

const runs = new Map<string, RunEntry>();
let rememberedItems = 0;
let rememberedBytes = 0;

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

/** As n8n reads Max Tries (WorkflowExecute.getRetryParams). */
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

	get attempt(): number {
		return this.entry.tries;
	}

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

	rememberOutput(itemIndex: number, output: INodeExecutionData[]): void {
		this.set(itemIndex, keep(output, this.entry.level));
		this.bound();
	}

	rememberError(itemIndex: number, error: NodeApiError | NodeOperationError): void {
		this.set(itemIndex, { kind: 'error', error: keptError(error, itemIndex), bytes: ERROR_BYTES });
		this.bound();
	}

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

	/** Other runs go first; each step rewrites this run once, so bounding stays linear. */
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

function keep(output: INodeExecutionData[], level: RunEntry['level']): Kept {
	if (level === 'done') return DONE;
	if (level === 'full') return { kind: 'full', output, bytes: outputBytes(output) };
	const json = output.map((item) => trimmed(item.json));
	return { kind: 'trimmed', json, bytes: outputBytes(json.map((j) => ({ json: j }))) };
}

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

function prune(now: number, keep?: string): void {
	for (const [key, entry] of runs) {
		if (now - entry.touchedAt > TTL_MS) forget(key);
	}
	for (const key of runs.keys()) {
		if (runs.size <= MAX_RUNS && rememberedBytes <= limits.maxBytes) break;
		if (key !== keep) forget(key);
	}
}

export function retryMemorySize(): { runs: number; items: number; bytes: number } {
	return { runs: runs.size, items: rememberedItems, bytes: rememberedBytes };
}

export function setRetryMemoryLimit(maxBytes: number): () => void {
	const previous = limits.maxBytes;
	limits.maxBytes = maxBytes;
	return () => {
		limits.maxBytes = previous;
	};
}
