import type { ResourceDefinition } from '../../../shared/execution/router';
import type { CurrencyRateRun } from '../../parameters';
import * as convert from './convert.operation';
import * as get from './get.operation';

export const rate: ResourceDefinition<CurrencyRateRun> = {
	option: { name: 'Rate', value: 'rate' },
	defaultOperation: 'get',
	operations: [
		{
			name: 'Convert',
			value: 'convert',
			action: 'Convert an amount between currencies',
			description: "Convert an amount from one currency to another with a provider's rates",
			module: convert,
		},
		{
			name: 'Get',
			value: 'get',
			action: 'Get exchange rates',
			description: "Get a provider's current exchange rates",
			module: get,
		},
	],
};
