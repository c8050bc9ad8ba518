import type { ApiClient } from '../transport';
import { endpoints } from '../transport';
import { parseRateAnswer, type KnownRates, type RateTable } from './rateTable';

/** The longest "Keep Rates For (Minutes)" the node offers; older entries are never read again. */
export const MAX_KEEP_MINUTES = 1440;
/** Distinct (base URL, client, provider, version) entries kept at most; a process rarely needs ten. */
const MAX_KEPT_TABLES = 200;

/**
 * Rate tables kept across executions, for the "Keep Rates For (Minutes)" option.
 *
 * Keyed by base URL, client id, provider code and version: it holds public rates only, never a
 * secret or token. The reader decides how old an entry may be, so two workflows with different
 * settings can share one entry.
 */
export class RateCache {
	private readonly tables = new Map<string, RateTable>();

	/** The table for `key` if it was fetched less than `maxAgeMs` ago. */
	get(key: string, maxAgeMs: number, now: number): RateTable | undefined {
		const table = this.tables.get(key);
		return table && now - table.fetchedAtMs < maxAgeMs ? table : undefined;
	}

	set(key: string, table: RateTable, now: number): void {
		this.tables.delete(key);
		this.tables.set(key, table);
		for (const [oldKey, old] of this.tables) {
			if (this.tables.size <= MAX_KEPT_TABLES && now - old.fetchedAtMs < MAX_KEEP_MINUTES * 60_000)
				break;
			// Map order is insertion order, so the oldest entries go first.
			this.tables.delete(oldKey);
		}
	}

	clear(): void {
		this.tables.clear();
	}
}

/** Process-wide, like the transport's token cache: shared by every execution of every workflow. */
export const sharedRateCache = new RateCache();

export interface RateBookSettings {
	readonly client: ApiClient;
	readonly signal?: AbortSignal;
	/** Base URL and client id of the credential: which service and account the rates come from. */
	readonly sourceKey: string;
	/** Reuse tables from earlier executions fetched less than this long ago; 0 = never. */
	readonly keepMinutes: number;
	readonly cache?: RateCache;
	readonly now?: () => number;
}

/**
 * The rates of one execution: every item that needs the same provider and version gets the
 * same table from one getkurs request. Concurrent items wait on the same in-flight request
 * (the promise is stored before it settles), so 10,000 items cause one request, not 10,000.
 *
 * A failed request is kept too: every item of the run that needs that provider gets the same
 * error instead of each trying again, so a provider the service does not know costs one request.
 */
export class RateBook {
	private readonly tables = new Map<string, Promise<RateTable>>();

	constructor(private readonly settings: RateBookSettings) {}

	/** `known`: what earlier answers of this provider said, to read the new one by (see `parseRateAnswer`). */
	async tableFor(provider: string, version: string, known?: KnownRates): Promise<RateTable> {
		const key = `${provider}|${version}`;
		let table = this.tables.get(key);
		if (!table) {
			table = this.load(provider, version, known);
			this.tables.set(key, table);
		}
		return await table;
	}

	private async load(provider: string, version: string, known?: KnownRates): Promise<RateTable> {
		const {
			client,
			signal,
			sourceKey,
			keepMinutes,
			cache = sharedRateCache,
			now = Date.now,
		} = this.settings;
		const cacheKey = `${sourceKey}|${provider}|${version}`;
		if (keepMinutes > 0) {
			const kept = cache.get(cacheKey, keepMinutes * 60_000, now());
			if (kept) return kept;
		}
		const result = await client.call(
			endpoints.getKurs,
			{ version, currency_id_provider: provider },
			{ signal },
		);
		const table = parseRateAnswer(provider, result, now(), known);
		// Only kept when asked: with the option off, every execution reads fresh rates.
		if (keepMinutes > 0) cache.set(cacheKey, table, now());
		return table;
	}
}
