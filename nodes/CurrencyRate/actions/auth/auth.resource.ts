import { getTokenOperation } from '../../../shared/getToken.operation';
import type { ResourceDefinition } from '../../../shared/execution/router';
import type { CurrencyRateRun } from '../../parameters';

export const auth: ResourceDefinition<CurrencyRateRun> = {
	option: { name: 'Auth', value: 'auth' },
	defaultOperation: 'getToken',
	operations: [
		{
			name: 'Get Token',
			value: 'getToken',
			action: 'Get a new rates token',
			description:
				'Request a fresh token for the rates API (the token itself is kept out of the output)',
			module: getTokenOperation('rate'),
		},
	],
};
