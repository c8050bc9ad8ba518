import type { ResourceDefinition } from '../../../shared/operation';
import * as getToken from './getToken';
import * as verifyToken from './verifyToken';

export const auth: ResourceDefinition = {
	option: { name: 'Auth', value: 'auth' },
	defaultOperation: 'verifyToken',
	operations: [
		{
			name: 'Get Token',
			value: 'getToken',
			action: 'Get a new access token',
			description: 'Request a new token for the credential (kept by the node, never shown) and output when it expires',
			module: getToken,
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
