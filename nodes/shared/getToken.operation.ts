import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import type { ItemCall, OperationModule } from './execution/router';
import type { OperationRun } from './execution/operationRun';
import { tokenEndpoint, type ApiGroup } from './transport';

/** How the output names each API group (the words the docs use). */
const API_NAME: Record<ApiGroup, string> = { wa: 'messaging', rate: 'rates' };

/**
 * Auth → Get Token, the same operation in the Messaging node (messaging API) and the Currency
 * Rate node (rates API): drops the credential's cached token of that API and requests a new
 * one, which later operations of the credential use. The output says until when it is used,
 * never the token itself (execution data is stored, and visible to everyone who can open the
 * workflow's executions):
 *
 *   { "tokenRenewed": true, "api": "messaging", "expiresAt": "2026-…Z", "response": { "connection": "ok" } }
 *
 * `response` is the token answer with every credential in it redacted, by key (`token`,
 * `access_token`, `refresh_token`, `client_secret`, …) and by value in every form redact.ts
 * lists: the client's `redact`, the one function every answer shown to the user goes through.
 */
export function getTokenOperation<C extends OperationRun<unknown>>(
	api: ApiGroup,
): OperationModule<C> {
	return {
		// No parameters: the credential says everything the token request needs.
		description: [],
		endpoint: tokenEndpoint[api],
		// No per-item parameters: one token request per run, whatever the number of input items.
		once: true,
		execute(this: IExecuteFunctions, _itemIndex: number, run: C): ItemCall {
			return async () => {
				const { token, answer } = await run.client.renewToken(api, { signal: run.signal });
				const response = run.client.redact(
					(answer && typeof answer === 'object' ? answer : {}) as IDataObject,
				);
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
