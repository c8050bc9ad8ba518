import type { ResourceDefinition } from '../../../shared/execution/router';
import type { MessagingRun } from '../../run';
import * as check from './check.operation';

export const number: ResourceDefinition<MessagingRun> = {
	option: { name: 'Number', value: 'number' },
	defaultOperation: 'check',
	operations: [
		{
			name: 'Check',
			value: 'check',
			action: 'Check whether a number is on WhatsApp',
			subtitle: 'Check Number',
			description: 'Find out whether a phone number has a WhatsApp account before sending to it',
			module: check,
		},
	],
};
