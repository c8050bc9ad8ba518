import { clock } from '../clock';
import { endpoints, type ApiClient } from '../transport';
import { parseRateAnswer, type RateTable } from './rateTable';

export const MAX_KEEP_MINUTES = 1440;
const MAX_KEPT_TABLES = 200;

// "Keep Rates For": public rates only, per base URL, client ID, provider and version. The reader
// decides how old an entry may be, so workflows with other settings share one entry.
const keptTables = new Map<string, RateTable>();

export async function fetchRateTable(
	client: ApiClient,
	provider: string,
	version: string,
	signal?: AbortSignal,
): Promise<RateTable> {
	const params = { version, currency_id_provider: provider };
	const answer = await client.call(endpoints.getKurs, params, { signal });
	return parseRateAnswer(provider, answer, clock.now());
}

// One request per provider and version per run, shared by every item that needs it; a refusal is
// shared too, so an unknown provider costs one request.
export class RateBook {
	private readonly tables = new Map<string, Promise<RateTable>>();

	constructor(
		private readonly client: ApiClient,
		private readonly sourceKey: string,
		private readonly keepMinutes: number,
		private readonly signal?: AbortSignal,
	) {}

	async tableFor(provider: string, version: string): Promise<RateTable> {
		const key = `${provider}|${version}`;
		let table = this.tables.get(key);
		if (!table) this.tables.set(key, (table = this.load(provider, version)));
		return await table;
	}

	private async load(provider: string, version: string): Promise<RateTable> {
		if (this.keepMinutes === 0)
			return await fetchRateTable(this.client, provider, version, this.signal);
		const keptKey = `${this.sourceKey}|${provider}|${version}`;
		const kept = keptTables.get(keptKey);
		if (kept && clock.now() - kept.fetchedAtMs < this.keepMinutes * 60_000) return kept;
		const table = await fetchRateTable(this.client, provider, version, this.signal);
		keep(keptKey, table);
		return table;
	}
}

function keep(key: string, table: RateTable): void {
	keptTables.delete(key);
	keptTables.set(key, table);
	// Map order is insertion order, so the oldest entries go first.
	for (const [oldKey, old] of keptTables) {
		const fresh = table.fetchedAtMs - old.fetchedAtMs < MAX_KEEP_MINUTES * 60_000;
		if (keptTables.size <= MAX_KEPT_TABLES && fresh) break;
		keptTables.delete(oldKey);
	}
}
