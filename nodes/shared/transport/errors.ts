import { describeEndpoint, type Endpoint } from './endpoints';

// `rpc`: an error in the JSON-RPC envelope; `rejected`: answered but not done (`sent: false`);
// `unexpected-answer`: JSON that does not say what the call needs.
type ApiErrorKind =
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
	reason: string;
	httpStatus?: number;
	serverMessage?: string;
	rpcCode?: number;
	authFailure?: boolean;
	/** A write was sent and its answer lost: the server may have done it, so it is never retried. */
	deliveryUnknown?: boolean;
	causeCode?: string;
	retryAfterSeconds?: number;
}

/** In the message, not only the hint: it is what error items show and people alert on. */
export function deliveryUnknownWarning(endpoint: Endpoint): string {
	return endpoint.rejection === 'sentFalse'
		? 'the message may have been delivered, so it was not sent again: check the recipient before sending it again'
		: 'the gateway may have done it, so it was not repeated: check the gateway before trying again';
}

/** Its message never holds a secret or token. */
export class ApiError extends Error {
	override readonly name = 'ApiError';
	readonly endpoint: string;
	declare readonly kind: ApiErrorKind;
	declare readonly httpStatus?: number;
	declare readonly serverMessage?: string;
	declare readonly rpcCode?: number;
	declare readonly authFailure: boolean;
	declare readonly deliveryUnknown: boolean;
	declare readonly causeCode?: string;
	declare readonly retryAfterSeconds?: number;
	attempts = 1;

	constructor(endpoint: Endpoint, { reason, ...details }: ApiErrorDetails) {
		const server = details.serverMessage ? `: "${details.serverMessage}"` : '';
		const warning = details.deliveryUnknown ? `; ${deliveryUnknownWarning(endpoint)}` : '';
		super(`${describeEndpoint(endpoint)} failed: ${reason}${server}${warning}`);
		this.endpoint = describeEndpoint(endpoint);
		Object.assign(this, { authFailure: false, deliveryUnknown: false, ...details });
	}

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
