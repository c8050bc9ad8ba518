import type { IExecuteFunctions, INodeExecutionData, NodeApiError, NodeOperationError } from 'n8n-workflow';

import { errorItemJson, toNodeError } from './errors';

export interface RunItemsOptions {
	/** How many items run at once (1 = one after the other). */
	parallel: number;
	/** Minimum time between the starts of two requests, in ms. */
	delayMs: number;
}

export type ItemOperation = (itemIndex: number) => Promise<INodeExecutionData | INodeExecutionData[]>;

/**
 * Runs one operation per input item with bounded parallelism and returns the outputs in input
 * order, each with its `pairedItem`.
 *
 * Failures: with Continue On Fail, a failing item becomes an error item in its place and the
 * others go on. Without it, no new item is started after the first failure, the items already
 * running finish, and the thrown error lists what happened to every other item, so a user
 * knows which messages went out before deciding to run again.
 */
export async function runItems(
	ctx: IExecuteFunctions,
	itemCount: number,
	operation: ItemOperation,
	options: RunItemsOptions,
): Promise<INodeExecutionData[]> {
	const node = ctx.getNode();
	const continueOnFail = ctx.continueOnFail();
	const results: Array<INodeExecutionData[] | undefined> = new Array(itemCount);
	const failures: Array<{ itemIndex: number; error: NodeApiError | NodeOperationError }> = [];
	let nextItem = 0;
	let nextStartAt = 0;

	const takeTurn = async () => {
		if (options.delayMs <= 0) return;
		const now = Date.now();
		const startAt = Math.max(now, nextStartAt);
		nextStartAt = startAt + options.delayMs;
		if (startAt > now) await new Promise((resolve) => setTimeout(resolve, startAt - now));
	};

	const worker = async () => {
		while (nextItem < itemCount && (continueOnFail || failures.length === 0)) {
			const itemIndex = nextItem++;
			await takeTurn();
			// Another item failed while this one waited for its turn: it is never started.
			if (!continueOnFail && failures.length > 0) return;
			try {
				const output = await operation(itemIndex);
				results[itemIndex] = (Array.isArray(output) ? output : [output]).map((item) => ({
					...item,
					pairedItem: item.pairedItem ?? { item: itemIndex },
				}));
			} catch (error) {
				const nodeError = toNodeError(node, error, { itemIndex });
				if (continueOnFail) {
					results[itemIndex] = [{ json: errorItemJson(nodeError), pairedItem: { item: itemIndex } }];
				} else {
					failures.push({ itemIndex, error: nodeError });
				}
			}
		}
	};

	const workers = Math.max(1, Math.min(Math.floor(options.parallel) || 1, itemCount));
	await Promise.all(Array.from({ length: workers }, worker));

	if (failures.length > 0) {
		failures.sort((a, b) => a.itemIndex - b.itemIndex);
		const first = failures[0].error;
		first.description = [first.description, summarize(results, failures.map((f) => f.itemIndex), itemCount)]
			.filter(Boolean)
			.join('\n\n');
		throw first;
	}
	return results.flat().filter((item): item is INodeExecutionData => item !== undefined);
}

/** What became of every item when the run stopped on a failure. */
function summarize(results: Array<INodeExecutionData[] | undefined>, failed: number[], itemCount: number): string {
	const done: number[] = [];
	const notStarted: number[] = [];
	for (let i = 0; i < itemCount; i++) {
		if (results[i]) done.push(i);
		else if (!failed.includes(i)) notStarted.push(i);
	}
	const lines = [`Failed items: ${ranges(failed)}.`];
	if (done.length) {
		const ids = done
			.flatMap((i) => results[i] ?? [])
			.map((item) => item.json.id)
			.filter((id) => typeof id === 'string');
		const idList = ids.length ? ` (ids: ${ids.slice(0, 20).join(', ')}${ids.length > 20 ? ', …' : ''})` : '';
		lines.push(`Completed before the stop: ${ranges(done)}${idList}; running the same input again repeats them.`);
	}
	if (notStarted.length) lines.push(`Not started: ${ranges(notStarted)}.`);
	lines.push('Turn on "Continue On Fail" in the node settings to get one output item per input item, errors included.');
	return lines.join(' ');
}

/** `[0,1,2,5,7,8]` → `0–2, 5, 7–8`. */
function ranges(indexes: number[]): string {
	const parts: string[] = [];
	for (let i = 0; i < indexes.length; i++) {
		let j = i;
		while (j + 1 < indexes.length && indexes[j + 1] === indexes[j] + 1) j++;
		parts.push(i === j ? `${indexes[i]}` : `${indexes[i]}–${indexes[j]}`);
		i = j;
	}
	return parts.join(', ');
}
