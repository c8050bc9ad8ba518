/**
 * The transport: everything about talking to the service, nothing about n8n's UI.
 * Operations call `new ApiClient(credentials).call(endpoints.x, params)` and get the `result`
 * or an `ApiError`.
 */
export { ApiClient, closeConnections, sharedTokenCache, type ApiCredentials, type CallOptions } from './client';
export { buildBody, isDataUriParam, type DataUriParam, type ParamValue } from './body';
export { parseCredentials, CredentialError, type StoredCredentials } from './credentials';
export { endpoints, tokenEndpoint, describeEndpoint, type ApiGroup, type Endpoint, type EndpointName } from './endpoints';
export { parseEnvelope } from './envelope';
export { ApiError, redact, redactDeep, type ApiErrorKind } from './errors';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry';
export { TokenCache, tokenExpiry, type Token } from './tokenCache';
