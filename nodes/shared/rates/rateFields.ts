import type { IDataObject, IDisplayOptions, INodeProperties } from 'n8n-workflow';

import { shown } from '../errors';
import { describeValue, type FieldError } from '../execution/operationRun';
import { optionText } from '../properties';
import { currencyCode, type RateTable } from './rateTable';

const KNOWN_PROVIDERS: ReadonlyArray<{ code: string; name: string }> = [
	{ code: 'bca', name: 'Bank Central Asia (BCA)' },
	{ code: 'bni', name: 'Bank Negara Indonesia (BNI)' },
	{ code: 'bri', name: 'Bank Rakyat Indonesia (BRI)' },
	{ code: 'cimb', name: 'CIMB Niaga (CIMB)' },
	{ code: 'kmk', name: 'Tax Office (KMK)' },
];

export const KNOWN_PROVIDER_CODES = KNOWN_PROVIDERS.map(({ code }) => code).join(', ');
const OTHER_PROVIDER = 'other';

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
			// Not required: n8n would then demand it whenever "Provider" is an expression.
			placeholder: 'e.g. mandiri',
			description: 'The code the service knows the provider by (sent as "currency_id_provider")',
			displayOptions: { show: { ...shown.show, provider: [OTHER_PROVIDER] } },
		},
	];
}

/** The code to send, from the two provider fields; a known bank's name reads as its code. */
export function providerCode(read: (name: string) => unknown, fail: FieldError): string {
	const isOther = read('provider') === OTHER_PROVIDER;
	const field = isOther ? 'Provider Code' : 'Provider';
	const value = read(isOther ? 'providerCode' : 'provider') ?? '';
	if (typeof value !== 'string') {
		const fix = `Give one code as text, e.g. ${KNOWN_PROVIDER_CODES}.`;
		throw fail(field, `is ${describeValue(value)}, not a provider code`, fix);
	}
	const text = value.trim().toLowerCase();
	const choose = `Choose a provider, or enter its code (${KNOWN_PROVIDER_CODES}).`;
	if (text === '') throw fail(field, 'is empty', choose);
	const known = KNOWN_PROVIDERS.find(
		({ name }) => text === name.toLowerCase() || name.toLowerCase().startsWith(`${text} (`),
	);
	const code = known?.code ?? text;
	if (code.length > 64 || !/^[a-z0-9][a-z0-9_.-]*$/.test(code)) {
		const fix = `Provider codes are single words such as ${KNOWN_PROVIDER_CODES}.`;
		throw fail(field, `is not a provider code: ${shown(value.trim())}`, fix);
	}
	return code;
}

/** "Currencies": codes separated by commas, spaces or semicolons, or an array; empty is none. */
export function currencyList(value: unknown, fail: FieldError, fix: string): string[] {
	if (value === null || value === undefined) return [];
	const parts = typeof value === 'string' ? value.split(/[\s,;]+/) : value;
	if (!Array.isArray(parts))
		throw fail('Currencies', `is ${describeValue(value)}, not a list of currency codes`, fix);
	const bad = parts.findIndex((part) => typeof part !== 'string');
	if (bad !== -1) {
		const problem = `holds ${describeValue(parts[bad])} at position ${bad}, not a currency code`;
		throw fail('Currencies', problem, fix);
	}
	return [...new Set(parts.map(currencyCode).filter((code) => code !== ''))];
}

/** The problem of codes missing from a table, with what it offers. */
export function notOffered(
	codes: string[],
	table: RateTable,
	offered = [...table.quotes.keys()],
): string {
	const held = codes.map((code) => `"${code}"`).join(', ');
	return `holds ${held}, which provider "${table.provider}" does not offer; it offers ${offered.join(', ') || 'no currencies at the moment'}`;
}

export const rateVersionOption: INodeProperties = {
	displayName: 'API Version',
	name: 'version',
	type: 'string',
	default: '1.0',
	description:
		'Value sent as "version" with every rates request. Change it only if your gateway asks for another.',
};

/** The providers known so far are Indonesian: they quote rupiah per 1 unit of each currency. */
export function baseCurrencyOption(description: string): INodeProperties {
	return {
		displayName: 'Base Currency',
		name: 'baseCurrency',
		type: 'string',
		default: 'IDR',
		placeholder: 'IDR',
		description,
	};
}

export function readRateOptions(options: IDataObject): { version: string; baseCurrency: string } {
	return {
		version: optionText(options, 'version', '1.0'),
		baseCurrency: currencyCode(options.baseCurrency) || 'IDR',
	};
}
