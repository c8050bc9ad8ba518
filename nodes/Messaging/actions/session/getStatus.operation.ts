import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { forOperation, type ItemCall } from '../../../shared/operation';
import { endpoints } from '../../../shared/transport';
import type { MessagingRun } from '../../parameters';
import { qrField, qrImageField, sessionOutput } from './shared';

export const description: INodeProperties[] = forOperation('session', 'getStatus', [qrImageField]);

export const endpoint = endpoints.status;

/** No per-item parameters: once per run, whatever the number of input items. */
export const once = true;

export function prepare(this: IExecuteFunctions, itemIndex: number, run: MessagingRun): ItemCall {
	const field = qrField(run, itemIndex);
	return async () => {
		const result = await run.client.call(endpoint, {}, { signal: run.signal });
		return await sessionOutput(this, field, result);
	};
}
