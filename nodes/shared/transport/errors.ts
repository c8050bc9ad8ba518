import { describeEndpoint, type Endpoint } from './endpoints';

/**
 * What went wrong, in the terms a user can act on:
 * - `http`: the server answered HTTP >= 400 (its page or JSON text is in `serverMessage`);
 * - `rpc`: HTTP was fine but the JSON-RPC envelope held an `error`;
 * - `rejected`: the call was answered but not done (`sent: false`, `success: false`);
 * - `invalid-response`: the body was empty or not JSON;
 * - `unexpected-answer`: JSON, but it does not say what the call needs (no token, no rates, a
 *   send that does not say it was sent, a number check that says neither yes nor no);
 * - `network`: no answer (connection refused, DNS, reset, dropped socket);
 * - `timeout`: no answer within the credential's timeout;
 * - `aborted`: the execution was cancelled;
 * - `invalid-request`: the request could not be built (a bug or a bad credential).
 */
export type ApiErrorKind =
	| 'http'
	| 'rpc'
	| 'rejected'
	| 'invalid-response'
	| 'unexpected-answer'
	| 'network'
	| 'timeout'
	| 'aborted'
	| 'invalid-request';

export interface ApiErrorDetails {
	kind: ApiErrorKind;
	/** Short statement of the failure, without the endpoint (added by the constructor). */
	reason: string;
	httpStatus?: number;
	/** The server's own words (page title, JSON-RPC message), already redacted. */
	serverMessage?: string;
	rpcCode?: number;
	/** True when an auth failure that a new token can fix (401/403, expired session or token). */
	authFailure?: boolean;
	/**
	 * True when a write was sent and then its answer was lost (socket dropped, timeout): the
	 * server may have processed it. The transport never retries such a write.
	 */
	deliveryUnknown?: boolean;
	/** Low-level cause code (e.g. ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT). */
	causeCode?: string;
	/** Seconds the server asked to wait (429/503 Retry-After). */
	retryAfterSeconds?: number;
}

/**
 * The words every "may have been delivered" failure ends with, in its message (what an error
 * item's `error` and a stopped run's headline show, what people alert on), not only in its hint.
 */
export function deliveryUnknownWarning(endpoint: Endpoint): string {
	return endpoint.rejection === 'sentFalse'
		? 'the message may have been delivered, so it was not sent again: check the recipient before sending it again'
		: 'the gateway may have done it, so it was not repeated: check the gateway before trying again';
}

/** The one error type of the transport. Its message never holds a secret or token. */
export class ApiError extends Error {
	override readonly name = 'ApiError';
	readonly endpoint: string;
	readonly kind: ApiErrorKind;
	readonly httpStatus?: number;
	readonly serverMessage?: string;
	readonly rpcCode?: number;
	readonly authFailure: boolean;
	readonly deliveryUnknown: boolean;
	readonly causeCode?: string;
	readonly retryAfterSeconds?: number;
	/** How many attempts were made (1 = no retry). Set by the client. */
	attempts = 1;

	constructor(endpoint: Endpoint, details: ApiErrorDetails) {
		const server = details.serverMessage ? `: "${details.serverMessage}"` : '';
		const warning = details.deliveryUnknown ? `; ${deliveryUnknownWarning(endpoint)}` : '';
		super(`${describeEndpoint(endpoint)} failed: ${details.reason}${server}${warning}`);
		this.endpoint = describeEndpoint(endpoint);
		this.kind = details.kind;
		this.httpStatus = details.httpStatus;
		this.serverMessage = details.serverMessage;
		this.rpcCode = details.rpcCode;
		this.authFailure = details.authFailure ?? false;
		this.deliveryUnknown = details.deliveryUnknown ?? false;
		this.causeCode = details.causeCode;
		this.retryAfterSeconds = details.retryAfterSeconds;
	}

	/** A sentence on what the user can do, for n8n's error description. */
	get hint(): string {
		if (this.deliveryUnknown) {
			return 'The request reached the gateway, but its answer was lost, unreadable or does not say whether it was done, so it may have been processed (for a send: the message may have been delivered). It was not retried, to never send it twice; check the recipient or the gateway before sending again.';
		}
		if (this.kind === 'network') {
			return 'The server could not be reached. Check the Base URL in the credential and that the service is up.';
		}
		if (this.kind === 'timeout') {
			return 'No answer within the credential\'s timeout. Raise "Request Timeout" in the credential if the service is slow.';
		}
		if (this.authFailure || this.httpStatus === 401 || this.httpStatus === 403) {
			return 'Authentication failed even with a new token. Check the Client ID and Client Secret in the credential.';
		}
		if (this.httpStatus === 429) {
			return 'The service is rate-limiting this account. Lower "Parallel Requests" or add a delay between requests.';
		}
		if (this.kind === 'unexpected-answer') {
			return "The gateway answered, but not in a form this node can read (its words are in the error). If it persists, the gateway's API may have changed: check its documentation or ask its provider.";
		}
		if (this.kind === 'invalid-response') {
			return 'The server did not answer JSON. The Base URL may point at the wrong site, or a proxy in front of the service is failing.';
		}
		return '';
	}
}
