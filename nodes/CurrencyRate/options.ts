import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { MAX_KEEP_MINUTES } from './rateBook';
import { currencyCode } from './rateTable';

/** Value sent as `params.version` to getkurs; the rate API's own path carries 1.0. */
export const DEFAULT_RATE_VERSION = '1.0';
/** The providers known so far are Indonesian: they quote rupiah per 1 unit of each currency. */
export const DEFAULT_BASE_CURRENCY = 'IDR';

export interface CurrencyRateOptions {
	version: string;
	baseCurrency: string;
	keepRatesMinutes: number;
}

/** Settings that apply to the whole run (read from the first item, like the Messaging node's). */
export const optionsProperty: INodeProperties = {
	displayName: 'Options',
	name: 'options',
	type: 'collection',
	placeholder: 'Add option',
	default: {},
	displayOptions: { show: { resource: ['rate'] } },
	options: [
		{
			displayName: 'API Version',
			name: 'version',
			type: 'string',
			default: DEFAULT_RATE_VERSION,
			description: 'Value sent as "version" with every rates request. Change it only if your gateway asks for another.',
		},
		{
			displayName: 'Base Currency',
			name: 'baseCurrency',
			type: 'string',
			default: DEFAULT_BASE_CURRENCY,
			placeholder: 'IDR',
			description:
				"The provider's home currency: its rates are amounts of this currency per 1 unit of each other currency, and conversions between two other currencies cross through it",
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
};

export function currencyRateOptions(ctx: IExecuteFunctions, itemIndex = 0): CurrencyRateOptions {
	const options = ctx.getNodeParameter('options', itemIndex, {}) as Partial<Record<keyof CurrencyRateOptions, unknown>>;
	const keep = Number(options.keepRatesMinutes ?? 0);
	return {
		version: String(options.version ?? DEFAULT_RATE_VERSION).trim() || DEFAULT_RATE_VERSION,
		baseCurrency: currencyCode(options.baseCurrency) || DEFAULT_BASE_CURRENCY,
		keepRatesMinutes: Number.isFinite(keep) && keep > 0 ? Math.min(keep, MAX_KEEP_MINUTES) : 0,
	};
}
