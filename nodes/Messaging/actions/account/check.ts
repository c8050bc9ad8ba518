import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { OperationContext } from '../../../shared/operation';
import { forOperation } from '../../../shared/operation';
import { endpoints } from '../../../shared/transport';
import { messagingOptions } from '../../options';
import { accountFields, accountJson, accountParams } from './accountFields';

export const description: INodeProperties[] = forOperation('account', 'check', accountFields);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	{ client, signal }: OperationContext,
): Promise<INodeExecutionData> {
	const options = messagingOptions(this);
	const params = accountParams(this, itemIndex, options.defaultCountry);
	const result = await client.call(endpoints.checkAccount, { version: options.version, ...params }, { signal });
	return { json: accountJson(result, params) };
}
