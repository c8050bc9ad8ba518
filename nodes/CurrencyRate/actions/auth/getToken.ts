import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { OperationContext } from '../../../shared/operation';

/** No parameters: the credential says everything the token request needs. */
export const description: INodeProperties[] = [];

/**
 * Drops the cached rates token and asks for a new one; later rate requests of this credential
 * use it. The output says that it worked and until when it is used, never the token itself.
 */
export async function execute(
	this: IExecuteFunctions,
	_itemIndex: number,
	{ client, signal }: OperationContext,
): Promise<INodeExecutionData> {
	const { token, answer } = await client.renewToken('rate', { signal });
	const response = (answer && typeof answer === 'object' ? answer : {}) as IDataObject;
	return {
		json: {
			tokenRenewed: true,
			api: 'rate',
			validUntil: new Date(token.expiresAt).toISOString(),
			status: typeof response.status === 'string' ? response.status : null,
			response,
		},
	};
}
