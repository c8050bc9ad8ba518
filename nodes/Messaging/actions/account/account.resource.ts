import type { ResourceDefinition } from '../../../shared/execution/router';
import type { MessagingRun } from '../../run';
import * as check from './check.operation';
import * as getLimit from './getLimit.operation';
import * as update from './update.operation';

export const account: ResourceDefinition<MessagingRun> = {
	option: { name: 'Account', value: 'account' },
	defaultOperation: 'check',
	operations: [
		{
			name: 'Check',
			value: 'check',
			action: 'Check the account registration',
			subtitle: 'Check Account',
			description: 'Read the number and webhook the gateway holds for this account',
			module: check,
		},
		{
			name: 'Get Usage Limit',
			value: 'getLimit',
			action: 'Get the usage limit',
			description: 'Read how many messages the account may send and whether sending is blocked',
			module: getLimit,
		},
		{
			name: 'Update',
			value: 'update',
			action: 'Update the account registration',
			subtitle: 'Update Account',
			description: "Set the account's number and the webhook URL that receives incoming messages",
			module: update,
		},
	],
};
