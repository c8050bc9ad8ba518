import {
	NodeOperationError,
	type ICredentialDataDecryptedObject,
	type ICredentialsDecrypted,
	type ICredentialTestFunctions,
	type IExecuteFunctions,
	type IHookFunctions,
	type INodeCredentialTestResult,
	type IWebhookFunctions,
} from 'n8n-workflow';

import { ApiClient, CredentialError, TokenCache, endpoints, parseCredentials } from './transport';

export const CREDENTIAL_TYPE = 'messagingRateApi';

/** The transport client for the node's credential; credential mistakes become clear n8n errors. */
export async function apiClientFor(ctx: IExecuteFunctions | IHookFunctions | IWebhookFunctions): Promise<ApiClient> {
	const stored = await ctx.getCredentials<ICredentialDataDecryptedObject>(CREDENTIAL_TYPE);
	try {
		return new ApiClient(parseCredentials(stored));
	} catch (error) {
		if (error instanceof CredentialError) {
			throw new NodeOperationError(ctx.getNode(), error.message, {
				description: 'Open the "Messaging & Rate API" credential and correct the field.',
			});
		}
		throw error;
	}
}

/**
 * The credential's "Test" button: really authenticates (a fresh token, not a cached one) and
 * calls the token-check endpoint, through the same transport the nodes use.
 */
export async function messagingRateApiTest(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted<ICredentialDataDecryptedObject>,
): Promise<INodeCredentialTestResult> {
	try {
		const client = new ApiClient(parseCredentials(credential.data ?? {}), new TokenCache());
		await client.call(endpoints.waProtected);
		return { status: 'OK', message: 'Connection successful: a token was issued and accepted' };
	} catch (error) {
		return { status: 'Error', message: error instanceof Error ? error.message : String(error) };
	}
}
