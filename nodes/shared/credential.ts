import {
	NodeOperationError,
	type ICredentialDataDecryptedObject,
	type IExecuteFunctions,
	type IHookFunctions,
	type IPollFunctions,
	type IWebhookFunctions,
} from 'n8n-workflow';

import { ApiClient, CredentialError, parseCredentials, type ApiCredentials } from './transport';

const CREDENTIAL_TYPE = 'messagingRateApi';

export type CredentialContext =
	IExecuteFunctions | IHookFunctions | IWebhookFunctions | IPollFunctions;

/** The one place a node reads its credential; a mistake names the field, never the secret. */
export async function readCredential(ctx: CredentialContext): Promise<ApiCredentials> {
	const stored = await ctx.getCredentials<ICredentialDataDecryptedObject>(CREDENTIAL_TYPE);
	try {
		return parseCredentials(stored);
	} catch (error) {
		if (error instanceof CredentialError)
			throw new NodeOperationError(ctx.getNode(), error.message, {
				description: 'Open the "Messaging & Rate API" credential and correct the field.',
			});
		throw new NodeOperationError(ctx.getNode(), error instanceof Error ? error : String(error));
	}
}

export async function apiClientFor(ctx: CredentialContext): Promise<ApiClient> {
	return new ApiClient(await readCredential(ctx));
}
