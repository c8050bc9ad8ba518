import type { INodeProperties, IPollFunctions } from 'n8n-workflow';

import { inputError, shown } from '../shared/errors';
import { numberValue, type FieldError } from '../shared/execution/operationRun';
import { asOptions, optionsCollection } from '../shared/properties';
import {
	baseCurrencyOption,
	currencyList,
	providerCode,
	providerFields,
	rateVersionOption,
	readRateOptions,
} from '../shared/rates/rateFields';
import type { RateType } from '../shared/rates/rateTable';

export type WatchMode = 'change' | 'threshold' | 'publication';

export const MAX_WATCHED_CURRENCIES = 64;
export type WatchSettings = ReturnType<typeof readTriggerSettings>;

const forMode = (...modes: WatchMode[]) => ({ show: { event: modes } });
const RATE_TYPES: RateType[] = ['average', 'buy', 'sell'];

export const triggerProperties: INodeProperties[] = [
	...providerFields(
		'Whose rates to watch; choose "Other Provider" to type a code the list does not have',
	),
	{
		displayName: 'Currencies',
		name: 'currencies',
		type: 'string',
		default: 'USD',
		placeholder: 'USD, EUR, SGD',
		description: `Codes of the currencies to watch, separated by commas. Leave empty to watch every currency the provider offers (at most ${MAX_WATCHED_CURRENCIES}).`,
	},
	{
		displayName: 'Trigger On',
		name: 'event',
		type: 'options',
		noDataExpression: true,
		options: [
			{ name: 'Rate Moves by More Than a Percentage', value: 'change' },
			{ name: 'Rate Crosses a Threshold', value: 'threshold' },
			{
				name: 'Every New Publication',
				value: 'publication',
				description: 'Fires whenever the provider publishes different buy, sell or average rates',
			},
		],
		default: 'change',
	},
	{
		displayName: 'Rate',
		name: 'field',
		type: 'options',
		options: [
			{ name: 'Average', value: 'average', description: 'The middle of buy and sell' },
			{ name: 'Buy', value: 'buy', description: 'The rate at which the provider buys' },
			{ name: 'Sell', value: 'sell', description: 'The rate at which the provider sells' },
		],
		default: 'average',
		description: "Which of the provider's rates to compare",
		displayOptions: forMode('change', 'threshold'),
	},
	{
		displayName: 'Change (%)',
		name: 'changePercent',
		type: 'number',
		typeOptions: { minValue: 0, numberPrecision: 4 },
		default: 0.5,
		description:
			'Fire when the rate moved by more than this many percent (up or down) since the last time it fired for that currency',
		displayOptions: forMode('change'),
	},
	{
		displayName: 'Threshold',
		name: 'threshold',
		type: 'number',
		typeOptions: { minValue: 0, numberPrecision: 4 },
		default: 0,
		placeholder: '16500',
		description:
			'The level, in the base currency (IDR) per 1 unit of the currency. Usually used with one currency.',
		displayOptions: forMode('threshold'),
	},
	{
		displayName: 'Crossing',
		name: 'direction',
		type: 'options',
		options: [
			{ name: 'Goes Above', value: 'above' },
			{ name: 'Goes Below', value: 'below' },
			{ name: 'Either Way', value: 'either' },
		],
		default: 'above',
		displayOptions: forMode('threshold'),
	},
	optionsCollection([
		{
			displayName: 'Fire on First Poll',
			name: 'fireOnFirstPoll',
			type: 'boolean',
			default: false,
			description:
				'Whether the first poll after publishing the workflow (activating it in n8n 1.x), or after the settings changed, fires one item per currency with the current rates. Off: it only remembers them.',
		},
		rateVersionOption,
		baseCurrencyOption(
			"The provider's home currency: rates are amounts of it per 1 unit of each currency (shown in the output)",
		),
	]),
];

export function readTriggerSettings(ctx: IPollFunctions) {
	const fail: FieldError = (...error) => inputError(ctx.getNode(), undefined, ...error);
	const provider = providerCode((name) => ctx.getNodeParameter(name, ''), fail);
	const fix = 'Write codes separated by commas, e.g. USD, EUR.';
	const currencies = currencyList(ctx.getNodeParameter('currencies', ''), fail, fix);
	const most = `Watch at most ${MAX_WATCHED_CURRENCIES}.`;
	if (currencies.length > MAX_WATCHED_CURRENCIES)
		throw fail('Currencies', `lists ${currencies.length} codes`, most);

	const mode = ctx.getNodeParameter('event', 'change') as WatchMode;
	const field = String(ctx.getNodeParameter('field', 'average')).trim().toLowerCase() as RateType;
	const oneOf = `Use one of ${RATE_TYPES.join(', ')}.`;
	if (!RATE_TYPES.includes(field)) throw fail('Rate', `is not a rate type: ${shown(field)}`, oneOf);
	const number = (name: string, label: string, fallback: number) =>
		numberValue(ctx.getNodeParameter(name, fallback), fallback, { field: label, min: 0 }, fail);
	const changePercent = mode === 'change' ? number('changePercent', 'Change (%)', 0.5) : 0;
	const threshold = mode === 'threshold' ? number('threshold', 'Threshold', 0) : 0;
	if (mode === 'threshold' && threshold === 0)
		throw fail('Threshold', 'is not set', 'Enter the level in IDR per unit, e.g. 16500 for USD.');
	const options = asOptions(ctx.getNodeParameter('options', {}));
	return {
		...readRateOptions(options),
		provider,
		currencies,
		mode,
		field,
		changePercent,
		threshold,
		direction: (mode === 'threshold' ? ctx.getNodeParameter('direction', 'above') : 'either') as
			'above' | 'below' | 'either',
		fireOnFirstPoll: options.fireOnFirstPoll === true,
	};
}
