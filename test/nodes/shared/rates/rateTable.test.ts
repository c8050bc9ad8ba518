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
		expect(table.quotes.get('USD')).toEqual({ buy: 13940, sell: 14080, average: 14010, unit: 1 });
		expect(table.quotes.get('EUR')).toEqual({
			buy: 14900.5,
			sell: 15100.5,
			average: 15000.5,
			unit: 1,
		});
		// No average in the answer: the middle of buy and sell.
		expect(table.quotes.get('SGD')).toEqual({
			buy: 10400.75,
			sell: 10500.25,
			average: 10450.5,
			unit: 1,
		});
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
		expect(table.quotes.get('USD')).toEqual({ buy: null, sell: null, average: 1, unit: 1 });
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

	describe('numbers that read two ways ("17.597": 17.597 or 17,597)', () => {
		const rows = (...pairs: Array<[string, unknown]>) => ({
			response: pairs.map(([name, value]) => ({
				name,
				rate_buy: value,
				rate_sell: value,
				rate_avg: value,
			})),
		});
		const average = (table: ReturnType<typeof parseRateAnswer>, code: string) =>
			table.quotes.get(code)?.average;

		it('the other quotes of the same row decide first', () => {
			const table = parseRateAnswer(
				'x',
				{ response: [{ name: 'ABC', rate_buy: '17.597', rate_sell: '17.598,50' }] },
				0,
			);
			expect(table.quotes.get('ABC')).toMatchObject({ buy: 17597, sell: 17598.5 });
		});

		it("a currency's plausible range decides before other rows' format", () => {
			const table = parseRateAnswer('x', rows(['USD', '17597.05'], ['EUR', '17.597']), 0);
			expect(average(table, 'EUR')).toBe(17597);
		});

		it('the known rate decides, whatever this answer says', () => {
			const known = { quotes: new Map([['ABC', { average: 17597 }]]) };
			expect(
				average(
					parseRateAnswer('x', rows(['USD', '17597.05'], ['ABC', '17.597']), 0, known),
					'ABC',
				),
			).toBe(17597);
		});

		it("the provider's known format decides over this answer's other rows", () => {
			const table = parseRateAnswer('x', rows(['USD', '17597.05'], ['ABC', '17.597']), 0, {
				format: 'comma',
			});
			expect(average(table, 'ABC')).toBe(17597);
			expect(table.format).toBe('comma');
		});

		it("otherwise the answer's rows when they agree; when they disagree the quote is not guessed", () => {
			expect(
				average(parseRateAnswer('x', rows(['USD', '17.597,05'], ['ABC', '17.597']), 0), 'ABC'),
			).toBe(17597);
			expect(
				average(parseRateAnswer('x', rows(['USD', '17597.05'], ['ABC', '17.597']), 0), 'ABC'),
			).toBe(17.597);
			const mixed = parseRateAnswer(
				'x',
				rows(['USD', '17597.05'], ['GBP', '20.690,10'], ['ABC', '17.597']),
				0,
			);
			expect(mixed.quotes.get('ABC')).toEqual({ buy: null, sell: null, average: null, unit: 1 });
			expect(mixed.unread).toEqual([
				'ABC buy "17.597"',
				'ABC sell "17.597"',
				'ABC average "17.597"',
			]);
		});
	});

	describe('units', () => {
		it.each([
			[{ name: 'JPY', rate_avg: 10605, unit: 100 }, 'JPY', 106.05, 100],
			[{ name: 'JPY', rate_avg: '10605', per: '100' }, 'JPY', 106.05, 100],
			[{ name: 'JPY 100', rate_avg: 10605 }, 'JPY', 106.05, 100],
			[{ name: '100 JPY', rate_avg: 10605 }, 'JPY', 106.05, 100],
			[{ name: 'JPY/100', rate_avg: 10605 }, 'JPY', 106.05, 100],
			[{ name: 'jpy (100)', rate_avg: 10605 }, 'JPY', 106.05, 100],
			// Not stated: a yen at 10,605 rupiah is outside its plausible range, per 100 inside it.
			[{ name: 'JPY', rate_avg: 10605 }, 'JPY', 106.05, 100],
			[{ name: 'JPY', rate_avg: 106.05 }, 'JPY', 106.05, 1],
			[{ name: 'VND', rate_avg: 640 }, 'VND', 0.64, 1000],
			// A currency worth much per unit is never taken as quoted per 100.
			[{ name: 'USD', rate_avg: 1625000 }, 'USD', 1625000, 1],
			[{ name: 'USD', rate_avg: 16250, unit: 7 }, 'USD', 16250, 1],
		])('%j → %s %d per 1 unit (unit %d)', (answerRow, code, perUnit, unit) => {
			const table = parseRateAnswer('x', { response: [answerRow] }, 0);
			expect(table.quotes.get(code)).toMatchObject({ average: perUnit, unit });
		});

		it('the known rate per 1 unit decides a unit left unstated', () => {
			const known = { quotes: new Map([['JPY', { average: 106 }]]) };
			expect(
				parseRateAnswer('x', { response: [{ name: 'JPY', rate_avg: 10600 }] }, 0, known).quotes.get(
					'JPY',
				),
			).toMatchObject({ average: 106, unit: 100 });
		});
	});

	it('currency names: codes of letters and digits, at most 12 characters; at most 200 currencies', () => {
		const table = parseRateAnswer(
			'x',
			{
				response: [
					{ name: 'X'.repeat(200_000), rate_avg: 1 },
					{ name: 'US D', rate_avg: 1 },
					{ name: '<script>', rate_avg: 1 },
					{ name: 'usd', rate_avg: 16250 },
					...Array.from({ length: 300 }, (_, n) => ({ name: `C${n}`, rate_avg: 1 })),
				],
			},
			0,
		);
		expect(table.codes[0]).toBe('USD');
		expect(table.codes).toHaveLength(200);
		expect(table.codes.every((code) => /^[A-Z0-9]{2,12}$/.test(code))).toBe(true);
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
