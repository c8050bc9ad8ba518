import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { updateAccount } from '../../../shared/account';
import { forOperation } from '../../../shared/operation';
import { endpoints } from '../../../shared/transport';
import type { MessagingRun } from '../../parameters';
import { accountFields, accountJson, accountParams } from './shared';

export const description: INodeProperties[] = forOperation('account', 'update', accountFields);

export const endpoint = endpoints.updateAccount;

/** The Messaging Trigger registers itself the same way when its workflow is activated. */
export async function execute(this: IExecuteFunctions, itemIndex: number, run: MessagingRun): Promise<INodeExecutionData> {
	const params = accountParams(run, itemIndex);
	const result = await updateAccount(run.client, params, { version: run.options(itemIndex).version, signal: run.signal });
	return { json: accountJson(result, params) };
}
