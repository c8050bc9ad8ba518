import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { OperationContext } from '../../../shared/operation';
import { forOperation } from '../../../shared/operation';
import { endpoints } from '../../../shared/transport';
import { qrImageField, sessionOutput } from './sessionResult';

export const description: INodeProperties[] = forOperation('session', 'getStatus', [qrImageField]);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	{ client, signal }: OperationContext,
): Promise<INodeExecutionData> {
	const result = await client.call(endpoints.status, {}, { signal });
	return await sessionOutput(this, itemIndex, result);
}
