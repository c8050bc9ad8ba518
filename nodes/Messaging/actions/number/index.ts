import type { ResourceDefinition } from '../../../shared/operation';
import * as check from './check';

export const number: ResourceDefinition = {
	option: { name: 'Number', value: 'number' },
	defaultOperation: 'check',
	operations: [
		{
			name: 'Check',
			value: 'check',
			action: 'Check whether a number is on WhatsApp',
			description: 'Find out whether a phone number has a WhatsApp account before sending to it',
			module: check,
		},
	],
};
