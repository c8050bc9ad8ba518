import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { inputError } from '../../../shared/errors';
import { forOperation } from '../../../shared/operation';
import { RATE_TYPE_OPTIONS } from '../../../shared/rates/rateFields';
import { currencyCode, type RateTable, type RateType } from '../../../shared/rates/rateTable';
import { endpoints } from '../../../shared/transport';
import type { CurrencyRateRun } from '../../parameters';
import { providerProperties, ratesForItem, readProvider, unknownCurrencyError } from './shared';

const MAX_DECIMAL_PLACES = 10;
const RATE_TYPES: readonly RateType[] = ['average', 'buy', 'sell'];

export const description: INodeProperties[] = [
	...providerProperties('convert'),
	...forOperation('rate', 'convert', [
		{
			displayName: 'Amount',
			name: 'amount',
			type: 'number',
			default: 1,
			required: true,
			description: 'The amount to convert, in the "From Currency"',
		},
		{
			displayName: 'From Currency',
			name: 'fromCurrency',
			type: 'string',
			default: 'USD',
			required: true,
			placeholder: 'USD',
			description: 'Code of the currency the amount is in, upper or lower case. May be the base currency (IDR).',
		},
		{
			displayName: 'To Currency',
			name: 'toCurrency',
			type: 'string',
			default: 'IDR',
			required: true,
			placeholder: 'IDR',
			description: 'Code of the currency to convert into, upper or lower case. May be the base currency (IDR).',
		},
		{
			displayName: 'Rate',
			name: 'rateType',
			type: 'options',
			options: [...RATE_TYPE_OPTIONS],
			default: 'average',
			description: 'Which of the provider\'s rates to use, for both currencies',
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
];

/** The same rates request as Get (one per provider and run), then arithmetic. */
export const endpoint = endpoints.getKurs;

export async function execute(this: IExecuteFunctions, itemIndex: number, run: CurrencyRateRun): Promise<INodeExecutionData> {
	// Every input is checked before the rates are awaited: a bad item fails without waiting.
	const provider = readProvider(run, itemIndex);
	const amount = readAmount(run, itemIndex);
	const fromCurrency = readCurrency(run, itemIndex, 'fromCurrency', 'From Currency');
	const toCurrency = readCurrency(run, itemIndex, 'toCurrency', 'To Currency');
	const rateType = readRateType(run, itemIndex);
	const decimalPlaces = readDecimalPlaces(run, itemIndex);
	const table = await ratesForItem(run, itemIndex, provider);
	const { baseCurrency } = run.options(itemIndex);

	const rateOf = (code: string, field: string): number => {
		// Rates are amounts of the base currency per unit, so the base itself is worth 1.
		if (code === baseCurrency) return 1;
		const quote = table.quotes.get(code);
		if (!quote) throw unknownCurrencyError(run, itemIndex, field, code, table, baseCurrency);
		const rate = quote[rateType];
		if (rate === null) throw missingRateError(run, itemIndex, rateType, code, table);
		return rate;
	};
	const fromRate = rateOf(fromCurrency, 'From Currency');
	const toRate = rateOf(toCurrency, 'To Currency');

	return {
		json: {
			convertedAmount: roundTo((amount * fromRate) / toRate, decimalPlaces),
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
		},
	};
}

/** The amount as a number; an expression may give a number or a numeric string ("1234.50"). */
function readAmount(run: CurrencyRateRun, itemIndex: number): number {
	const value = run.parameter('amount', itemIndex, '');
	const text = typeof value === 'string' ? value.trim() : undefined;
	if (value === null || value === undefined || text === '') {
		throw inputError(run.node, itemIndex, 'Amount', 'is empty', 'Enter the amount to convert, or map a field that holds it.');
	}
	const amount =
		typeof value === 'number' ? value : text !== undefined && /^[+-]?(\d+(?:\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : NaN;
	if (!Number.isFinite(amount)) {
		throw inputError(
			run.node,
			itemIndex,
			'Amount',
			`is not a number: ${JSON.stringify(value) ?? String(value)}`,
			'Use digits with a dot for decimals and no thousands separators, e.g. 1234.56.',
		);
	}
	return amount;
}

function readCurrency(run: CurrencyRateRun, itemIndex: number, name: string, field: string): string {
	const value = run.parameter(name, itemIndex, '');
	const code = currencyCode(value);
	if (code === '') {
		throw inputError(run.node, itemIndex, field, 'is empty', 'Enter a currency code such as USD, or map a field that holds it.');
	}
	return code;
}

function readRateType(run: CurrencyRateRun, itemIndex: number): RateType {
	const value = run.parameter('rateType', itemIndex, 'average');
	const rateType = typeof value === 'string' ? value.trim().toLowerCase() : '';
	if (!(RATE_TYPES as readonly string[]).includes(rateType)) {
		throw inputError(
			run.node,
			itemIndex,
			'Rate',
			`is not a rate type: ${JSON.stringify(value)}`,
			`Use one of ${RATE_TYPES.join(', ')}.`,
		);
	}
	return rateType as RateType;
}

function readDecimalPlaces(run: CurrencyRateRun, itemIndex: number): number {
	const value = run.parameter('decimalPlaces', itemIndex, 2);
	const places = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
	if (typeof places !== 'number' || !Number.isInteger(places) || places < 0 || places > MAX_DECIMAL_PLACES) {
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

function missingRateError(run: CurrencyRateRun, itemIndex: number, rateType: RateType, code: string, table: RateTable) {
	return inputError(
		run.node,
		itemIndex,
		'Rate',
		`is "${rateType}", but provider "${table.provider}" gives no ${rateType} rate for ${code} at the moment`,
		'Choose another rate, or another provider.',
	);
}

/**
 * Rounds half away from zero at `places` decimals. The scaled value is first cut to 15
 * significant digits, so binary noise such as 1.005 × 100 = 100.49999999999999 rounds as the
 * decimal number it stands for (101, not 100).
 */
export function roundTo(value: number, places: number): number {
	const factor = 10 ** places;
	const scaled = Number((Math.abs(value) * factor).toPrecision(15));
	const rounded = (Math.sign(value) * Math.round(scaled)) / factor;
	return rounded === 0 ? 0 : rounded;
}
