import type { ResourceDefinition } from '../../../shared/operation';
import * as convert from './convert';
import * as get from './get';

/*
 * The operations' `execute` take the Currency Rate context (with the run's rate book), a
 * superset of the shared OperationContext; the router always passes it.
 */
export const rate: ResourceDefinition = {
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
