/**
 * The Currency Rate node's pure parts: reading getkurs answers of every known shape, rounding,
 * and the rate book's sharing and keeping rules (with a real client against the sandbox and a
 * controllable clock).
 */
import { roundTo } from '../../../../nodes/CurrencyRate/actions/rate/convert.operation';
import { RateBook, RateCache } from '../../../../nodes/shared/rates/rateBook';
import { parseRateAnswer, readRate } from '../../../../nodes/shared/rates/rateTable';
import { ApiClient, ApiError, TokenCache, parseCredentials } from '../../../../nodes/shared/transport';
import { RATES_PATH, requestsTo } from '../../../harness/currencyRateNode';
import { useSandbox } from '../../../harness/useSandbox';

describe('parseRateAnswer', () => {
	it('reads the known shape, numbers or strings, and keeps the provider order', () => {
		const table = parseRateAnswer(
			'cimb',
			{
				success: true,
				response: [
					{ name: 'USD', rate_sell: '14080.00', rate_buy: '13940.00', rate_avg: '14010.00', provider: 'cimb' },
					{ name: 'eur', rate_sell: 15100.5, rate_buy: 14900.5, rate_avg: 15000.5, provider: 'cimb' },
					{ name: 'SGD', rate_sell: '10,500.25', rate_buy: '10,400.75', provider: 'cimb' },
				],
			},
			Date.UTC(2026, 0, 2, 3, 4, 5),
		);
		expect(table.provider).toBe('cimb');
		expect(table.fetchedAt).toBe('2026-01-02T03:04:05.000Z');
		expect(table.codes).toEqual(['USD', 'EUR', 'SGD']);
		expect(table.quotes.get('USD')).toEqual({ buy: 13940, sell: 14080, average: 14010 });
		expect(table.quotes.get('EUR')).toEqual({ buy: 14900.5, sell: 15100.5, average: 15000.5 });
		// No average in the answer: the middle of buy and sell.
		expect(table.quotes.get('SGD')).toEqual({ buy: 10400.75, sell: 10500.25, average: 10450.5 });
	});

	it('keeps the first row of a duplicated currency and marks unusable quotes as null', () => {
		const table = parseRateAnswer(
			'x',
			{ response: [{ name: 'USD', rate_buy: 0, rate_sell: 'n/a', rate_avg: 1 }, { name: 'USD', rate_buy: 2, rate_sell: 2, rate_avg: 2 }, { rate_buy: 1 }, null] },
			0,
		);
		expect(table.codes).toEqual(['USD']);
		expect(table.quotes.get('USD')).toEqual({ buy: null, sell: null, average: 1 });
	});

	it('raises an unexpected-answer ApiError when the answer holds no list of rates', () => {
		let thrown: unknown;
		try {
			parseRateAnswer('bca', { success: true, rates: 'soon' }, 0);
		} catch (error) {
			thrown = error;
		}
		expect(thrown).toBeInstanceOf(ApiError);
		expect((thrown as ApiError).kind).toBe('unexpected-answer');
		expect((thrown as ApiError).message).toBe(
			'Get Rates (GET /api/rate/1.0/get function=getkurs) failed: the answer holds no list of rates ("response"): "{"success":true,"rates":"soon"}"',
		);
	});

	it.each([
		[14080, 14080],
		['14080.00', 14080],
		[' 1.5e3 ', 1500],
		['14,080.5', 14080.5],
		['14.080,50', null],
		['1,2', null],
		['', null],
		[-3, null],
		[0, null],
		[Number.NaN, null],
		[null, null],
		[true, null],
	])('readRate(%p) = %p', (input, expected) => {
		expect(readRate(input)).toBe(expected);
	});
});

describe('roundTo', () => {
	it.each([
		[1.005, 2, 1.01],
		[-1.005, 2, -1.01],
		[2.5, 0, 3],
		[-2.5, 0, -3],
		[61.53846153846154, 2, 61.54],
		[1234567.891, 1, 1234567.9],
		[0.0000001, 2, 0],
		[-0.001, 2, 0],
		[1e-7, 8, 1e-7],
	])('roundTo(%p, %p) = %p', (value, places, expected) => {
		expect(Object.is(roundTo(value, places), expected)).toBe(true);
	});
});

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
		for (let i = 0; i < 205; i++) cache.set(`k${i}`, parseRateAnswer('a', { response: [] }, day + i), day + i);
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
		client = new ApiClient(parseCredentials({ baseUrl: sandbox.url, clientId: 'demo-client', clientSecret: 'demo-secret' }), new TokenCache());
	});

	it('gives 1,000 concurrent callers the same table from one request', async () => {
		const book = new RateBook({ client, sourceKey: 's', keepMinutes: 0, cache: new RateCache() });
		const tables = await Promise.all(Array.from({ length: 1000 }, async () => await book.tableFor('bca', '1.0')));
		expect(new Set(tables).size).toBe(1);
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(1);
	});

	it('shares a refusal too: every caller gets the same error from one request', async () => {
		const book = new RateBook({ client, sourceKey: 's', keepMinutes: 0, cache: new RateCache() });
		const results = await Promise.allSettled(Array.from({ length: 50 }, async () => await book.tableFor('nobank', '1.0')));
		expect(results.every((r) => r.status === 'rejected' && (r.reason as ApiError).kind === 'rejected')).toBe(true);
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(1);
	});

	it('reuses kept rates across books only within "Keep Rates For", measured from the fetch', async () => {
		const cache = new RateCache();
		let now = 5_000_000;
		const newBook = (keepMinutes: number) => new RateBook({ client, sourceKey: 's', keepMinutes, cache, now: () => now });
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
