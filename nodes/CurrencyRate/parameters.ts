import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { NumberFormat } from '../shared/decimalText';
import { asOptions, optionText, optionsCollection } from '../shared/properties';
import { OperationRun, type RunBasics } from '../shared/execution/operationRun';
import { MAX_KEEP_MINUTES, RateBook } from '../shared/rates/rateBook';
import {
	DEFAULT_BASE_CURRENCY,
	DEFAULT_RATE_VERSION,
	baseCurrencyOption,
	currencyCode,
	rateVersionOption,
} from '../shared/rates/rateFields';

export interface CurrencyRateOptions {
	version: string;
	baseCurrency: string;
	keepRatesMinutes: number;
	numberFormat: NumberFormat;
}

export const currencyRateOptionsProperty: INodeProperties = optionsCollection(
	[
		rateVersionOption,
		baseCurrencyOption(
			"The provider's home currency: its rates are amounts of this currency per 1 unit of each other currency, and conversions between two other currencies cross through it",
		),
		{
			displayName: 'Number Format',
			name: 'numberFormat',
			type: 'options',
			options: [
				{
					name: 'Refuse Ambiguous Text',
					value: 'auto',
					description:
						'Reads 1,234.56 and 1.234,56; refuses text such as 16.250 that reads two ways, showing both',
				},
				{
					name: '1,234.56 (Decimal Point)',
					value: 'point',
					description: 'English style: 16.250 is sixteen and a quarter',
				},
				{
					name: '1.234,56 (Decimal Comma)',
					value: 'comma',
					description: 'Indonesian style: 16.250 is sixteen thousand two hundred fifty',
				},
			],
			default: 'auto',
			description: 'How amounts given as text are written (numbers are always read as they are)',
		},
		{
			displayName: 'Keep Rates For (Minutes)',
			name: 'keepRatesMinutes',
			type: 'number',
			typeOptions: { minValue: 0, maxValue: MAX_KEEP_MINUTES },
			default: 0,
			description:
				'Reuse rates that an earlier execution fetched less than this many minutes ago (0 = fetch once per execution). Kept in the memory of this n8n process, per base URL, client ID, provider and version.',
		},
	],
	{ displayOptions: { show: { resource: ['rate'] } } },
);

export function readCurrencyRateOptions(
	ctx: IExecuteFunctions,
	itemIndex: number,
): CurrencyRateOptions {
	const options = asOptions(ctx.getNodeParameter('options', itemIndex, {}));
	const keep = Number(options.keepRatesMinutes ?? 0);
	const { numberFormat } = options;
	return {
		version: optionText(options, 'version', DEFAULT_RATE_VERSION),
		baseCurrency: currencyCode(options.baseCurrency) || DEFAULT_BASE_CURRENCY,
		keepRatesMinutes: Number.isFinite(keep) && keep > 0 ? Math.min(keep, MAX_KEEP_MINUTES) : 0,
		numberFormat: numberFormat === 'point' || numberFormat === 'comma' ? numberFormat : 'auto',
	};
}

export class CurrencyRateRun extends OperationRun<CurrencyRateOptions> {
	readonly rates: RateBook;

	constructor(basics: RunBasics<CurrencyRateOptions>) {
		super(basics);
		const { client, signal, credentials } = basics;
		// Only the public parts of the credential name the kept tables: never the secret.
		const source = `${credentials.baseUrl}|${credentials.clientId}`;
		this.rates = new RateBook(client, source, this.runOptions.keepRatesMinutes, signal);
	}
}
