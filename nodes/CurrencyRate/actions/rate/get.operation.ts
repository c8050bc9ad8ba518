import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

import { inputError } from '../../../shared/errors';
import { forOperation, type ItemCall } from '../../../shared/execution/router';
import { currencyCode, type CurrencyQuote } from '../../../shared/rates/rateTable';
import { endpoints } from '../../../shared/transport';
import { describeValue } from '../../../shared/execution/operationRun';
import type { CurrencyRateRun } from '../../parameters';
import {
	providerProperties,
	ratesForItem,
	readProvider,
	unknownCurrencyError,
} from '../../helpers/providerRates';

export const description: INodeProperties[] = [
	...providerProperties('get'),
	...forOperation('rate', 'get', [
		{
			displayName: 'Currencies',
			name: 'currencies',
			type: 'string',
			default: '',
			placeholder: 'USD, EUR, SGD',
			hint: 'Empty = all currencies the provider offers',
			description:
				'Codes of the currencies to return, separated by commas, upper or lower case, or an array of codes. Leave empty for every currency the provider offers.',
		},
		{
			displayName: 'Output',
			name: 'output',
			type: 'options',
			options: [
				{
					name: 'One Item per Currency',
					value: 'perCurrency',
					description:
						'Each currency in its own item: easy to filter, write to a sheet or loop over',
				},
				{
					name: 'One Item With All Rates',
					value: 'allInOne',
					description:
						'A single item whose "rates" field holds every currency: easy to format into one message',
				},
			],
			default: 'perCurrency',
			description: 'How to shape the output',
		},
	]),
];

export const endpoint = endpoints.getKurs;

export function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	run: CurrencyRateRun,
): ItemCall {
	const provider = readProvider(run, itemIndex);
	const wanted = readCurrencies(run, itemIndex);
	const allInOne = run.parameter('output', itemIndex, 'perCurrency') === 'allInOne';
	const { baseCurrency, version } = run.options(itemIndex);
	return async () =>
		await ratesOutput(run, itemIndex, { provider, version, wanted, allInOne, baseCurrency });
}

async function ratesOutput(
	run: CurrencyRateRun,
	itemIndex: number,
	{
		provider,
		version,
		wanted,
		allInOne,
		baseCurrency,
	}: {
		provider: string;
		version: string;
		wanted: string[];
		allInOne: boolean;
		baseCurrency: string;
	},
): Promise<INodeExecutionData[]> {
	const table = await ratesForItem(run, itemIndex, provider, version);

	for (const code of wanted) {
		if (table.quotes.has(code)) continue;
		if (code === baseCurrency) {
			throw inputError(
				run.node,
				itemIndex,
				'Currencies',
				`holds "${code}", the base currency: every rate is an amount of ${code}`,
				`Remove ${code}, or use the Convert operation to turn ${code} amounts into other currencies.`,
			);
		}
		throw unknownCurrencyError(run, itemIndex, 'Currencies', code, table);
	}
	const codes = wanted.length > 0 ? wanted : table.codes;
	const quoteOf = (code: string) => table.quotes.get(code) as CurrencyQuote;

	if (allInOne) {
		const rates: IDataObject = {};
		for (const code of codes) rates[code] = { ...quoteOf(code) };
		return [
			{
				json: { provider, baseCurrency, fetchedAt: table.fetchedAt, currencies: [...codes], rates },
			},
		];
	}
	return codes.map((code) => ({
		json: { provider, currency: code, baseCurrency, ...quoteOf(code), fetchedAt: table.fetchedAt },
	}));
}

function readCurrencies(run: CurrencyRateRun, itemIndex: number): string[] {
	const value = run.parameter('currencies', itemIndex, '');
	const fix =
		'Write codes separated by commas, e.g. USD, EUR, SGD, or map an array of codes such as ["USD", "EUR"]; leave it empty for every currency.';
	if (value === null || value === undefined) return [];
	let parts: string[];
	if (typeof value === 'string') parts = value.split(/[\s,;]+/);
	else if (Array.isArray(value)) {
		const bad = value.findIndex((element) => typeof element !== 'string');
		if (bad !== -1) {
			throw inputError(
				run.node,
				itemIndex,
				'Currencies',
				`holds ${describeValue(value[bad])} at position ${bad}, not a currency code`,
				fix,
			);
		}
		parts = value as string[];
	} else {
		throw inputError(
			run.node,
			itemIndex,
			'Currencies',
			`is ${describeValue(value)}, not a list of currency codes`,
			fix,
		);
	}
	return [...new Set(parts.map(currencyCode).filter((code) => code !== ''))];
}
