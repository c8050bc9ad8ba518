import type { IExecuteFunctions } from 'n8n-workflow';

import type { ItemCall, OperationModule } from './execution/router';
import type { OperationRun } from './execution/operationRun';
import { asOptions } from './properties';
import { tokenEndpoint, type ApiGroup } from './transport';

const API_NAME: Record<ApiGroup, string> = { wa: 'messaging', rate: 'rates' };

/** The output never holds the token: execution data is visible to whoever opens the executions. */
export function getTokenOperation<C extends OperationRun<unknown>>(
	api: ApiGroup,
): OperationModule<C> {
	return {
		description: [],
		endpoint: tokenEndpoint[api],
		once: true,
		execute(this: IExecuteFunctions, _itemIndex: number, run: C): ItemCall {
			return async () => {
				const { token, answer } = await run.client.renewToken(api, { signal: run.signal });
				const response = run.client.redact(asOptions(answer));
				return {
					json: {
						tokenRenewed: true,
						api: API_NAME[api],
						expiresAt: new Date(token.expiresAt).toISOString(),
						response,
					},
				};
			};
		},
	};
}
