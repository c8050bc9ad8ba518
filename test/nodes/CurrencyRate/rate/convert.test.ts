/**
 * Currency Rate → Rate → Convert through n8n's engine against the sandbox: the arithmetic and its
 * rounding, the request the sandbox received, one rates request per run however many items, the
 * option that keeps rates across executions, the errors of bad inputs; converting in place (the
 * default: the input item's fields, the converted amount under the Output Field and the rate used
 * beside it) or giving the conversion details, after Rate → Get (a row of another currency
 * keeps none of its rates), and mapped amount and currencies read straight from the item giving
 * what n8n's evaluation gives.
 */
import {
	NodeConnectionTypes,
	type IDataObject,
	type INode,
	type INodeParameters,
} from 'n8n-workflow';

import { startSandbox } from '../../../../sandbox/server';
import { PACKAGE, runWorkflow, sandboxCredential } from '../../../harness/engine';
import { useSandbox } from '../../../harness/useSandbox';
import { useVirtualTime } from '../../../harness/virtualTime';
import {
	RATES_PATH,
	RATE_TOKEN_PATH,
	expectOneRatesRequest,
	jsonOf,
	requestsTo,
	runCurrencyRate,
	sandboxCodes,
	sandboxQuote,
} from '../../../harness/currencyRateNode';

const sandbox = useSandbox();

/** The conversion's details as the output (Include Input Fields off), unless a test says otherwise. */
const convert = (parameters: INodeParameters): INodeParameters => ({
	resource: 'rate',
	operation: 'convert',
	provider: 'bca',
	includeInputFields: false,
	...parameters,
});
/** A node as the editor adds it. */
const NEW_NODE = { typeVersion: 1 };
/** Convert with its defaults: in place, with the rate used beside the amount. */
const inPlace = (parameters: INodeParameters): INodeParameters => ({
	...convert(parameters),
	includeInputFields: true,
});

const usd = () => sandboxQuote('bca', 'USD').average;
const eur = () => sandboxQuote('bca', 'EUR').average;

describe('rate → convert', () => {
	it('converts a currency into the base currency and reports the rate used and the inputs', async () => {
		const { output, error } = await runCurrencyRate(
			sandbox,
			convert({ amount: 100, fromCurrency: 'usd', toCurrency: 'IDR' }),
		);
		expect(error).toBeUndefined();
		expectOneRatesRequest(sandbox, 'bca');
		const items = output('Node');
		expect(items).toHaveLength(1);
		expect(items[0].pairedItem).toEqual({ item: 0 });
		expect(items[0].json).toEqual({
			convertedAmount: 1625000,
			rate: 16250,
			amount: 100,
			fromCurrency: 'USD',
			toCurrency: 'IDR',
			rateType: 'average',
			decimalPlaces: 2,
			provider: 'bca',
			baseCurrency: 'IDR',
			fromRate: 16250,
			toRate: 1,
			fetchedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
		});
	});

	it('converts out of the base currency and rounds to the decimal places asked', async () => {
		const { output, error } = await runCurrencyRate(
			sandbox,
			convert({
				amount: 1_000_000,
				fromCurrency: 'IDR',
				toCurrency: 'USD',
				decimalPlaces: '={{ $json.places }}',
			}),
			[{ places: 2 }, { places: 0 }, { places: 4 }],
		);
		expect(error).toBeUndefined();
		expect(jsonOf(output('Node')).map((j) => j.convertedAmount)).toEqual([61.54, 62, 61.5385]);
		expect(output('Node')[0].json.rate).toBeCloseTo(1 / 16250, 15);
		expectOneRatesRequest(sandbox, 'bca');
	});

	it('crosses two foreign currencies through the base: amount × rate(from) / rate(to)', async () => {
		const { output, error } = await runCurrencyRate(
			sandbox,
			convert({ amount: 250, fromCurrency: 'SGD', toCurrency: 'eur', decimalPlaces: 6 }),
		);
		expect(error).toBeUndefined();
		const sgd = sandboxQuote('bca', 'SGD').average;
		const eur = sandboxQuote('bca', 'EUR').average;
		const json = output('Node')[0].json;
		expect(json.fromRate).toBe(sgd);
		expect(json.toRate).toBe(eur);
		expect(json.rate).toBeCloseTo(sgd / eur, 12);
		expect(json.convertedAmount).toBe(Math.round(((250 * sgd) / eur) * 1e6) / 1e6);
		// Hand-checked: 250 × 12130 / 17650 = 171.8130311…
		expect(json.convertedAmount).toBe(171.813031);
	});

	it('uses the buy or the sell rate when asked', async () => {
		const { output, error } = await runCurrencyRate(
			sandbox,
			convert({
				amount: 100,
				fromCurrency: 'USD',
				toCurrency: 'IDR',
				rateType: '={{ $json.rate }}',
			}),
			[{ rate: 'buy' }, { rate: 'sell' }, { rate: 'average' }],
		);
		expect(error).toBeUndefined();
		expect(jsonOf(output('Node')).map((j) => [j.rateType, j.convertedAmount])).toEqual([
			['buy', 1620125],
			['sell', 1629875],
			['average', 1625000],
		]);
	});

	it('parses string rates (cimb) and numeric-string amounts, and rounds halves away from zero', async () => {
		const { output, error } = await runCurrencyRate(
			sandbox,
			{
				resource: 'rate',
				operation: 'convert',
				provider: '={{ $json.provider }}',
				amount: '={{ $json.amount }}',
				fromCurrency: '={{ $json.from }}',
				toCurrency: 'IDR',
				includeInputFields: false,
			},
			[
				{ provider: 'cimb', amount: ' 1234.50 ', from: 'usd' },
				{ provider: 'bca', amount: -1.005, from: 'idr' },
				{ provider: 'bca', amount: 1.005, from: 'IDR' },
			],
		);
		expect(error).toBeUndefined();
		const json = jsonOf(output('Node'));
		expect(json[0]).toMatchObject({
			amount: 1234.5,
			fromRate: sandboxQuote('cimb', 'USD').average,
			provider: 'cimb',
		});
		expect(json[0].convertedAmount).toBe(
			Math.round(1234.5 * sandboxQuote('cimb', 'USD').average * 100) / 100,
		);
		expect(json[1]).toMatchObject({ convertedAmount: -1.01, rate: 1 });
		expect(json[2]).toMatchObject({ convertedAmount: 1.01, rate: 1 });
		expect(
			requestsTo(sandbox, RATES_PATH)
				.map((r) => r.params?.currency_id_provider)
				.sort(),
		).toEqual(['bca', 'cimb']);
	});
});

describe('rate → convert: one rates request per run', () => {
	it('200 items with mixed currencies make exactly 1 token request and 1 rates request', async () => {
		const codes = ['USD', 'EUR', 'SGD', 'JPY', 'IDR'];
		const items = Array.from({ length: 200 }, (_, i) => ({
			amount: i + 1,
			from: codes[i % codes.length],
			to: codes[(i + 1) % codes.length],
		}));
		const { output, error } = await runCurrencyRate(
			sandbox,
			convert({
				amount: '={{ $json.amount }}',
				fromCurrency: '={{ $json.from }}',
				toCurrency: '={{ $json.to }}',
				rateType: 'sell',
			}),
			items,
		);
		expect(error).toBeUndefined();

		expect(sandbox.stats().tokensIssued.rate).toBe(1);
		expect(sandbox.stats().requestsByPath).toEqual({ [RATE_TOKEN_PATH]: 1, [RATES_PATH]: 1 });
		expect(sandbox.requests()).toHaveLength(2);
		expectOneRatesRequest(sandbox, 'bca');

		const sell = (code: string) => (code === 'IDR' ? 1 : sandboxQuote('bca', code).sell);
		const out = output('Node');
		expect(out).toHaveLength(200);
		out.forEach((item, i) => {
			const { amount, from, to } = items[i];
			expect(item.pairedItem).toEqual({ item: i });
			expect(item.json).toMatchObject({
				amount,
				fromCurrency: from,
				toCurrency: to,
				rateType: 'sell',
			});
			expect(item.json.convertedAmount).toBeCloseTo((amount * sell(from)) / sell(to), 2);
		});
	});
});

describe('rate → convert: "Keep Rates For (Minutes)"', () => {
	const parameters = (keepRatesMinutes: number, version = '1.0') =>
		convert({
			amount: 10,
			fromCurrency: 'USD',
			toCurrency: 'IDR',
			options: { keepRatesMinutes, version },
		});

	// Kept rates outlive an execution: every test here asks another sandbox (another base URL).
	beforeEach(async () => {
		await sandbox.restart();
	});

	it("when on, a second execution reuses the first one's rates: 2 executions, 1 rates request", async () => {
		const first = await runCurrencyRate(sandbox, parameters(5));
		const second = await runCurrencyRate(sandbox, parameters(5));
		expect(first.error).toBeUndefined();
		expect(second.error).toBeUndefined();
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(1);
		// The kept rates say when they were really fetched.
		expect(second.output('Node')[0].json.fetchedAt).toBe(first.output('Node')[0].json.fetchedAt);
		expect(second.output('Node')[0].json.convertedAmount).toBe(162500);
	});

	it('when off (the default), every execution fetches: 2 executions, 2 rates requests', async () => {
		await runCurrencyRate(sandbox, parameters(0));
		await runCurrencyRate(sandbox, convert({ amount: 10, fromCurrency: 'USD', toCurrency: 'IDR' }));
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(2);
	});

	it('keeps rates per provider, version and service: another version or base URL fetches its own', async () => {
		const other = await startSandbox();
		try {
			await runCurrencyRate(sandbox, parameters(5));
			await runCurrencyRate(sandbox, parameters(5, '1.1'));
			await runCurrencyRate(other, parameters(5));
			await runCurrencyRate(sandbox, parameters(0));
			await runCurrencyRate(sandbox, parameters(5));
			expect(requestsTo(sandbox, RATES_PATH).map((r) => r.params?.version)).toEqual([
				'1.0',
				'1.1',
				'1.0',
			]);
			expect(requestsTo(other, RATES_PATH)).toHaveLength(1);
		} finally {
			await other.close();
		}
	});

	it('keeps tables within a byte bound: the oldest goes first', async () => {
		const versions = Array.from({ length: 400 }, (_, n) => ({ v: `v${n}` }));
		const mapped = convert({
			amount: 1,
			fromCurrency: 'USD',
			toCurrency: 'IDR',
			options: { keepRatesMinutes: 5, version: '={{ $json.v }}' },
		});
		expect((await runCurrencyRate(sandbox, mapped, versions)).error).toBeUndefined();
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(400);
		await runCurrencyRate(sandbox, mapped, [{ v: 'v399' }, { v: 'v0' }]);
		expect(
			requestsTo(sandbox, RATES_PATH)
				.slice(400)
				.map((r) => r.params?.version),
		).toEqual(['v0']);
	});

	it('refuses a value out of its range before any request, naming the field, the value and the range', async () => {
		for (const keepRatesMinutes of ['={{ 2000 }}', '={{ -5 }}', '={{ "soon" }}']) {
			const { error } = await runCurrencyRate(
				sandbox,
				convert({
					amount: 1,
					fromCurrency: 'USD',
					toCurrency: 'IDR',
					options: { keepRatesMinutes },
				}),
			);
			const value = keepRatesMinutes.slice(4, -3);
			expect(error?.message).toBe(
				`Field "Keep Rates For (Minutes)" is ${value}, not a number from 0 to 1440 [item 0]`,
			);
			expect(error?.description).toBe(
				'Enter a number from 0 to 1440, or leave it out for the default (0).',
			);
		}
		expect(sandbox.requests()).toHaveLength(0);
	});

	describe('measured from the fetch', () => {
		const time = useVirtualTime();

		it('reuses kept rates only while they are younger than the reader allows', async () => {
			const first = await runCurrencyRate(sandbox, parameters(10));
			time.set(time.now() + 9 * 60_000);
			const second = await runCurrencyRate(sandbox, parameters(10));
			expect(second.output('Node')[0].json.fetchedAt).toBe(first.output('Node')[0].json.fetchedAt);
			expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(1);
			// A reader that allows less than the entry's age fetches again.
			await runCurrencyRate(sandbox, parameters(5));
			expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(2);
			time.set(time.now() + 11 * 60_000);
			await runCurrencyRate(sandbox, parameters(10));
			expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(3);
		});
	});
});

describe('rate → convert: bad inputs', () => {
	it('names the item and field of a non-numeric amount', async () => {
		const { error } = await runCurrencyRate(
			sandbox,
			convert({ amount: '={{ $json.amount }}', fromCurrency: 'USD', toCurrency: 'IDR' }),
			[{ amount: 5 }, { amount: '12,5.3' }],
		);
		expect(error?.message).toBe('Field "Amount" is not a number: "12,5.3" [item 1]');
		expect(error?.description).toContain('Write it as 1234.56, 1,234.56 or 1.234,56');
	});

	it('names an empty amount', async () => {
		const { error } = await runCurrencyRate(
			sandbox,
			convert({ amount: '={{ $json.amount }}', fromCurrency: 'USD', toCurrency: 'IDR' }),
			[{ amount: '' }],
		);
		expect(error?.message).toBe('Field "Amount" is empty [item 0]');
	});

	it('lists the codes the provider offers, base currency included, for an unknown currency', async () => {
		const { error } = await runCurrencyRate(
			sandbox,
			convert({ amount: 1, fromCurrency: 'USD', toCurrency: 'xyz' }),
		);
		expect(error?.message).toBe(
			`Field "To Currency" holds "XYZ", which provider "bca" does not offer; it offers IDR (base currency), ${sandboxCodes('bca').join(', ')} [item 0]`,
		);
	});

	it('rejects decimal places outside 0–10', async () => {
		const { error } = await runCurrencyRate(
			sandbox,
			convert({ amount: 1, fromCurrency: 'USD', toCurrency: 'IDR', decimalPlaces: '={{ 2.5 }}' }),
		);
		expect(error?.message).toBe(
			'Field "Decimal Places" is 2.5, not a whole number from 0 to 10 [item 0]',
		);
		expect(error?.description).toMatch(
			/^Enter a whole number from 0 to 10, or leave it out for the default \(2\)\./,
		);
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(0);
	});

	it('with Continue On Fail, gives error items in place and converts the other items', async () => {
		const { output, error } = await runCurrencyRate(
			sandbox,
			convert({
				amount: '={{ $json.amount }}',
				fromCurrency: '={{ $json.from }}',
				toCurrency: 'IDR',
			}),
			[
				{ amount: 2, from: 'USD' },
				{ amount: 'two', from: 'USD' },
				{ amount: 3, from: 'ABC' },
				{ amount: 4, from: 'eur' },
			],
			{ continueOnFail: true },
		);
		expect(error).toBeUndefined();
		const items = output('Node');
		expect(items.map((item) => item.pairedItem)).toEqual([
			{ item: 0 },
			{ item: 1 },
			{ item: 2 },
			{ item: 3 },
		]);
		expect(items[0].json.convertedAmount).toBe(32500);
		expect(items[1].json).toEqual({
			error: 'Field "Amount" is not a number: "two" [item 1]',
			details: {
				item: 1,
				kind: 'input',
				description: 'Write it as 1234.56, 1,234.56 or 1.234,56, or set Options → Number Format.',
				deliveryUnknown: false,
			},
		});
		expect(items[2].json.error).toMatch(
			/^Field "From Currency" holds "ABC", which provider "bca" does not offer; it offers IDR \(base currency\), USD, /,
		);
		expect(items[3].json.convertedAmount).toBe(4 * sandboxQuote('bca', 'EUR').average);
		expectOneRatesRequest(sandbox, 'bca');
	});
});

describe('convert beside the rate used (the default)', () => {
	it('keeps the input fields and adds the converted amount, the rate used and when the rates were fetched', async () => {
		const { output, error } = await runCurrencyRate(
			sandbox,
			inPlace({ amount: '={{ $json.amount }}', fromCurrency: 'USD', toCurrency: 'IDR' }),
			[{ invoice: 'A-1', amount: 100 }],
			NEW_NODE,
		);
		expect(error).toBeUndefined();
		expect(jsonOf(output('Node'))).toEqual([
			{
				invoice: 'A-1',
				amount: 100,
				convertedAmount: 100 * usd(),
				conversion: {
					rate: usd(),
					fromCurrency: 'USD',
					toCurrency: 'IDR',
					rateType: 'average',
					provider: 'bca',
					fetchedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/),
				},
			},
		]);
	});

	it('Rate Details Field names where they go (dots reach into objects); empty adds none', async () => {
		const named = await runCurrencyRate(
			sandbox,
			inPlace({ amount: 2, fromCurrency: 'USD', toCurrency: 'IDR', rateDetailsField: 'fx.used' }),
			[{}],
			NEW_NODE,
		);
		expect(named.output('Node')[0].json).toMatchObject({
			convertedAmount: 2 * usd(),
			fx: { used: { rate: usd(), fromCurrency: 'USD', toCurrency: 'IDR' } },
		});
		const none = await runCurrencyRate(
			sandbox,
			inPlace({ amount: 2, fromCurrency: 'USD', toCurrency: 'IDR', rateDetailsField: '' }),
			[{}],
			NEW_NODE,
		);
		expect(none.output('Node')[0].json).toEqual({ convertedAmount: 2 * usd() });
	});

	it('a Rate Details Field that is no field name is refused before the rates request', async () => {
		const { error } = await runCurrencyRate(
			sandbox,
			inPlace({ amount: 2, fromCurrency: 'USD', toCurrency: 'IDR', rateDetailsField: 'a..b' }),
			[{}],
			NEW_NODE,
		);
		expect(error?.message).toMatch(/Field "Rate Details Field" is not a field name/);
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(0);
	});

	it('a Rate Details Field where the Output Field puts the converted amount is refused, not written over it', async () => {
		const cases: Array<[string, string]> = [
			['convertedAmount', 'convertedAmount'],
			['totals', 'totals.rate'],
			['fx.amount', 'fx'],
		];
		for (const [outputField, rateDetailsField] of cases) {
			const { error, output } = await runCurrencyRate(
				sandbox,
				inPlace({
					amount: 2,
					fromCurrency: 'USD',
					toCurrency: 'IDR',
					outputField,
					rateDetailsField,
				}),
				[{ invoice: 'A-1' }, { invoice: 'A-2' }],
				{ ...NEW_NODE, continueOnFail: true },
			);
			expect(error).toBeUndefined();
			expect(jsonOf(output('Node')).map((json) => json.error)).toEqual([
				`Field "Rate Details Field" is "${rateDetailsField}", where the Output Field ("${outputField}") puts the converted amount: the rate details would replace it [item 0]`,
				`Field "Rate Details Field" is "${rateDetailsField}", where the Output Field ("${outputField}") puts the converted amount: the rate details would replace it [item 1]`,
			]);
			expect(output('Node')[0].json.details).toMatchObject({
				description:
					'Give the rate details another field (e.g. conversion), or leave Rate Details Field empty for none.',
			});
		}
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(0);
	});
});

/** Start → Currency Rate → Get (one item per currency) → Currency Rate → Convert. */
async function getThenConvert(currencies: string, parameters: INodeParameters) {
	const node = (name: string, x: number, nodeParameters: INodeParameters): INode => ({
		id: name,
		name,
		type: `${PACKAGE}.currencyRate`,
		typeVersion: 1,
		position: [x, 0],
		parameters: { resource: 'rate', provider: 'bca', ...nodeParameters },
		credentials: { messagingRateApi: { id: 'cred-1', name: 'Sandbox' } },
	});
	const link = (to: string) => ({
		main: [[{ node: to, type: NodeConnectionTypes.Main, index: 0 }]],
	});
	return await runWorkflow(
		{
			nodes: [
				{ ...node('Start', 0, {}), type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
				node('Get', 200, { operation: 'get', currencies }),
				node('Convert', 400, { operation: 'convert', ...parameters }),
			],
			connections: { Start: link('Get'), Get: link('Convert') },
		},
		sandboxCredential(sandbox.url),
	);
}

describe('convert after Rate → Get, Include Input Fields on (the default)', () => {
	const conversion = (fromCurrency: string, rate: number) => ({
		rate,
		fromCurrency,
		toCurrency: 'IDR',
		rateType: 'average',
		provider: 'bca',
		fetchedAt: expect.any(String),
	});

	it("puts the conversion beside its own currency's row, not beside other currencies' rates", async () => {
		const { output, error } = await getThenConvert('USD, EUR, JPY', {
			amount: 100,
			fromCurrency: 'USD',
			toCurrency: 'IDR',
		});
		expect(error).toBeUndefined();
		const [usdRow] = jsonOf(output('Get'));
		expect(jsonOf(output('Convert'))).toEqual([
			{ ...usdRow, convertedAmount: 100 * usd(), conversion: conversion('USD', usd()) },
			{ convertedAmount: 100 * usd(), conversion: conversion('USD', usd()) },
			{ convertedAmount: 100 * usd(), conversion: conversion('USD', usd()) },
		]);
		expect(output('Convert').map((item) => item.pairedItem)).toEqual([
			{ item: 0 },
			{ item: 1 },
			{ item: 2 },
		]);
	});

	it('converts each row with From Currency mapped to its currency, keeping the row', async () => {
		const { output, error } = await getThenConvert('USD, EUR', {
			amount: 100,
			fromCurrency: '={{ $json.currency }}',
			toCurrency: 'IDR',
		});
		expect(error).toBeUndefined();
		const rows = jsonOf(output('Get'));
		expect(jsonOf(output('Convert'))).toEqual([
			{ ...rows[0], convertedAmount: 100 * usd(), conversion: conversion('USD', usd()) },
			{ ...rows[1], convertedAmount: 100 * eur(), conversion: conversion('EUR', eur()) },
		]);
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(2);
	});
});

describe('convert in place, without the rate details', () => {
	it('keeps the input fields and adds the converted amount as "convertedAmount" by default', async () => {
		const items = [{ invoice: 'A-1', amount: 100, customer: { name: 'Ana' } }];
		const { output, error } = await runCurrencyRate(
			sandbox,
			inPlace({
				rateDetailsField: '',
				amount: '={{ $json.amount }}',
				fromCurrency: 'USD',
				toCurrency: 'IDR',
			}),
			items,
			NEW_NODE,
		);
		expect(error).toBeUndefined();
		expect(jsonOf(output('Node'))).toEqual([
			{ invoice: 'A-1', amount: 100, customer: { name: 'Ana' }, convertedAmount: 100 * usd() },
		]);
		expect(output('Node')[0].pairedItem).toEqual({ item: 0 });
	});

	it('writes to the Output Field, into objects with dots, without changing the input item', async () => {
		const items = [{ total: 10, totals: { usd: 10 } }];
		const { output, error } = await runCurrencyRate(
			sandbox,
			inPlace({
				rateDetailsField: '',
				amount: '={{ $json.total }}',
				fromCurrency: 'USD',
				toCurrency: 'IDR',
				outputField: 'totals.idr',
			}),
			items,
			NEW_NODE,
		);
		expect(error).toBeUndefined();
		expect(jsonOf(output('Node'))).toEqual([{ total: 10, totals: { usd: 10, idr: 10 * usd() } }]);
		expect(jsonOf(output('Items'))).toEqual([{ total: 10, totals: { usd: 10 } }]);
	});

	it('gives the conversion details when Include Input Fields is off, with the amount under the Output Field', async () => {
		const { output, error } = await runCurrencyRate(
			sandbox,
			convert({
				amount: 2,
				fromCurrency: 'USD',
				toCurrency: 'IDR',
				includeInputFields: false,
				outputField: 'idr',
			}),
			[{ ignored: true }],
			NEW_NODE,
		);
		expect(error).toBeUndefined();
		const [json] = jsonOf(output('Node'));
		expect(json).toMatchObject({
			idr: 2 * usd(),
			amount: 2,
			fromCurrency: 'USD',
			toCurrency: 'IDR',
			provider: 'bca',
		});
		expect(json).not.toHaveProperty('ignored');
		expect(json).not.toHaveProperty('convertedAmount');
	});
});

describe('mapped amount and currencies', () => {
	it('read straight from the item give what n8n evaluates', async () => {
		const items = Array.from({ length: 30 }, (_, i) => ({
			amount: i % 3 === 0 ? `${i}.5` : i * 1.25,
			from: ['USD', 'eur', 'SGD'][i % 3],
			to: ['IDR', 'usd'][i % 2],
		}));
		const direct = await runCurrencyRate(
			sandbox,
			convert({
				amount: '={{ $json.amount }}',
				fromCurrency: '={{ $json.from }}',
				toCurrency: '={{ $json["to"] }}',
				includeInputFields: false,
			}),
			items,
			NEW_NODE,
		);
		const byN8n = await runCurrencyRate(
			sandbox,
			convert({
				amount: '={{ ($json.amount) }}',
				fromCurrency: '={{ ($json.from) }}',
				toCurrency: '={{ ($json["to"]) }}',
				includeInputFields: false,
			}),
			items,
			NEW_NODE,
		);
		expect(direct.error).toBeUndefined();
		const withoutTime = (json: IDataObject) => ({ ...json, fetchedAt: null });
		expect(jsonOf(direct.output('Node')).map(withoutTime)).toEqual(
			jsonOf(byN8n.output('Node')).map(withoutTime),
		);
		expect(direct.output('Node')).toHaveLength(30);
	});
});

describe('rounding: half away from zero, as the decimal the number stands for', () => {
	const cases: Array<[number, number, number]> = [
		[1.005, 2, 1.01],
		[-1.005, 2, -1.01],
		[2.5, 0, 3],
		[-2.5, 0, -3],
		[61.53846153846154, 2, 61.54],
		[1234567.891, 1, 1234567.9],
		[0.0000001, 2, 0],
		[-0.001, 2, 0],
		[1e-7, 8, 1e-7],
	];

	it.each(cases)('%p to %p places is %p', async (amount, places, expected) => {
		const { output, error } = await runCurrencyRate(
			sandbox,
			convert({ amount, fromCurrency: 'IDR', toCurrency: 'IDR', decimalPlaces: places }),
		);
		expect(error).toBeUndefined();
		expect(Object.is(output('Node')[0].json.convertedAmount, expected)).toBe(true);
	});
});
