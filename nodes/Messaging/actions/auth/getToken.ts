import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { OperationContext } from '../../../shared/operation';
import { redactDeep } from '../../../shared/transport';

export const description: INodeProperties[] = [];

/**
 * Fetches a new token and puts it in the node's shared cache, so the operations after it use it.
 * The token itself never goes into the output: workflow data is stored in the execution log,
 * where anyone who can read executions would see it.
 */
export async function execute(
	this: IExecuteFunctions,
	_itemIndex: number,
	{ client, signal }: OperationContext,
): Promise<INodeExecutionData> {
	const { token, answer } = await client.renewToken('wa', { signal });
	// The transport already took `token` out of the answer; a copy under another name would not be.
	const response = redactDeep((answer ?? {}) as IDataObject, [token.value]);
	return {
		json: {
			authenticated: true,
			connection: typeof response.connection === 'string' ? response.connection : null,
			expiresAt: new Date(token.expiresAt).toISOString(),
			response,
		},
	};
}
