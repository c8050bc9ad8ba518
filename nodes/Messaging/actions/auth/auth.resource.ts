import { getTokenOperation } from '../../../shared/getToken.operation';
import type { ResourceDefinition } from '../../../shared/execution/router';
import type { MessagingRun } from '../../run';
import * as verifyToken from './verifyToken.operation';

export const auth: ResourceDefinition<MessagingRun> = {
	option: { name: 'Auth', value: 'auth' },
	defaultOperation: 'verifyToken',
	operations: [
		{
			name: 'Get Token',
			value: 'getToken',
			action: 'Get a new access token',
			description:
				'Request a new token for the credential (kept by the node, never shown) and output when it expires',
			module: getTokenOperation('wa'),
		},
		{
			name: 'Verify Token',
			value: 'verifyToken',
			action: 'Verify the access token',
			description: 'Check that the gateway accepts the credential and its token',
			module: verifyToken,
		},
	],
};
