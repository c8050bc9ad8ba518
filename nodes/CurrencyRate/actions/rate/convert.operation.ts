import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { shown } from '../../../shared/errors';
import { describeValue, numberValue } from '../../../shared/execution/operationRun';
import type { ItemCall } from '../../../shared/execution/router';
import { forOperation, showFor } from '../../../shared/properties';
import { parseDecimal, type RateType } from '../../../shared/rates/rateTable';
import { endpoints } from '../../../shared/transport';
import { providerProperties, type CurrencyRateRun } from '../../parameters';

const MAX_DECIMAL_PLACES = 10;
const UNSAFE_KEYS = new Set(['__proto__', 'prototype', 'constructor']);
// The fields of a Rate → Get item (One Item per Currency).
const RATE_ROW_FIELDS = new Set(
	'provider currency baseCurrency buy sell average fetchedAt'.split(' '),
);

// The sides of (from, to). `bank`: the bank buys the From Currency at its buy rate and sells the
// To Currency at its sell rate. `buy` and `sell` use one side for both, a look-up.
const SIDES: Record<string, [RateType, RateType]> = {
	average: ['average', 'average'],
	bank: ['buy', 'sell'],
	buy: ['buy', 'buy'],
	sell: ['sell', 'sell'],
};

const currencyField = (displayName: string, name: string, code: string, what: string) =>
	({
		displayName,
		name,
		type: 'string',
		default: code,
		required: true,
		placeholder: code,
		description: `Code of the currency ${what}, upper or lower case. May be the base currency (IDR).`,
	}) satisfies INodeProperties;

export const description: INodeProperties[] = [
	...providerProperties('convert'),
	...forOperation('rate', 'convert', [
		{
			displayName: 'Amount',
			name: 'amount',
			type: 'number',
			default: 1,
			required: true,
			description:
				'The amount to convert, in the "From Currency". Mapped text may be written 1234.56, 1,234.56 or 1.234,56; text that reads two ways (16.250) is refused unless Options → Number Format says which.',
		},
		currencyField('From Currency', 'fromCurrency', 'USD', 'the amount is in'),
		currencyField('To Currency', 'toCurrency', 'IDR', 'to convert into'),
		{
			displayName: 'Rate',
			name: 'rateType',
			type: 'options',
			options: [
				{
					name: 'Average (Middle Rate)',
					value: 'average',
					description: "The middle of the provider's buy and sell rates, for both currencies",
				},
				{
					name: 'Bank Exchange (What a Customer Gets)',
					value: 'bank',
					description:
						'The bank buys the From Currency from you at its buy rate and sells you the To Currency at its sell rate, e.g. 100 USD → EUR at BCA: 100 × USD buy ÷ EUR sell',
				},
				{
					name: 'Buy Rate of Both',
					value: 'buy',
					description:
						"The provider's buy rate for both currencies (a look-up, not what a customer gets)",
				},
				{
					name: 'Sell Rate of Both',
					value: 'sell',
					description:
						"The provider's sell rate for both currencies (a look-up, not what a customer gets)",
				},
			],
			default: 'average',
			description:
				'Which of the provider\'s rates to use. "Bank Exchange" is the amount a bank customer receives: each currency at the side the bank applies to it. Rates are amounts of the base currency (IDR) per unit.',
		},
		{
			displayName: 'Decimal Places',
			name: 'decimalPlaces',
			type: 'number',
			typeOptions: { minValue: 0, maxValue: MAX_DECIMAL_PLACES },
			default: 2,
			description: 'The converted amount is rounded to this many decimals (halves away from zero)',
		},
		{
			displayName: 'Output Field',
			name: 'outputField',
			type: 'string',
			default: 'convertedAmount',
			description: 'Name of the field the converted amount is written to (dots reach into objects)',
		},
		{
			displayName: 'Include Input Fields',
			name: 'includeInputFields',
			type: 'boolean',
			default: true,
			description:
				"Whether the output keeps the input item's fields and adds the converted amount to them (a Rate → Get item of another currency keeps none of its rates). Off: the output is the conversion (amount, rate, currencies, provider, rates' time).",
		},
	]),
	{
		displayName: 'Rate Details Field',
		name: 'rateDetailsField',
		type: 'string',
		default: 'conversion',
		placeholder: 'conversion',
		description:
			'Name of the field that gets the rate used, the currencies, the provider and when the rates were fetched (fetchedAt: the rates answer has no date of its own). Empty: only the converted amount is added.',
		displayOptions: { show: { ...showFor('rate', 'convert').show, includeInputFields: [true] } },
	},
];

export const endpoint = endpoints.getKurs;

type Conversion = ReturnType<typeof readConversion>;

// Every input is checked before the rates are requested: a bad item fails without a request.
export function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	run: CurrencyRateRun,
): ItemCall {
	const input = this.getInputData()[itemIndex]?.json ?? {};
	const conversion = readConversion(run, itemIndex);
	const outputField = readOutputField(run, itemIndex);
	const includeInputFields = run.parameter('includeInputFields', itemIndex, false) === true;
	const detailsField = includeInputFields ? readDetailsField(run, itemIndex, outputField) : '';
	return async () => {
		const { convertedAmount, fromRate, toRate, fetchedAt } = await converted(run, conversion);
		const { amount, fromCurrency, toCurrency, rateType, decimalPlaces, provider } = conversion;
		const rate = fromRate / toRate;
		if (includeInputFields) {
			const json = withValueAt(keptFields(input, conversion), outputField, convertedAmount);
			const details = { rate, fromCurrency, toCurrency, rateType, provider, fetchedAt };
			return { json: detailsField ? withValueAt(json, detailsField, details) : json };
		}
		const details = {
			...{ rate, amount, fromCurrency, toCurrency, rateType, decimalPlaces, provider },
			...{ baseCurrency: conversion.baseCurrency, fromRate, toRate, fetchedAt },
		};
		return { json: withValueAt(details, outputField, convertedAmount, true) };
	};
}

function readConversion(run: CurrencyRateRun, itemIndex: number) {
	const provider = run.provider(itemIndex);
	const amount = amountOf(run, itemIndex, run.parameter('amount', itemIndex, ''));
	const fromCurrency = readCurrency(run, itemIndex, 'fromCurrency', 'From Currency');
	const toCurrency = readCurrency(run, itemIndex, 'toCurrency', 'To Currency');
	const rateValue = run.parameter('rateType', itemIndex, 'average');
	const rateType = typeof rateValue === 'string' ? rateValue.trim().toLowerCase() : '';
	if (!Object.hasOwn(SIDES, rateType)) {
		const problem = `is not a rate type: ${shown(rateValue)}`;
		throw run.fail(itemIndex, 'Rate', problem, `Use one of ${Object.keys(SIDES).join(', ')}.`);
	}
	const decimalPlaces = numberValue(
		run.parameter('decimalPlaces', itemIndex, 2),
		2,
		{ field: 'Decimal Places', min: 0, max: MAX_DECIMAL_PLACES, whole: true },
		run.fail.bind(run, itemIndex),
	);
	const { baseCurrency, version } = run.options(itemIndex);
	const currencies = { fromCurrency, toCurrency, baseCurrency };
	return { itemIndex, provider, amount, ...currencies, rateType, decimalPlaces, version };
}

/** amount × rate(from) ÷ rate(to), rounded to the Decimal Places. */
async function converted(run: CurrencyRateRun, conversion: Conversion) {
	const { itemIndex, provider, amount, fromCurrency, toCurrency, rateType, baseCurrency } =
		conversion;
	const table = await run.rates(itemIndex, provider, conversion.version);
	const rateOf = (code: string, field: string, side: RateType): number => {
		// Rates are amounts of the base currency per unit, so the base itself is worth 1.
		if (code === baseCurrency) return 1;
		const quote = table.quotes.get(code);
		if (!quote) throw run.unknownCurrency(itemIndex, field, code, table, baseCurrency);
		if (quote[side] !== null) return quote[side];
		const problem = `is "${side}", but provider "${provider}" gives no usable ${side} rate for ${code} at the moment (none, zero, or text that reads two ways)`;
		throw run.fail(itemIndex, 'Rate', problem, 'Choose another rate, or another provider.');
	};
	const [fromSide, toSide] = SIDES[rateType];
	const fromRate = rateOf(fromCurrency, 'From Currency', fromSide);
	const toRate = rateOf(toCurrency, 'To Currency', toSide);
	const value = (amount * fromRate) / toRate;
	if (!Number.isFinite(value)) {
		const problem = `is too large to convert: ${amount} ${fromCurrency} is beyond the largest number this node can compute in ${toCurrency}`;
		const fix = 'Check the amount (a mapped field may hold a wrong value, e.g. 1e305).';
		throw run.fail(itemIndex, 'Amount', problem, fix);
	}
	const convertedAmount = roundTo(value, conversion.decimalPlaces);
	return { convertedAmount, fromRate, toRate, fetchedAt: table.fetchedAt };
}

// Half away from zero. Cut to 15 significant digits first, so that binary noise such as
// 1.005 × 100 = 100.49999999999999 rounds as the decimal it stands for (101).
function roundTo(value: number, places: number): number {
	const factor = 10 ** places;
	const scaled = Number((Math.abs(value) * factor).toPrecision(15));
	const rounded = (Math.sign(value) * Math.round(scaled)) / factor;
	return rounded === 0 ? 0 : rounded;
}

function amountOf(run: CurrencyRateRun, itemIndex: number, value: unknown): number {
	const fail = (problem: string, fix: string) => run.fail(itemIndex, 'Amount', problem, fix);
	if (value === null || value === undefined || (typeof value === 'string' && value.trim() === ''))
		throw fail('is empty', 'Enter the amount to convert, or map a field that holds it.');
	if (typeof value === 'number' && Number.isFinite(value)) return value;
	if (typeof value !== 'string')
		throw fail(
			`is ${describeValue(value)}, not a number`,
			'Map a number, or text such as 1234.56.',
		);
	const text = value.trim();
	const { numberFormat } = run.options(itemIndex);
	const parsed = parseDecimal(text, numberFormat);
	if (Array.isArray(parsed))
		throw fail(
			`is ambiguous: ${shown(text)} is ${parsed[0]} with a decimal point (1,234.56) and ${parsed[1]} with a decimal comma (1.234,56)`,
			'Set Options → Number Format to say how your amounts are written, or map a number.',
		);
	if (parsed !== undefined && Number.isFinite(parsed)) return parsed;
	throw fail(
		`is not a number: ${shown(value)}`,
		numberFormat === 'auto'
			? 'Write it as 1234.56, 1,234.56 or 1.234,56, or set Options → Number Format.'
			: `Write it as ${numberFormat === 'comma' ? '1.234,56' : '1,234.56'} (Options → Number Format), or map a number.`,
	);
}

/** A code is text; anything else is refused rather than turned into one. */
function readCurrency(run: CurrencyRateRun, itemIndex: number, name: string, field: string) {
	const value = run.parameter(name, itemIndex, '');
	const code = typeof value === 'string' ? value.trim().toUpperCase() : '';
	if (code !== '') return code;
	if (value !== undefined && value !== null && typeof value !== 'string') {
		const problem = `is ${describeValue(value)}, not a code`;
		const advice = Array.isArray(value) ? 'This field takes one code' : 'Write the code as text';
		throw run.fail(itemIndex, field, problem, `${advice}, e.g. USD.`);
	}
	const fix = 'Enter a currency code such as USD, or map a field that holds it.';
	throw run.fail(itemIndex, field, 'is empty', fix);
}

function readOutputField(run: CurrencyRateRun, itemIndex: number): string {
	const value = run.parameter('outputField', itemIndex, 'convertedAmount');
	const name = typeof value === 'string' ? value.trim() : '';
	if (isFieldPath(name)) return name;
	const fix = 'Enter a name such as convertedAmount or totals.idr.';
	throw run.fail(itemIndex, 'Output Field', `is not a field name: ${shown(value)}`, fix);
}

/** Details written where the converted amount goes would replace it, or sit inside a number. */
function readDetailsField(run: CurrencyRateRun, itemIndex: number, outputField: string): string {
	const value = run.parameter('rateDetailsField', itemIndex, '');
	const name = typeof value === 'string' ? value.trim() : '';
	const within = (path: string, other: string) => path === other || path.startsWith(`${other}.`);
	const overlaps = within(name, outputField) || within(outputField, name);
	if (name === '' || (isFieldPath(name) && !overlaps)) return name;
	const fail = (problem: string, fix: string) =>
		run.fail(itemIndex, 'Rate Details Field', problem, fix);
	if (!isFieldPath(name))
		throw fail(
			`is not a field name: ${shown(value)}`,
			'Enter a name such as conversion or totals.rate, or leave it empty for none.',
		);
	throw fail(
		`is "${name}", where the Output Field ("${outputField}") puts the converted amount: the rate details would replace it`,
		'Give the rate details another field (e.g. conversion), or leave Rate Details Field empty for none.',
	);
}

/** Another currency's rates from Rate → Get beside the converted amount would read as its own. */
function keptFields(input: IDataObject, { fromCurrency, toCurrency }: Conversion): IDataObject {
	if (![...RATE_ROW_FIELDS].every((field) => Object.hasOwn(input, field))) return input;
	if ([fromCurrency, toCurrency].includes(String(input.currency).toUpperCase())) return input;
	return Object.fromEntries(Object.entries(input).filter(([field]) => !RATE_ROW_FIELDS.has(field)));
}

function isFieldPath(name: string): boolean {
	return name !== '' && name.split('.').every((part) => part !== '' && !UNSAFE_KEYS.has(part));
}

/** A copy with `value` at the dotted path; `first` puts a new top-level field first. */
function withValueAt(json: IDataObject, path: string, value: unknown, first = false): IDataObject {
	const [head, ...rest] = path.split('.');
	const inner = json[head];
	const object = inner !== null && typeof inner === 'object' && !Array.isArray(inner);
	const next = (
		rest.length === 0
			? value
			: withValueAt(object ? (inner as IDataObject) : {}, rest.join('.'), value)
	) as IDataObject[string];
	return first && !(head in json) ? { [head]: next, ...json } : { ...json, [head]: next };
}
