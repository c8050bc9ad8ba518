import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { forOperation } from '../../../shared/operation';
import { endpoints } from '../../../shared/transport';
import type { MessagingRun } from '../../parameters';
import { qrImageField, sessionOutput } from './shared';

export const description: INodeProperties[] = forOperation('session', 'login', [qrImageField]);

export const endpoint = endpoints.login;

export async function execute(this: IExecuteFunctions, itemIndex: number, run: MessagingRun): Promise<INodeExecutionData> {
	const result = await run.client.call(endpoint, {}, { signal: run.signal });
	return await sessionOutput(this, run, itemIndex, result);
}
