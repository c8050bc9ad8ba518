export { ApiClient, sharedTokenCache, type ApiCredentials } from './client';
export { type DataUriParam } from './body';
export { parseCredentials, CredentialError } from './credentialFields';
export {
	endpoints,
	tokenEndpoint,
	describeEndpoint,
	type ApiGroup,
	type Endpoint,
} from './endpoints';
export { statusText } from './envelope';
export { ApiError } from './errors';
export { redact } from './redact';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry';
export { TokenCache } from './tokenCache';
