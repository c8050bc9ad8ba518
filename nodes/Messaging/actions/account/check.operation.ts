import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { checkAccount } from '../../../shared/account';
import { forOperation } from '../../../shared/operation';
import { endpoints } from '../../../shared/transport';
import type { MessagingRun } from '../../parameters';
import { accountFields, accountJson, accountParams } from './shared';

export const description: INodeProperties[] = forOperation('account', 'check', accountFields);

export const endpoint = endpoints.checkAccount;

export async function execute(this: IExecuteFunctions, itemIndex: number, run: MessagingRun): Promise<INodeExecutionData> {
	const params = accountParams(run, itemIndex);
	const result = await checkAccount(run.client, params, { version: run.options(itemIndex).version, signal: run.signal });
	return { json: accountJson(result, params) };
}
