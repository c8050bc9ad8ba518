import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { inputError } from '../../../shared/errors';
import { formatExample, parseDecimal } from '../../../shared/decimalText';
import { forOperation, showFor, type ItemCall } from '../../../shared/execution/router';
import type { RateTable, RateType } from '../../../shared/rates/rateTable';
import { codeValue, describeValue } from '../../../shared/execution/operationRun';
import { endpoints } from '../../../shared/transport';
import type { CurrencyRateRun } from '../../parameters';
import {
	providerProperties,
	ratesForItem,
	readProvider,
	unknownCurrencyError,
} from '../../helpers/providerRates';

const MAX_DECIMAL_PLACES = 10;

// `bank`: the bank buys the From Currency at its buy rate and sells the To Currency at its sell
// rate. `buy` and `sell` use one side for both; kept for rate look-ups and saved workflows.
type RateChoice = RateType | 'bank';
const RATE_CHOICES: readonly RateChoice[] = ['average', 'bank', 'buy', 'sell'];
const MAX_AMOUNT_FIELDS = 50;

function forAmountSource(
	source: 'amount' | 'fields',
	properties: INodeProperties[],
): INodeProperties[] {
	const shown = { show: { ...showFor('rate', 'convert').show, amountSource: [source] } };
	return properties.map((property) => ({ ...property, displayOptions: shown }));
}

const amountShown = { show: { ...showFor('rate', 'convert').show, amountSource: ['amount'] } };

const INCLUDE_INPUT_FIELDS: INodeProperties = {
	displayName: 'Include Input Fields',
	name: 'includeInputFields',
	type: 'boolean',
	default: true,
	description:
		"Whether the output keeps the input item's fields and adds the converted amount to them. Off: the output is the conversion (amount, rate, currencies, provider, rates' time).",
};

const withInputFields = { show: { ...amountShown.show, includeInputFields: [true] } };

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
		{
			displayName: 'From Currency',
			name: 'fromCurrency',
			type: 'string',
			default: 'USD',
			required: true,
			placeholder: 'USD',
			description:
				'Code of the currency the amount is in, upper or lower case. May be the base currency (IDR).',
		},
		{
			displayName: 'To Currency',
			name: 'toCurrency',
			type: 'string',
			default: 'IDR',
			required: true,
			placeholder: 'IDR',
			description:
				'Code of the currency to convert into, upper or lower case. May be the base currency (IDR).',
		},
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
	// Nodes older than 1.1 keep giving the conversion details instead of the input item's fields.
	{
		...INCLUDE_INPUT_FIELDS,
		default: false,
		displayOptions: { show: { ...amountShown.show, '@version': [1] } },
	},
	{
		...INCLUDE_INPUT_FIELDS,
		default: true,
		displayOptions: { show: { ...amountShown.show, '@version': [{ _cnd: { gte: 1.1 } }] } },
	},
	{
		...RATE_DETAILS_FIELD,
		default: '',
		displayOptions: { show: { ...withInputFields.show, '@version': [1, 1.1] } },
	},
	{
		...RATE_DETAILS_FIELD,
		default: 'conversion',
		displayOptions: { show: { ...withInputFields.show, '@version': [{ _cnd: { gte: 1.2 } }] } },
	},
];

export const endpoint = endpoints.getKurs;

export function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	run: CurrencyRateRun,
): ItemCall {
	// Every input is checked before the rates are requested: a bad item fails without a request.
	const provider = readProvider(run, itemIndex);
	return run.parameter('amountSource', itemIndex, 'amount') === 'fields'
		? convertAmountFields(this, run, itemIndex, provider)
		: convertOneAmount(this, run, itemIndex, provider);
}

function convertOneAmount(
	ctx: IExecuteFunctions,
	run: CurrencyRateRun,
	itemIndex: number,
	provider: string,
): ItemCall {
	const amount = readAmount(run, itemIndex);
	const conversion = readConversion(run, itemIndex, provider);
	const outputField = readOutputField(run, itemIndex);
	const includeInputFields = run.parameter('includeInputFields', itemIndex, false) === true;
	const detailsField = includeInputFields ? readRateDetailsField(run, itemIndex) : '';
	return async () => {
		const converter = await converterFor(run, itemIndex, conversion);
		const convertedAmount = converter.convert(amount, 'Amount');
		const { fromCurrency, toCurrency, rateType, decimalPlaces, baseCurrency } = conversion;
		const { fromRate, toRate, table } = converter;
		if (includeInputFields) {
			const json = withValueAt(
				{ ...(ctx.getInputData()[itemIndex]?.json ?? {}) },
				outputField,
				convertedAmount,
			);
			if (!detailsField) return { json };
			const rateDetails: IDataObject = {
				rate: fromRate / toRate,
				fromCurrency,
				toCurrency,
				rateType,
				provider,
				fetchedAt: table.fetchedAt,
			};
			return { json: withValueAt(json, detailsField, rateDetails) };
		}
		const details: IDataObject = {
			rate: fromRate / toRate,
			amount,
			fromCurrency,
			toCurrency,
			rateType,
			decimalPlaces,
			provider,
			baseCurrency,
			fromRate,
			toRate,
			fetchedAt: table.fetchedAt,
		};
		return {
			json:
				outputField === 'convertedAmount'
					? { convertedAmount, ...details }
					: withValueAt(details, outputField, convertedAmount, true),
		};
	};
}

function convertAmountFields(
	ctx: IExecuteFunctions,
	run: CurrencyRateRun,
	itemIndex: number,
	provider: string,
): ItemCall {
	const fields = readAmountFields(run, itemIndex);
	const input = ctx.getInputData()[itemIndex]?.json ?? {};
	const amounts = fields.map((field) => ({
		field,
		amount: amountOf(run, itemIndex, valueAt(input, field), `Amount Fields → ${field}`),
	}));
	const conversion = readConversion(run, itemIndex, provider);
	const suffix = String(run.parameter('outputSuffix', itemIndex, '') ?? '').trim();
	return async () => {
		const { convert } = await converterFor(run, itemIndex, conversion);
		let json: IDataObject = { ...input };
		for (const { field, amount } of amounts)
			json = withValueAt(json, `${field}${suffix}`, convert(amount, `Amount Fields → ${field}`));
		return { json };
	};
}

interface Conversion {
	provider: string;
	fromCurrency: string;
	toCurrency: string;
	rateType: RateChoice;
	decimalPlaces: number;
	baseCurrency: string;
	version: string;
}

function readConversion(run: CurrencyRateRun, itemIndex: number, provider: string): Conversion {
	const fromCurrency = readCurrency(run, itemIndex, 'fromCurrency', 'From Currency');
	const toCurrency = readCurrency(run, itemIndex, 'toCurrency', 'To Currency');
	const rateType = readRateType(run, itemIndex);
	const decimalPlaces = readDecimalPlaces(run, itemIndex);
	const { baseCurrency, version } = run.options(itemIndex);
	return { provider, fromCurrency, toCurrency, rateType, decimalPlaces, baseCurrency, version };
}

/** value × rate(from) ÷ rate(to), rounded to the Decimal Places. */
async function converterFor(
	run: CurrencyRateRun,
	itemIndex: number,
	{
		provider,
		fromCurrency,
		toCurrency,
		rateType,
		decimalPlaces,
		baseCurrency,
		version,
	}: Conversion,
): Promise<{
	fromRate: number;
	toRate: number;
	table: RateTable;
	convert: (value: number, field: string) => number;
}> {
	const table = await ratesForItem(run, itemIndex, provider, version);
	const fromSide: RateType = rateType === 'bank' ? 'buy' : rateType;
	const toSide: RateType = rateType === 'bank' ? 'sell' : rateType;
	const rateOf = (code: string, field: string, side: RateType): number => {
		// Rates are amounts of the base currency per unit, so the base itself is worth 1.
		if (code === baseCurrency) return 1;
		const quote = table.quotes.get(code);
		if (!quote) throw unknownCurrencyError(run, itemIndex, field, code, table, baseCurrency);
		const rate = quote[side];
		if (rate === null) throw missingRateError(run, itemIndex, side, code, table);
		return rate;
	};
	const fromRate = rateOf(fromCurrency, 'From Currency', fromSide);
	const toRate = rateOf(toCurrency, 'To Currency', toSide);
	const convert = (value: number, field: string) => {
		const converted = (value * fromRate) / toRate;
		if (!Number.isFinite(converted)) {
			throw inputError(
				run.node,
				itemIndex,
				field,
				`is too large to convert: ${value} ${fromCurrency} is beyond the largest number this node can compute in ${toCurrency}`,
				'Check the amount (a mapped field may hold a wrong value, e.g. 1e305).',
			);
		}
		return roundTo(converted, decimalPlaces);
	};
	return { fromRate, toRate, table, convert };
}

function readAmount(run: CurrencyRateRun, itemIndex: number): number {
	return amountOf(run, itemIndex, run.parameter('amount', itemIndex, ''), 'Amount');
}

function amountOf(run: CurrencyRateRun, itemIndex: number, value: unknown, field: string): number {
	const text = typeof value === 'string' ? value.trim() : undefined;
	if (value === null || value === undefined || text === '') {
		throw inputError(
			run.node,
			itemIndex,
			field,
			'is empty',
			'Enter the amount to convert, or map a field that holds it.',
		);
	}
	const { numberFormat } = run.options(itemIndex);
	if (text === undefined) {
		if (typeof value === 'number' && Number.isFinite(value)) return value;
		throw inputError(
			run.node,
			itemIndex,
			field,
			`is ${describeValue(value)}, not a number`,
			'Map a number, or text such as 1234.56.',
		);
	}
	const parsed = parseDecimal(text, numberFormat);
	if ('ambiguous' in parsed) {
		const [point, comma] = parsed.ambiguous;
		throw inputError(
			run.node,
			itemIndex,
			field,
			`is ambiguous: "${text}" is ${point} with a decimal point (1,234.56) and ${comma} with a decimal comma (1.234,56)`,
			'Set Options → Number Format to say how your amounts are written, or map a number.',
		);
	}
	if (!('value' in parsed) || !Number.isFinite(parsed.value)) {
		throw inputError(
			run.node,
			itemIndex,
			field,
			`is not a number: ${JSON.stringify(value)}`,
			numberFormat === 'auto'
				? 'Write it as 1234.56, 1,234.56 or 1.234,56, or set Options → Number Format.'
				: `Write it as ${formatExample(numberFormat)} (Options → Number Format), or map a number.`,
		);
	}
	return parsed.value;
}

function readCurrency(
	run: CurrencyRateRun,
	itemIndex: number,
	name: string,
	field: string,
): string {
	const code = codeValue(run, itemIndex, run.parameter(name, itemIndex, ''), field, 'USD');
	if (code === '') {
		throw inputError(
			run.node,
			itemIndex,
			field,
			'is empty',
			'Enter a currency code such as USD, or map a field that holds it.',
		);
	}
	return code;
}

function readRateType(run: CurrencyRateRun, itemIndex: number): RateChoice {
	const value = run.parameter('rateType', itemIndex, 'average');
	const rateType = typeof value === 'string' ? value.trim().toLowerCase() : '';
	if (!(RATE_CHOICES as readonly string[]).includes(rateType)) {
		throw inputError(
			run.node,
			itemIndex,
			'Rate',
			`is not a rate type: ${JSON.stringify(value)}`,
			`Use one of ${RATE_CHOICES.join(', ')}.`,
		);
	}
	return rateType as RateChoice;
}

function readDecimalPlaces(run: CurrencyRateRun, itemIndex: number): number {
	const value = run.parameter('decimalPlaces', itemIndex, 2);
	const places = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
	if (
		typeof places !== 'number' ||
		!Number.isInteger(places) ||
		places < 0 ||
		places > MAX_DECIMAL_PLACES
	) {
		throw inputError(
			run.node,
			itemIndex,
			'Decimal Places',
			`is not a whole number from 0 to ${MAX_DECIMAL_PLACES}: ${JSON.stringify(value)}`,
			'Enter how many decimals the converted amount keeps, e.g. 2.',
		);
	}
	return places;
}

function missingRateError(
	run: CurrencyRateRun,
	itemIndex: number,
	rateType: RateType,
	code: string,
	table: RateTable,
) {
	return inputError(
		run.node,
		itemIndex,
		'Rate',
		`is "${rateType}", but provider "${table.provider}" gives no ${rateType} rate for ${code} at the moment`,
		'Choose another rate, or another provider.',
	);
}

// Half away from zero. Cut to 15 significant digits first, so that binary noise such as
// 1.005 × 100 = 100.49999999999999 rounds as the decimal it stands for (101).
export function roundTo(value: number, places: number): number {
	const factor = 10 ** places;
	const scaled = Number((Math.abs(value) * factor).toPrecision(15));
	const rounded = (Math.sign(value) * Math.round(scaled)) / factor;
	return rounded === 0 ? 0 : rounded;
}

function readAmountFields(run: CurrencyRateRun, itemIndex: number): string[] {
	const value = run.parameter('amountFields', itemIndex, '');
	const list = (typeof value === 'string' ? value : Array.isArray(value) ? value.join(',') : '')
		.split(',')
		.map((name) => name.trim())
		.filter(Boolean);
	if (list.length === 0) {
		throw inputError(
			run.node,
			itemIndex,
			'Amount Fields',
			'is empty',
			'List the fields that hold amounts, e.g. price, shipping.',
		);
	}
	if (list.length > MAX_AMOUNT_FIELDS) {
		throw inputError(
			run.node,
			itemIndex,
			'Amount Fields',
			`lists ${list.length} fields, more than ${MAX_AMOUNT_FIELDS}`,
			'List only the fields that hold amounts.',
		);
	}
	const unsafe = list.find((name) =>
		name.split('.').some((part) => part === '' || UNSAFE_KEYS.has(part)),
	);
	if (unsafe !== undefined) {
		throw inputError(
			run.node,
			itemIndex,
			'Amount Fields',
			`holds a name that is not a field: "${unsafe}"`,
			'Use field names such as price or order.total.',
		);
	}
	return list;
}

function readOutputField(run: CurrencyRateRun, itemIndex: number): string {
	return readFieldName(run, itemIndex, {
		parameter: 'outputField',
		label: 'Output Field',
		fallback: 'convertedAmount',
		fix: 'Enter a name such as convertedAmount or totals.idr.',
	});
}

function readRateDetailsField(run: CurrencyRateRun, itemIndex: number): string {
	return readFieldName(run, itemIndex, {
		parameter: 'rateDetailsField',
		label: 'Rate Details Field',
		fallback: '',
		emptyMeansNone: true,
		fix: 'Enter a name such as conversion or totals.rate, or leave it empty for none.',
	});
}

function readFieldName(
	run: CurrencyRateRun,
	itemIndex: number,
	field: {
		parameter: string;
		label: string;
		fallback: string;
		fix: string;
		emptyMeansNone?: boolean;
	},
): string {
	const value = run.parameter(field.parameter, itemIndex, field.fallback);
	const name = typeof value === 'string' ? value.trim() : '';
	if (name === '' && field.emptyMeansNone) return '';
	if (name === '' || name.split('.').some((part) => part === '' || UNSAFE_KEYS.has(part))) {
		throw inputError(
			run.node,
			itemIndex,
			field.label,
			`is not a field name: ${JSON.stringify(value)}`,
			field.fix,
		);
	}
	return name;
}

const UNSAFE_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

function valueAt(json: IDataObject, path: string): unknown {
	let current: unknown = json;
	for (const part of path.split('.')) {
		if (
			current === null ||
			typeof current !== 'object' ||
			!Object.prototype.hasOwnProperty.call(current, part)
		)
			return undefined;
		current = (current as IDataObject)[part];
	}
	return current;
}

function withValueAt(json: IDataObject, path: string, value: unknown, first = false): IDataObject {
	const [head, ...rest] = path.split('.');
	const inner = json[head];
	const next = (
		rest.length === 0
			? value
			: withValueAt(
					inner !== null && typeof inner === 'object' && !Array.isArray(inner)
						? { ...(inner as IDataObject) }
						: {},
					rest.join('.'),
					value,
				)
	) as IDataObject[string];
	return first && !(head in json) ? { [head]: next, ...json } : { ...json, [head]: next };
}
