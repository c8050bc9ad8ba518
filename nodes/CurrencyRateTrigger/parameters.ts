import { NodeOperationError, type INodeProperties, type IPollFunctions } from 'n8n-workflow';

import { asOptions, optionText, optionsCollection } from '../shared/optionsCollection';
import { OTHER_PROVIDER, knownProviderCodes, providerCodeOf } from '../shared/rates/providers';
import {
	DEFAULT_BASE_CURRENCY,
	DEFAULT_RATE_VERSION,
	RATE_TYPE_OPTIONS,
	baseCurrencyOption,
	providerFields,
	rateVersionOption,
} from '../shared/rates/rateFields';
import { currencyCode, type RateType } from '../shared/rates/rateTable';
import {
	MAX_WATCHED_CURRENCIES,
	type CrossingDirection,
	type WatchMode,
	type WatchSettings,
} from './rateWatch';

const forMode = (...modes: WatchMode[]) => ({ show: { event: modes } });

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
			{
				name: 'Rate Moves by More Than a Percentage',
				value: 'change',
				description:
					'Fires when the rate moved by more than the percentage since the last time it fired',
			},
			{
				name: 'Rate Crosses a Threshold',
				value: 'threshold',
				description: 'Fires when the rate goes above or below a level you set',
			},
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
		options: [...RATE_TYPE_OPTIONS],
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

export interface TriggerSettings extends WatchSettings {
	readonly version: string;
	readonly baseCurrency: string;
	readonly fireOnFirstPoll: boolean;
}

const RATE_TYPES: readonly RateType[] = ['average', 'buy', 'sell'];

export function readTriggerSettings(ctx: IPollFunctions): TriggerSettings {
	const node = ctx.getNode();
	const fail = (field: string, problem: string, fix: string) =>
		new NodeOperationError(node, `Field "${field}" ${problem}`, { description: fix });

	const selected = ctx.getNodeParameter('provider', 'bca');
	const isOther = selected === OTHER_PROVIDER;
	const provider = providerCodeOf(isOther ? ctx.getNodeParameter('providerCode', '') : selected);
	if ('problem' in provider)
		throw fail(
			isOther ? 'Provider Code' : 'Provider',
			provider.problem,
			`Choose a provider, or enter its code (${knownProviderCodes()}).`,
		);

	const list = ctx.getNodeParameter('currencies', '');
	const parts = Array.isArray(list)
		? list
		: typeof list === 'string'
			? list.split(/[\s,;]+/)
			: null;
	if (parts === null)
		throw fail(
			'Currencies',
			`is not a list of currency codes: ${JSON.stringify(list)}`,
			'Write codes separated by commas, e.g. USD, EUR.',
		);
	const currencies = [...new Set(parts.map(currencyCode).filter((code) => code !== ''))];
	if (currencies.length > MAX_WATCHED_CURRENCIES)
		throw fail(
			'Currencies',
			`lists ${currencies.length} codes`,
			`Watch at most ${MAX_WATCHED_CURRENCIES}.`,
		);

	const mode = ctx.getNodeParameter('event', 'change') as WatchMode;
	const fieldValue = String(ctx.getNodeParameter('field', 'average')).trim().toLowerCase();
	if (!(RATE_TYPES as readonly string[]).includes(fieldValue))
		throw fail(
			'Rate',
			`is not a rate type: ${JSON.stringify(fieldValue)}`,
			`Use one of ${RATE_TYPES.join(', ')}.`,
		);
	const changePercent = Number(ctx.getNodeParameter('changePercent', 0.5));
	if (mode === 'change' && !(Number.isFinite(changePercent) && changePercent >= 0)) {
		throw fail(
			'Change (%)',
			`is not a percentage: ${JSON.stringify(changePercent)}`,
			'Enter a number such as 0.5 (percent).',
		);
	}
	const threshold = Number(ctx.getNodeParameter('threshold', 0));
	if (mode === 'threshold' && !(Number.isFinite(threshold) && threshold > 0)) {
		throw fail('Threshold', 'is not set', 'Enter the level in IDR per unit, e.g. 16500 for USD.');
	}
	const options = asOptions(ctx.getNodeParameter('options', {}));
	return {
		provider: provider.code,
		currencies,
		mode,
		field: fieldValue as RateType,
		changePercent: mode === 'change' ? changePercent : 0,
		threshold: mode === 'threshold' ? threshold : 0,
		direction: (mode === 'threshold'
			? ctx.getNodeParameter('direction', 'above')
			: 'either') as CrossingDirection,
		version: optionText(options, 'version', DEFAULT_RATE_VERSION),
		baseCurrency: currencyCode(options.baseCurrency) || DEFAULT_BASE_CURRENCY,
		fireOnFirstPoll: options.fireOnFirstPoll === true,
	};
}
