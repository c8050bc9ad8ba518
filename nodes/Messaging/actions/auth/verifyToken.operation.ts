import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { ItemCall } from '../../../shared/execution/router';

import { endpoints } from '../../../shared/transport';
import type { MessagingRun } from '../../run';

export const description: INodeProperties[] = [];

export const endpoint = endpoints.waProtected;

export const once = true;

export function execute(this: IExecuteFunctions, _itemIndex: number, run: MessagingRun): ItemCall {
	return async () => {
		const result = await run.client.call(endpoint, {}, { signal: run.signal });
		const answer = (result && typeof result === 'object' ? result : {}) as IDataObject;
		return {
			json: {
				// The call itself proves the token is accepted; an explicit `valid: false` is respected.
				valid: typeof answer.valid === 'boolean' ? answer.valid : true,
				message: typeof answer.message === 'string' ? answer.message : null,
				response: (result ?? null) as IDataObject,
			},
		};
	};
}
