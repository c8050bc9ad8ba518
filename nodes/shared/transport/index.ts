export { ApiClient, sharedTokenCache, type ApiCredentials } from './client';
export { closeConnections, MAX_CONNECTIONS_PER_ORIGIN } from './connections';
export { buildBody, type DataUriParam, type ParamValue } from './body';
export { parseCredentials, CredentialError } from './credentialFields';
export {
	endpoints,
	tokenEndpoint,
	describeEndpoint,
	type ApiGroup,
	type Endpoint,
} from './endpoints';
export { parseEnvelope, statusText } from './envelope';
export { ApiError, deliveryUnknownWarning } from './errors';
export { redact } from './redact';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry';
export { TokenCache } from './tokenCache';
