/** Reading getkurs answers of every known shape into a rate table (nodes/shared/rates/rateTable.ts). */
import { parseRateAnswer, readRate } from '../../../../nodes/shared/rates/rateTable';
import { ApiError } from '../../../../nodes/shared/transport';

describe('parseRateAnswer', () => {
	it('reads the known shape, numbers or strings, and keeps the provider order', () => {
		const table = parseRateAnswer(
			'cimb',
			{
				success: true,
				response: [
					{
						name: 'USD',
						rate_sell: '14080.00',
						rate_buy: '13940.00',
						rate_avg: '14010.00',
						provider: 'cimb',
					},
					{
						name: 'eur',
						rate_sell: 15100.5,
						rate_buy: 14900.5,
						rate_avg: 15000.5,
						provider: 'cimb',
					},
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
			{
				response: [
					{ name: 'USD', rate_buy: 0, rate_sell: 'n/a', rate_avg: 1 },
					{ name: 'USD', rate_buy: 2, rate_sell: 2, rate_avg: 2 },
					{ rate_buy: 1 },
					null,
				],
			},
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
