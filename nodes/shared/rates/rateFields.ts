import type { IDisplayOptions, INodeProperties } from 'n8n-workflow';

import { describeValue } from '../execution/operationRun';

const KNOWN_PROVIDERS: ReadonlyArray<{ code: string; name: string }> = [
	{ code: 'bca', name: 'Bank Central Asia (BCA)' },
	{ code: 'bni', name: 'Bank Negara Indonesia (BNI)' },
	{ code: 'bri', name: 'Bank Rakyat Indonesia (BRI)' },
	{ code: 'cimb', name: 'CIMB Niaga (CIMB)' },
	{ code: 'kmk', name: 'Tax Office (KMK)' },
];

export const KNOWN_PROVIDER_CODES = KNOWN_PROVIDERS.map(({ code }) => code).join(', ');
const OTHER_PROVIDER = 'other';
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

const PROVIDER_OPTIONS = [
	...KNOWN_PROVIDERS.map(({ code, name }) => ({
		name,
		value: code,
		description: `Rates of ${name}, code "${code}"`,
	})),
	{
		name: 'Other Provider (Enter Code)',
		value: OTHER_PROVIDER,
		description: 'Any other code the service offers',
	},
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
			options: PROVIDER_OPTIONS,
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

/** The code to send, from the two provider fields; a known bank's name reads as its code. */
export function providerCode(
	read: (name: 'provider' | 'providerCode') => unknown,
): { code: string } | { field: string; problem: string; fix: string } {
	const isOther = read('provider') === OTHER_PROVIDER;
	const field = isOther ? 'Provider Code' : 'Provider';
	const value = read(isOther ? 'providerCode' : 'provider') ?? '';
	if (typeof value !== 'string') {
		const problem = `is ${describeValue(value)}, not a provider code`;
		return { field, problem, fix: `Give one code as text, e.g. ${KNOWN_PROVIDER_CODES}.` };
	}
	const text = value.trim().toLowerCase();
	if (text === '')
		return {
			field,
			problem: 'is empty',
			fix: `Choose a provider, or enter its code (${KNOWN_PROVIDER_CODES}).`,
		};
	const known = KNOWN_PROVIDERS.find(
		({ name }) => text === name.toLowerCase() || name.toLowerCase().startsWith(`${text} (`),
	);
	const code = known?.code ?? text;
	if (code.length > 64 || !/^[a-z0-9][a-z0-9_.-]*$/.test(code))
		return {
			field,
			problem: `is not a provider code: "${value.trim().slice(0, 80)}"`,
			fix: `Provider codes are single words such as ${KNOWN_PROVIDER_CODES}.`,
		};
	return { code };
}

export function currencyCode(value: unknown): string {
	return typeof value === 'string' ? value.trim().toUpperCase() : '';
}

/** Codes separated by commas, spaces or semicolons, or an array of codes; empty means none. */
export function currencyList(value: unknown): { codes: string[] } | { problem: string } {
	if (value === null || value === undefined) return { codes: [] };
	const parts = typeof value === 'string' ? value.split(/[\s,;]+/) : value;
	if (!Array.isArray(parts))
		return { problem: `is ${describeValue(value)}, not a list of currency codes` };
	const bad = parts.findIndex((part) => typeof part !== 'string');
	if (bad !== -1)
		return {
			problem: `holds ${describeValue(parts[bad])} at position ${bad}, not a currency code`,
		};
	return { codes: [...new Set(parts.map(currencyCode).filter((code) => code !== ''))] };
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
