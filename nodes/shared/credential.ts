import {
	NodeOperationError,
	type ICredentialDataDecryptedObject,
	type ICredentialsDecrypted,
	type ICredentialTestFunctions,
	type IExecuteFunctions,
	type IHookFunctions,
	type INodeCredentialTestResult,
	type IPollFunctions,
	type IWebhookFunctions,
} from 'n8n-workflow';

import { testCredential } from './credentialTest';
import { ApiClient, CredentialError, parseCredentials, type ApiCredentials } from './transport';

/** The one credential type of the package (credentials/MessagingRateApi.credentials.ts). */
const CREDENTIAL_TYPE = 'messagingRateApi';

/** Every n8n context a node of the package reads its credential in. */
export type CredentialContext =
	IExecuteFunctions | IHookFunctions | IWebhookFunctions | IPollFunctions;

/**
 * The node's credential, validated: the one place where a node reads it. Credential mistakes
 * become an n8n error that says which field to correct, never showing the secret.
 */
export async function readCredential(ctx: CredentialContext): Promise<ApiCredentials> {
	const stored = await ctx.getCredentials<ICredentialDataDecryptedObject>(CREDENTIAL_TYPE);
	try {
		return parseCredentials(stored);
	} catch (error) {
		if (error instanceof CredentialError) {
			throw new NodeOperationError(ctx.getNode(), error.message, {
				description: 'Open the "Messaging & Rate API" credential and correct the field.',
			});
		}
		throw new NodeOperationError(ctx.getNode(), error instanceof Error ? error : String(error));
	}
}

/** The transport client for the node's credential (tokens and connections are shared per process). */
export async function apiClientFor(ctx: CredentialContext): Promise<ApiClient> {
	return new ApiClient(await readCredential(ctx));
}

/**
 * The credential's "Test" button: really authenticates (a fresh token, not a cached one) and
 * calls the token-check endpoint, through the same transport the nodes use; a failure says what
 * to change in the credential (credentialTest.ts).
 */
export async function messagingRateApiTest(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted<ICredentialDataDecryptedObject>,
): Promise<INodeCredentialTestResult> {
	return await testCredential(credential.data ?? {});
}
