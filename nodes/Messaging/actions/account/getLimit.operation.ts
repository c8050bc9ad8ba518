import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { ItemCall } from '../../../shared/execution/router';
import { endpoints, readUsageLimit } from '../../../shared/transport';
import type { MessagingRun } from '../../run';

export const description: INodeProperties[] = [];

export const endpoint = endpoints.limit;

export const once = true;

export function execute(this: IExecuteFunctions, _itemIndex: number, run: MessagingRun): ItemCall {
	return async () => {
		const result = await run.client.call(endpoint, {}, { signal: run.signal });
		return { json: { ...readUsageLimit(result), response: (result ?? null) as IDataObject } };
	};
}
