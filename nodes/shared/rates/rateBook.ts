import type { ApiClient } from '../transport';
import { endpoints } from '../transport';
import { parseRateAnswer, type KnownRates, type RateTable } from './rateTable';

export const MAX_KEEP_MINUTES = 1440;
const MAX_KEPT_TABLES = 200;

// Holds public rates only, never a secret. The reader decides how old an entry may be, so workflows
// with different settings share one entry.
export class RateCache {
	private readonly tables = new Map<string, RateTable>();

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

export const sharedRateCache = new RateCache();

export interface RateBookSettings {
	readonly client: ApiClient;
	readonly signal?: AbortSignal;
	readonly sourceKey: string;
	readonly keepMinutes: number;
	readonly cache?: RateCache;
	readonly now?: () => number;
}

// One getkurs request per provider and version per run; a failure is kept too, so an unknown
// provider costs one request.
export class RateBook {
	private readonly tables = new Map<string, Promise<RateTable>>();

	constructor(private readonly settings: RateBookSettings) {}

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
