/**
 * The rate book's sharing and keeping rules (nodes/shared/rates/rateBook.ts), with a real client
 * against the sandbox and a controllable clock.
 */
import { RateBook, RateCache } from '../../../../nodes/shared/rates/rateBook';
import { parseRateAnswer } from '../../../../nodes/shared/rates/rateTable';
import {
	ApiClient,
	ApiError,
	TokenCache,
	parseCredentials,
} from '../../../../nodes/shared/transport';
import { RATES_PATH, requestsTo } from '../../../harness/currencyRateNode';
import { useSandbox } from '../../../harness/useSandbox';

describe('RateCache', () => {
	it('serves an entry only while it is younger than the reader allows', () => {
		const cache = new RateCache();
		const table = parseRateAnswer('bca', { response: [] }, 1_000_000);
		cache.set('k', table, 1_000_000);
		expect(cache.get('k', 60_000, 1_059_999)).toBe(table);
		expect(cache.get('k', 60_000, 1_060_000)).toBeUndefined();
		expect(cache.get('k', 120_000, 1_060_000)).toBe(table);
		expect(cache.get('other', 60_000, 1_000_000)).toBeUndefined();
	});

	it('drops entries older than a day, and the oldest ones beyond 200 entries', () => {
		const cache = new RateCache();
		const day = 24 * 60 * 60_000;
		cache.set('old', parseRateAnswer('a', { response: [] }, 0), 0);
		for (let i = 0; i < 205; i++)
			cache.set(`k${i}`, parseRateAnswer('a', { response: [] }, day + i), day + i);
		expect(cache.get('old', Infinity, day + 205)).toBeUndefined();
		expect(cache.get('k0', Infinity, day + 205)).toBeUndefined();
		expect(cache.get('k4', Infinity, day + 205)).toBeUndefined();
		expect(cache.get('k5', Infinity, day + 205)).toBeDefined();
		expect(cache.get('k204', Infinity, day + 205)).toBeDefined();
	});
});

describe('RateBook against the sandbox', () => {
	const sandbox = useSandbox();
	let client: ApiClient;

	beforeEach(() => {
		// Its own token cache, emptied with the sandbox's tokens, so request counts start at zero.
		client = new ApiClient(
			parseCredentials({
				baseUrl: sandbox.url,
				clientId: 'demo-client',
				clientSecret: 'demo-secret',
			}),
			new TokenCache(),
		);
	});

	it('gives 1,000 concurrent callers the same table from one request', async () => {
		const book = new RateBook({ client, sourceKey: 's', keepMinutes: 0, cache: new RateCache() });
		const tables = await Promise.all(
			Array.from({ length: 1000 }, async () => await book.tableFor('bca', '1.0')),
		);
		expect(new Set(tables).size).toBe(1);
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(1);
	});

	it('shares a refusal too: every caller gets the same error from one request', async () => {
		const book = new RateBook({ client, sourceKey: 's', keepMinutes: 0, cache: new RateCache() });
		const results = await Promise.allSettled(
			Array.from({ length: 50 }, async () => await book.tableFor('nobank', '1.0')),
		);
		expect(
			results.every((r) => r.status === 'rejected' && (r.reason as ApiError).kind === 'rejected'),
		).toBe(true);
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(1);
	});

	it('reuses kept rates across books only within "Keep Rates For", measured from the fetch', async () => {
		const cache = new RateCache();
		let now = 5_000_000;
		const newBook = (keepMinutes: number) =>
			new RateBook({ client, sourceKey: 's', keepMinutes, cache, now: () => now });
		const first = await newBook(10).tableFor('bri', '1.0');
		now += 9 * 60_000;
		expect(await newBook(10).tableFor('bri', '1.0')).toBe(first);
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(1);
		// A reader that allows less than the entry's age fetches again.
		const fresher = await newBook(5).tableFor('bri', '1.0');
		expect(fresher).not.toBe(first);
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(2);
		now += 11 * 60_000;
		await newBook(10).tableFor('bri', '1.0');
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(3);
	});
});
