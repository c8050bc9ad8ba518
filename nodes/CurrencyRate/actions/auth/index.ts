import type { ResourceDefinition } from '../../../shared/operation';
import * as getToken from './getToken';

export const auth: ResourceDefinition = {
	option: { name: 'Authentication', value: 'auth' },
	defaultOperation: 'getToken',
	operations: [
		{
			name: 'Get Token',
			value: 'getToken',
			action: 'Get a new rates token',
			description: 'Request a fresh token for the rates API (the token itself is kept out of the output)',
			module: getToken,
		},
	],
};
