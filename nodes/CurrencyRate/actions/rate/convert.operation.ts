import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { shown } from '../../../shared/errors';
import { codeValue, describeValue } from '../../../shared/execution/operationRun';
import type { ItemCall } from '../../../shared/execution/router';
import { forOperation, showFor } from '../../../shared/properties';
import { parseDecimal, type RateType } from '../../../shared/rates/rateTable';
import { endpoints } from '../../../shared/transport';
import { providerProperties, type CurrencyRateRun } from '../../parameters';

const MAX_DECIMAL_PLACES = 10;
const MAX_AMOUNT_FIELDS = 50;
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

const forAmount = (source: 'amount' | 'fields') => ({
	show: { ...showFor('rate', 'convert').show, amountSource: [source] },
});
const forAmountSource = (source: 'amount' | 'fields', properties: INodeProperties[]) =>
	properties.map((property) => ({ ...property, displayOptions: forAmount(source) }));
const WITH_INPUT = { includeInputFields: [true] };

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

const INCLUDE_INPUT_FIELDS: INodeProperties = {
	displayName: 'Include Input Fields',
	name: 'includeInputFields',
	type: 'boolean',
	default: true,
	description:
		"Whether the output keeps the input item's fields and adds the converted amount to them (a Rate → Get item of another currency keeps none of its rates). Off: the output is the conversion (amount, rate, currencies, provider, rates' time).",
};

const RATE_DETAILS_FIELD: INodeProperties = {
	displayName: 'Rate Details Field',
	name: 'rateDetailsField',
	type: 'string',
	default: 'conversion',
	placeholder: 'conversion',
	description:
		'Name of the field that gets the rate used, the currencies, the provider and when the rates were fetched (fetchedAt: the rates answer has no date of its own). Empty: only the converted amount is added.',
};

export const description: INodeProperties[] = [
	...providerProperties('convert'),
	...forOperation('rate', 'convert', [
		{
			displayName: 'Amounts',
			name: 'amountSource',
			type: 'options',
			noDataExpression: true,
			options: [
				{
					name: 'One Amount',
					value: 'amount',
					description: 'Convert the "Amount" (typed in or mapped)',
				},
				{
					name: 'Fields of the Item',
					value: 'fields',
					description: 'Convert several amount fields of the input item at once, in place',
				},
			],
			default: 'amount',
		},
	]),
	...forAmountSource('amount', [
		{
			displayName: 'Amount',
			name: 'amount',
			type: 'number',
			default: 1,
			required: true,
			description:
				'The amount to convert, in the "From Currency". Mapped text may be written 1234.56, 1,234.56 or 1.234,56; text that reads two ways (16.250) is refused unless Options → Number Format says which.',
		},
	]),
	...forAmountSource('fields', [
		{
			displayName: 'Amount Fields',
			name: 'amountFields',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'price, shipping, order.total',
			description:
				'Names of the input fields that hold amounts in the "From Currency", separated by commas (dots reach into objects). Each is converted and written back.',
		},
		{
			displayName: 'Output Field Suffix',
			name: 'outputSuffix',
			type: 'string',
			default: '',
			placeholder: 'e.g. Idr',
			description:
				"Empty: each field is replaced by its converted amount. Otherwise the converted amount goes to the field's name plus this suffix (price → priceIdr) and the original stays.",
		},
	]),
	...forOperation('rate', 'convert', [
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
	]),
	...forAmountSource('amount', [
		{
			displayName: 'Output Field',
			name: 'outputField',
			type: 'string',
			default: 'convertedAmount',
			description: 'Name of the field the converted amount is written to (dots reach into objects)',
		},
	]),
	...forAmountSource('amount', [INCLUDE_INPUT_FIELDS]),
	{
		...RATE_DETAILS_FIELD,
		displayOptions: { show: { ...forAmount('amount').show, ...WITH_INPUT } },
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
	const provider = run.provider(itemIndex);
	const input = this.getInputData()[itemIndex]?.json ?? {};
	if (run.parameter('amountSource', itemIndex, 'amount') === 'fields') {
		const amounts = readAmountFields(run, itemIndex).map((field) => {
			const label = `Amount Fields → ${field}`;
			return { field, label, amount: amountOf(run, itemIndex, valueAt(input, field), label) };
		});
		const conversion = readConversion(run, itemIndex, provider);
		const suffix = String(run.parameter('outputSuffix', itemIndex, '') ?? '').trim();
		return async () => {
			const { convert } = await converterFor(run, itemIndex, conversion);
			let json = input;
			for (const { field, label, amount } of amounts)
				json = withValueAt(json, `${field}${suffix}`, convert(amount, label));
			return { json };
		};
	}

	const amount = amountOf(run, itemIndex, run.parameter('amount', itemIndex, ''), 'Amount');
	const conversion = readConversion(run, itemIndex, provider);
	const outputField = readOutputField(run, itemIndex);
	const includeInputFields = run.parameter('includeInputFields', itemIndex, false) === true;
	const detailsField = includeInputFields ? readDetailsField(run, itemIndex, outputField) : '';
	return async () => {
		const { convert, fromRate, toRate, fetchedAt } = await converterFor(run, itemIndex, conversion);
		const convertedAmount = convert(amount, 'Amount');
		const { fromCurrency, toCurrency, rateType, decimalPlaces, baseCurrency } = conversion;
		const rate = fromRate / toRate;
		if (includeInputFields) {
			const json = withValueAt(keptFields(input, conversion), outputField, convertedAmount);
			const details = { rate, fromCurrency, toCurrency, rateType, provider, fetchedAt };
			return { json: detailsField ? withValueAt(json, detailsField, details) : json };
		}
		const details = {
			...{ rate, amount, fromCurrency, toCurrency, rateType, decimalPlaces, provider },
			...{ baseCurrency, fromRate, toRate, fetchedAt },
		};
		return { json: withValueAt(details, outputField, convertedAmount, true) };
	};
}

function readConversion(run: CurrencyRateRun, itemIndex: number, provider: string) {
	const fromCurrency = readCurrency(run, itemIndex, 'fromCurrency', 'From Currency');
	const toCurrency = readCurrency(run, itemIndex, 'toCurrency', 'To Currency');
	const rateValue = run.parameter('rateType', itemIndex, 'average');
	const rateType = typeof rateValue === 'string' ? rateValue.trim().toLowerCase() : '';
	if (!Object.hasOwn(SIDES, rateType)) {
		const problem = `is not a rate type: ${shown(rateValue)}`;
		throw run.fail(itemIndex, 'Rate', problem, `Use one of ${Object.keys(SIDES).join(', ')}.`);
	}
	const places = run.parameter('decimalPlaces', itemIndex, 2);
	const decimalPlaces =
		typeof places === 'number'
			? places
			: typeof places === 'string' && places.trim() !== ''
				? Number(places)
				: NaN;
	if (!Number.isInteger(decimalPlaces) || decimalPlaces < 0 || decimalPlaces > MAX_DECIMAL_PLACES)
		throw run.fail(
			itemIndex,
			'Decimal Places',
			`is not a whole number from 0 to ${MAX_DECIMAL_PLACES}: ${shown(places)}`,
			'Enter how many decimals the converted amount keeps, e.g. 2.',
		);
	const { baseCurrency, version } = run.options(itemIndex);
	return { provider, fromCurrency, toCurrency, rateType, decimalPlaces, baseCurrency, version };
}

/** amount × rate(from) ÷ rate(to), rounded to the Decimal Places. */
async function converterFor(run: CurrencyRateRun, itemIndex: number, conversion: Conversion) {
	const { provider, fromCurrency, toCurrency, rateType, baseCurrency } = conversion;
	const table = await run.rates(itemIndex, provider, conversion.version);
	const rateOf = (code: string, field: string, side: RateType): number => {
		// Rates are amounts of the base currency per unit, so the base itself is worth 1.
		if (code === baseCurrency) return 1;
		const quote = table.quotes.get(code);
		if (!quote) throw run.unknownCurrency(itemIndex, field, code, table, baseCurrency);
		if (quote[side] !== null) return quote[side];
		throw run.fail(
			itemIndex,
			'Rate',
			`is "${side}", but provider "${provider}" gives no usable ${side} rate for ${code} at the moment (none, zero, or text that reads two ways)`,
			'Choose another rate, or another provider.',
		);
	};
	const [fromSide, toSide] = SIDES[rateType];
	const fromRate = rateOf(fromCurrency, 'From Currency', fromSide);
	const toRate = rateOf(toCurrency, 'To Currency', toSide);
	const convert = (value: number, field: string) => {
		const converted = (value * fromRate) / toRate;
		if (Number.isFinite(converted)) return roundTo(converted, conversion.decimalPlaces);
		throw run.fail(
			itemIndex,
			field,
			`is too large to convert: ${value} ${fromCurrency} is beyond the largest number this node can compute in ${toCurrency}`,
			'Check the amount (a mapped field may hold a wrong value, e.g. 1e305).',
		);
	};
	return { fromRate, toRate, fetchedAt: table.fetchedAt, convert };
}

// Half away from zero. Cut to 15 significant digits first, so that binary noise such as
// 1.005 × 100 = 100.49999999999999 rounds as the decimal it stands for (101).
function roundTo(value: number, places: number): number {
	const factor = 10 ** places;
	const scaled = Number((Math.abs(value) * factor).toPrecision(15));
	const rounded = (Math.sign(value) * Math.round(scaled)) / factor;
	return rounded === 0 ? 0 : rounded;
}

function amountOf(run: CurrencyRateRun, itemIndex: number, value: unknown, field: string): number {
	const fail = (problem: string, fix: string) => run.fail(itemIndex, field, problem, fix);
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

function readCurrency(run: CurrencyRateRun, itemIndex: number, name: string, field: string) {
	const code = codeValue(run, itemIndex, run.parameter(name, itemIndex, ''), field, 'USD');
	if (code !== '') return code;
	const fix = 'Enter a currency code such as USD, or map a field that holds it.';
	throw run.fail(itemIndex, field, 'is empty', fix);
}

function readAmountFields(run: CurrencyRateRun, itemIndex: number): string[] {
	const value = run.parameter('amountFields', itemIndex, '');
	const list = (typeof value === 'string' ? value : Array.isArray(value) ? value.join(',') : '')
		.split(',')
		.map((name) => name.trim())
		.filter(Boolean);
	const fail = (problem: string, fix: string) => run.fail(itemIndex, 'Amount Fields', problem, fix);
	if (list.length === 0)
		throw fail('is empty', 'List the fields that hold amounts, e.g. price, shipping.');
	if (list.length > MAX_AMOUNT_FIELDS)
		throw fail(
			`lists ${list.length} fields, more than ${MAX_AMOUNT_FIELDS}`,
			'List only the fields that hold amounts.',
		);
	const unsafe = list.find((name) => !isFieldPath(name));
	if (unsafe !== undefined)
		throw fail(
			`holds a name that is not a field: ${shown(unsafe)}`,
			'Use field names such as price or order.total.',
		);
	return list;
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

function valueAt(json: IDataObject, path: string): unknown {
	let current: unknown = json;
	for (const part of path.split('.')) {
		if (current === null || typeof current !== 'object' || !Object.hasOwn(current, part))
			return undefined;
		current = (current as IDataObject)[part];
	}
	return current;
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
