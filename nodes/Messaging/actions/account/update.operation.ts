import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { updateAccount } from '../../../shared/gateway';
import type { ItemCall } from '../../../shared/execution/router';
import { forOperation } from '../../../shared/properties';
import { endpoints } from '../../../shared/transport';
import type { MessagingRun } from '../../run';
import { accountFields, accountJson, accountParams } from '../../helpers/accountFields';

export const description: INodeProperties[] = forOperation('account', 'update', accountFields);

export const endpoint = endpoints.updateAccount;

export function execute(this: IExecuteFunctions, itemIndex: number, run: MessagingRun): ItemCall {
	const params = accountParams(run, itemIndex);
	const { version } = run.options(itemIndex);
	return async () => {
		const result = await updateAccount(run.client, params, { version, signal: run.signal });
		return { json: accountJson(result) };
	};
}
