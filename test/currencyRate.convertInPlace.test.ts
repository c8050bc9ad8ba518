/**
 * Currency Rate → Convert in place, through n8n's engine against the sandbox: version 1.1 keeps
 * the input item's fields and adds the converted amount under the Output Field; version 1 keeps
 * giving the conversion details; several amount fields converted at once; mapped amount and
 * currencies read straight from the item give what n8n's evaluation gives.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { useSandbox } from './harness/useSandbox';
import { RATES_PATH, jsonOf, requestsTo, runCurrencyRate, sandboxQuote } from './harness/currencyRateNode';

const sandbox = useSandbox();

const convert = (parameters: INodeParameters): INodeParameters => ({ resource: 'rate', operation: 'convert', provider: 'bca', ...parameters });
/** A node as the editor adds it today (version 1.1). */
const NEW_NODE = { typeVersion: 1.1 };

const usd = () => sandboxQuote('bca', 'USD').average;
const eur = () => sandboxQuote('bca', 'EUR').average;
const round2 = (value: number) => Math.round(value * 100) / 100;

describe('convert in place (version 1.1)', () => {
	it('keeps the input fields and adds the converted amount as "convertedAmount" by default', async () => {
		const items = [{ invoice: 'A-1', amount: 100, customer: { name: 'Ana' } }];
		const { output, error } = await runCurrencyRate(sandbox, convert({ amount: '={{ $json.amount }}', fromCurrency: 'USD', toCurrency: 'IDR' }), items, NEW_NODE);
		expect(error).toBeUndefined();
		expect(jsonOf(output('Node'))).toEqual([{ invoice: 'A-1', amount: 100, customer: { name: 'Ana' }, convertedAmount: 100 * usd() }]);
		expect(output('Node')[0].pairedItem).toEqual({ item: 0 });
	});

	it('writes to the Output Field, into objects with dots, without changing the input item', async () => {
		const items = [{ total: 10, totals: { usd: 10 } }];
		const { output, error } = await runCurrencyRate(
			sandbox,
			convert({ amount: '={{ $json.total }}', fromCurrency: 'USD', toCurrency: 'IDR', outputField: 'totals.idr' }),
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
			convert({ amount: 2, fromCurrency: 'USD', toCurrency: 'IDR', includeInputFields: false, outputField: 'idr' }),
			[{ ignored: true }],
			NEW_NODE,
		);
		expect(error).toBeUndefined();
		const [json] = jsonOf(output('Node'));
		expect(json).toMatchObject({ idr: 2 * usd(), amount: 2, fromCurrency: 'USD', toCurrency: 'IDR', provider: 'bca' });
		expect(json).not.toHaveProperty('ignored');
		expect(json).not.toHaveProperty('convertedAmount');
	});

	it('version 1 nodes keep replacing the item with the conversion details', async () => {
		const { output, error } = await runCurrencyRate(sandbox, convert({ amount: 1, fromCurrency: 'USD', toCurrency: 'IDR' }), [{ invoice: 'A-1' }]);
		expect(error).toBeUndefined();
		expect(Object.keys(output('Node')[0].json)[0]).toBe('convertedAmount');
		expect(output('Node')[0].json).not.toHaveProperty('invoice');
	});
});

describe('several amount fields at once', () => {
	const items: IDataObject[] = [
		{ invoice: 'A-1', price: 100, shipping: { cost: '12.50' }, currency: 'USD' },
		{ invoice: 'A-2', price: 3, shipping: { cost: 0 }, currency: 'EUR' },
	];

	it('converts each listed field in place, with one rates request for the run', async () => {
		const { output, error } = await runCurrencyRate(
			sandbox,
			convert({ amountSource: 'fields', amountFields: 'price, shipping.cost', fromCurrency: '={{ $json.currency }}', toCurrency: 'IDR' }),
			items,
			NEW_NODE,
		);
		expect(error).toBeUndefined();
		expect(jsonOf(output('Node'))).toEqual([
			{ invoice: 'A-1', price: round2(100 * usd()), shipping: { cost: round2(12.5 * usd()) }, currency: 'USD' },
			{ invoice: 'A-2', price: round2(3 * eur()), shipping: { cost: 0 }, currency: 'EUR' },
		]);
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(1);
	});

	it('keeps the originals and adds <field><suffix> when an Output Field Suffix is set', async () => {
		const { output, error } = await runCurrencyRate(
			sandbox,
			convert({ amountSource: 'fields', amountFields: 'price,shipping.cost', outputSuffix: 'Idr', fromCurrency: 'USD', toCurrency: 'IDR' }),
			[items[0]],
			NEW_NODE,
		);
		expect(error).toBeUndefined();
		expect(jsonOf(output('Node'))).toEqual([
			{ ...items[0], priceIdr: round2(100 * usd()), shipping: { cost: '12.50', costIdr: round2(12.5 * usd()) } },
		]);
	});

	it('names the item and the field that holds no amount, and converts the other items', async () => {
		const { output, error } = await runCurrencyRate(
			sandbox,
			convert({ amountSource: 'fields', amountFields: 'price, tax', fromCurrency: 'USD', toCurrency: 'IDR' }),
			[{ price: 1, tax: 2 }, { price: 1 }, { price: 1, tax: 'ten' }],
			{ ...NEW_NODE, continueOnFail: true },
		);
		expect(error).toBeUndefined();
		const json = jsonOf(output('Node'));
		expect(json[0]).toEqual({ price: round2(usd()), tax: round2(2 * usd()) });
		expect(json[1].error).toBe('Field "Amount Fields → tax" is empty [item 1]');
		expect(json[2].error).toBe('Field "Amount Fields → tax" is not a number: "ten" [item 2]');
	});

	it('refuses an empty list (typed or mapped) and names that are not fields', async () => {
		for (const amountFields of [' , ', '={{ $json.none }}', 'price, __proto__.x']) {
			const { error } = await runCurrencyRate(sandbox, convert({ amountSource: 'fields', amountFields, fromCurrency: 'USD', toCurrency: 'IDR' }), [{ price: 1 }], NEW_NODE);
			expect(error?.message).toMatch(/^Field "Amount Fields" (is empty|holds a name that is not a field: "__proto__\.x") \[item 0\]$/);
		}
	});
});

describe('mapped amount and currencies', () => {
	it('read straight from the item give what n8n evaluates', async () => {
		const items = Array.from({ length: 30 }, (_, i) => ({ amount: i % 3 === 0 ? `${i}.5` : i * 1.25, from: ['USD', 'eur', 'SGD'][i % 3], to: ['IDR', 'usd'][i % 2] }));
		const direct = await runCurrencyRate(
			sandbox,
			convert({ amount: '={{ $json.amount }}', fromCurrency: '={{ $json.from }}', toCurrency: '={{ $json["to"] }}', includeInputFields: false }),
			items,
			NEW_NODE,
		);
		const byN8n = await runCurrencyRate(
			sandbox,
			convert({ amount: '={{ ($json.amount) }}', fromCurrency: '={{ ($json.from) }}', toCurrency: '={{ ($json["to"]) }}', includeInputFields: false }),
			items,
			NEW_NODE,
		);
		expect(direct.error).toBeUndefined();
		const withoutTime = (json: IDataObject) => ({ ...json, fetchedAt: null });
		expect(jsonOf(direct.output('Node')).map(withoutTime)).toEqual(jsonOf(byN8n.output('Node')).map(withoutTime));
		expect(direct.output('Node')).toHaveLength(30);
	});
});
