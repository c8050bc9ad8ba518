/**
 * n8n's processed-items store for engine runs: the `IDataDeduplicator` behind
 * `this.helpers.checkProcessedAndRecord` / `removeProcessed` (the Remove Duplicates node's store),
 * installed into n8n-core's `DataDeduplicationService` once per module registry (once per Jest
 * test file) when this module is loaded; `engine.ts` loads it, so every engine run has the store.
 *
 * It behaves as n8n's database implementation does (n8n 2.40.7 and 1.123.81,
 * `dist/deduplication/deduplication-helper.js`, identical in both), races included, so that a test
 * can show what the store alone would let through:
 * - one row per workflow and scope (`node`: `n:<node id>`, `workflow`: ``), holding
 *   `{ mode, data }`; entries are MD5 hashes (base64) of `String(value)`, so `7` and `'7'` are one;
 * - every call reads the row, then writes it back whole: a query is an `await` (`queryDelayMs`,
 *   default one macrotask), so two concurrent calls both see the same row, both report a new item
 *   as new, and the last write wins; two first-ever calls race to insert the row, and the second
 *   fails as the primary key would (`UNIQUE constraint failed`);
 * - the set of stored hashes is built once per call: duplicates within one call are all new, and
 *   stored twice; `maxEntries` drops the oldest (first inserted) entries, a first insert keeps the
 *   last `maxEntries`; `removeProcessed` removes the first match of each; modes never mix.
 */
import { createHash } from 'crypto';
import { DataDeduplicationService } from 'n8n-core';
import type {
	DeduplicationItemTypes,
	DeduplicationScope,
	ICheckProcessedContextData,
	ICheckProcessedOptions,
	IDataDeduplicator,
	IDeduplicationOutput,
} from 'n8n-workflow';

interface Row {
	mode: ICheckProcessedOptions['mode'];
	data: string[] | DeduplicationItemTypes;
}

type Method = 'checkProcessedAndRecord' | 'removeProcessed' | 'clearAll' | 'count';

class ProcessedItemsStore implements IDataDeduplicator {
	private readonly rows = new Map<string, Row>();
	/** Every call, in order: how many store calls a run makes. */
	readonly calls: Array<{ method: Method; items: number }> = [];
	/** How long one query takes; 0 = one macrotask (enough for two calls to interleave). */
	queryDelayMs = 0;
	/** Fails the next calls with this error, once per call (a database that is down). */
	failing: Error[] = [];

	clear(): void {
		this.rows.clear();
		this.calls.length = 0;
		this.failing = [];
		this.queryDelayMs = 0;
	}

	/** How many entries all rows hold, for assertions. */
	stored(): number {
		return [...this.rows.values()].reduce(
			(sum, row) => sum + (Array.isArray(row.data) ? row.data.length : 0),
			0,
		);
	}

	async checkProcessedAndRecord(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		context: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<IDeduplicationOutput> {
		this.calls.push({ method: 'checkProcessedAndRecord', items: items.length });
		const key = rowKey(scope, context);
		const row = await this.select(key);
		if (row && row.mode !== options.mode)
			throw new Error('Deduplication data was originally saved with an incompatible setting');
		if (options.mode !== 'entries') return await this.latest(key, row, items, options);
		const hashes = items.map(hash);
		if (!row) {
			if (options.maxEntries) hashes.splice(0, hashes.length - options.maxEntries);
			await this.insert(key, { mode: options.mode, data: hashes });
			return { new: items, processed: [] };
		}
		if (!Array.isArray(row.data)) return { new: [], processed: [] };
		const stored = row.data;
		const seen = new Set(stored);
		const answer: IDeduplicationOutput = { new: [], processed: [] };
		hashes.forEach((h, i) => {
			if (seen.has(h)) answer.processed.push(items[i]);
			else {
				answer.new.push(items[i]);
				stored.push(h);
			}
		});
		if (options.maxEntries) stored.splice(0, stored.length - options.maxEntries);
		await this.update(key, row);
		return answer;
	}

	async removeProcessed(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		context: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<void> {
		this.calls.push({ method: 'removeProcessed', items: items.length });
		if (options.mode !== 'entries')
			throw new Error('Removing processed data is not possible in mode "latest"');
		const key = rowKey(scope, context);
		const row = await this.select(key);
		if (!row || !Array.isArray(row.data)) return;
		const stored = row.data;
		for (const h of items.map(hash)) {
			const at = stored.indexOf(h);
			if (at !== -1) stored.splice(at, 1);
		}
		await this.update(key, row);
	}

	async clearAllProcessedItems(
		scope: DeduplicationScope,
		context: ICheckProcessedContextData,
	): Promise<void> {
		this.calls.push({ method: 'clearAll', items: 0 });
		await this.query();
		this.rows.delete(rowKey(scope, context));
	}

	async getProcessedDataCount(
		scope: DeduplicationScope,
		context: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<number> {
		this.calls.push({ method: 'count', items: 0 });
		const row = await this.select(rowKey(scope, context));
		return options.mode === 'entries' && row && Array.isArray(row.data) ? row.data.length : 0;
	}

	/** `latestIncrementalKey` / `latestDate`: one stored value, the largest seen. */
	private async latest(
		key: string,
		row: Row | undefined,
		items: DeduplicationItemTypes[],
		options: ICheckProcessedOptions,
	): Promise<IDeduplicationOutput> {
		const value = (item: DeduplicationItemTypes) =>
			options.mode === 'latestDate' ? Date.parse(String(item)) : Number(item);
		const sorted = [...items].sort((a, b) => value(a) - value(b));
		if (!row) {
			await this.insert(key, { mode: options.mode, data: sorted[sorted.length - 1] });
			return { new: items, processed: [] };
		}
		if (Array.isArray(row.data)) return { new: [], processed: [] };
		const before = value(row.data);
		const answer: IDeduplicationOutput = { new: [], processed: [] };
		for (const item of sorted) {
			if (value(item) > before) {
				answer.new.push(item);
				if (value(item) > value(row.data as DeduplicationItemTypes)) row.data = item;
			} else answer.processed.push(item);
		}
		await this.update(key, row);
		return answer;
	}

	private async query(): Promise<void> {
		const failure = this.failing.shift();
		await new Promise((resolve) =>
			this.queryDelayMs > 0 ? setTimeout(resolve, this.queryDelayMs) : setImmediate(resolve),
		);
		if (failure) throw failure;
	}

	private async select(key: string): Promise<Row | undefined> {
		await this.query();
		const row = this.rows.get(key);
		return row ? structuredClone(row) : undefined;
	}

	private async insert(key: string, row: Row): Promise<void> {
		await this.query();
		if (this.rows.has(key))
			throw new Error(
				'UNIQUE constraint failed: processed_data.workflowId, processed_data.context',
			);
		this.rows.set(key, structuredClone(row));
	}

	private async update(key: string, row: Row): Promise<void> {
		await this.query();
		this.rows.set(key, structuredClone(row));
	}
}

function rowKey(scope: DeduplicationScope, context: ICheckProcessedContextData): string {
	if (!context.workflow.id)
		throw new Error('The expression evaluated to a falsy value: contextData.workflow.id');
	if (scope === 'node' && !context.node)
		throw new Error("No node information has been provided and so cannot use scope 'node'");
	return `${context.workflow.id}|${scope === 'node' ? `n:${context.node?.id}` : ''}`;
}

function hash(value: DeduplicationItemTypes): string {
	return createHash('md5').update(String(value)).digest('base64');
}

/** The store of this module registry (this test file), installed into n8n-core. */
export const processedItems = new ProcessedItemsStore();
void DataDeduplicationService.init(processedItems);
