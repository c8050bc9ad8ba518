import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { ItemCall } from '../../../shared/execution/router';
import { forOperation } from '../../../shared/properties';
import { currencyList } from '../../../shared/rates/rateFields';
import { endpoints } from '../../../shared/transport';
import { providerProperties, type CurrencyRateRun } from '../../parameters';

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
	const provider = run.provider(itemIndex);
	const codes = currencyList(
		run.parameter('currencies', itemIndex, ''),
		run.fail.bind(run, itemIndex),
		'Write codes separated by commas, e.g. USD, EUR, SGD, or map an array of codes such as ["USD", "EUR"]; leave it empty for every currency.',
	);
	const allInOne = run.parameter('output', itemIndex, 'perCurrency') === 'allInOne';
	const { baseCurrency, version } = run.options(itemIndex);
	return async () => {
		const table = await run.rates(itemIndex, provider, version);
		const missing = codes.find((code) => !table.quotes.has(code));
		if (missing === baseCurrency) {
			const problem = `holds "${missing}", the base currency: every rate is an amount of ${missing}`;
			const fix = `Remove ${missing}, or use the Convert operation to turn ${missing} amounts into other currencies.`;
			throw run.fail(itemIndex, 'Currencies', problem, fix);
		}
		if (missing) throw run.unknownCurrency(itemIndex, 'Currencies', missing, table);
		const shown = codes.length > 0 ? codes : [...table.quotes.keys()];
		const { fetchedAt } = table;
		if (allInOne) {
			const rates: IDataObject = {};
			for (const code of shown) rates[code] = { ...table.quotes.get(code) };
			return { json: { provider, baseCurrency, fetchedAt, currencies: shown, rates } };
		}
		return shown.map((code) => ({
			json: { provider, currency: code, baseCurrency, ...table.quotes.get(code), fetchedAt },
		}));
	};
}
