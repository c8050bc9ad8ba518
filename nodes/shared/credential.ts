import type {
	ICredentialDataDecryptedObject,
	IExecuteFunctions,
	IHookFunctions,
	IPollFunctions,
	IWebhookFunctions,
} from 'n8n-workflow';

import { toNodeError } from './errors';
import { ApiClient, parseCredentials, type ApiCredentials } from './transport';

const CREDENTIAL_TYPE = 'messagingRateApi';

export type CredentialContext =
	IExecuteFunctions | IHookFunctions | IWebhookFunctions | IPollFunctions;

/** The one place a node reads its credential; a mistake names the field, never the secret. */
export async function readCredential(ctx: CredentialContext): Promise<ApiCredentials> {
	const stored = await ctx.getCredentials<ICredentialDataDecryptedObject>(CREDENTIAL_TYPE);
	try {
		return parseCredentials(stored);
	} catch (error) {
		throw toNodeError(ctx.getNode(), error);
	}
}

export async function apiClientFor(ctx: CredentialContext): Promise<ApiClient> {
	return new ApiClient(await readCredential(ctx));
}
