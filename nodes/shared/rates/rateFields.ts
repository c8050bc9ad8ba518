import type { IDisplayOptions, INodeProperties } from 'n8n-workflow';

import { OTHER_PROVIDER, PROVIDER_OPTIONS } from './providers';

export const DEFAULT_RATE_VERSION = '1.0';
/** The providers known so far are Indonesian: they quote rupiah per 1 unit of each currency. */
export const DEFAULT_BASE_CURRENCY = 'IDR';

export const RATE_TYPE_OPTIONS = [
	{
		name: 'Average',
		value: 'average',
		description: "The middle of the provider's buy and sell rates",
	},
	{ name: 'Buy', value: 'buy', description: 'The rate at which the provider buys the currency' },
	{ name: 'Sell', value: 'sell', description: 'The rate at which the provider sells the currency' },
];

export function providerFields(
	description: string,
	shown: IDisplayOptions = {},
): INodeProperties[] {
	return [
		{
			displayName: 'Provider',
			name: 'provider',
			type: 'options',
			options: [...PROVIDER_OPTIONS],
			default: 'bca',
			description,
			displayOptions: shown,
		},
		{
			displayName: 'Provider Code',
			name: 'providerCode',
			type: 'string',
			default: '',
			// Not marked required: n8n would then demand it whenever "Provider" is an expression
			// (it cannot know the expression's value before the run). An empty code fails when read.
			placeholder: 'e.g. mandiri',
			description: 'The code the service knows the provider by (sent as "currency_id_provider")',
			displayOptions: { show: { ...shown.show, provider: [OTHER_PROVIDER] } },
		},
	];
}

export const rateVersionOption: INodeProperties = {
	displayName: 'API Version',
	name: 'version',
	type: 'string',
	default: DEFAULT_RATE_VERSION,
	description:
		'Value sent as "version" with every rates request. Change it only if your gateway asks for another.',
};

export function baseCurrencyOption(description: string): INodeProperties {
	return {
		displayName: 'Base Currency',
		name: 'baseCurrency',
		type: 'string',
		default: DEFAULT_BASE_CURRENCY,
		placeholder: 'IDR',
		description,
	};
}

/** A dropdown gets no ✨ button in n8n's editor. */
export const RATE_FROM_AI = `{{ $fromAI('rate', 'Which rate to use: ${RATE_TYPE_OPTIONS.map((o) => o.value).join(', ')}', 'string') }}`;
