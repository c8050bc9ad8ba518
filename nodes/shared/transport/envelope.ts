import type { Endpoint } from './endpoints';
import { ApiError, redact } from './errors';

const MAX_SERVER_TEXT = 300;

interface RpcError {
	code?: unknown;
	message?: unknown;
	data?: { name?: unknown; message?: unknown };
}

/**
 * Turns one HTTP answer into the JSON-RPC `result`, or throws the one `ApiError` that says what
 * the server said. Handles the shapes the service is known to send: the JSON-RPC envelope,
 * errors inside HTTP 200, HTML pages from a proxy, empty bodies and bodies that are not JSON.
 */
export function parseEnvelope(
	endpoint: Endpoint,
	httpStatus: number,
	text: string,
	secrets: readonly string[],
	retryAfterSeconds?: number,
): unknown {
	const json = parseJson(text);

	if (httpStatus >= 400) {
		const rpc = json && typeof json === 'object' ? ((json as { error?: RpcError }).error ?? undefined) : undefined;
		throw new ApiError(endpoint, {
			kind: 'http',
			reason: `HTTP ${httpStatus}${statusText(httpStatus)}`,
			httpStatus,
			serverMessage: clean(rpc ? rpcText(rpc) : json === undefined ? pageText(text) : JSON.stringify(json), secrets),
			rpcCode: rpc && typeof rpc.code === 'number' ? rpc.code : undefined,
			authFailure: httpStatus === 401 || httpStatus === 403,
			retryAfterSeconds,
		});
	}
	if (text.trim() === '') {
		throw new ApiError(endpoint, { kind: 'invalid-response', reason: `HTTP ${httpStatus} with an empty body`, httpStatus });
	}
	if (json === undefined || json === null || typeof json !== 'object') {
		throw new ApiError(endpoint, {
			kind: 'invalid-response',
			reason: `HTTP ${httpStatus} with a body that is not JSON`,
			httpStatus,
			serverMessage: clean(pageText(text), secrets),
		});
	}

	const envelope = json as { result?: unknown; error?: RpcError };
	if (envelope.error !== undefined && envelope.error !== null) {
		const rpc = typeof envelope.error === 'object' ? envelope.error : { message: envelope.error };
		const message = rpcText(rpc);
		throw new ApiError(endpoint, {
			kind: 'rpc',
			reason: `the server answered an error${typeof rpc.code === 'number' ? ` (code ${rpc.code})` : ''}`,
			httpStatus,
			serverMessage: clean(message, secrets),
			rpcCode: typeof rpc.code === 'number' ? rpc.code : undefined,
			authFailure: isAuthFailure(rpc, message),
		});
	}
	// Some routes answer a bare object; accept it as the result rather than fail.
	const result = 'result' in envelope ? envelope.result : json;
	const rejection = rejectionText(endpoint, result);
	if (rejection !== undefined) {
		throw new ApiError(endpoint, {
			kind: 'rejected',
			reason: endpoint.rejection === 'sentFalse' ? 'the message was not sent' : 'the server refused the request',
			httpStatus,
			serverMessage: clean(rejection, secrets),
		});
	}
	return result;
}

function parseJson(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		return undefined;
	}
}

/** `sent: false` and `success: false` are failures even though the envelope says success. */
function rejectionText(endpoint: Endpoint, result: unknown): string | undefined {
	if (!result || typeof result !== 'object') return undefined;
	if (endpoint.rejection === 'sentFalse') {
		const message = (result as { message?: { sent?: unknown; message?: unknown } }).message;
		if (message && typeof message === 'object' && message.sent === false) {
			return typeof message.message === 'string' && message.message ? message.message : 'sent: false';
		}
	}
	if (endpoint.rejection === 'successFalse') {
		const answer = result as { success?: unknown; message?: unknown; error?: unknown };
		if (answer.success === false) {
			const text = answer.message ?? answer.error;
			return typeof text === 'string' && text ? text : 'success: false';
		}
	}
	return undefined;
}

/**
 * JSON-RPC errors that a fresh token can fix. Odoo answers an expired session with code 100
 * (`odoo.http.SessionExpiredException`); other deployments word it as an invalid or expired
 * token. Wrong credentials (`AccessDenied`) are not in this set: a new token would not help.
 */
function isAuthFailure(rpc: RpcError, message: string): boolean {
	if (rpc.code === 100 || rpc.code === 401 || rpc.code === 403) return true;
	const name = typeof rpc.data?.name === 'string' ? rpc.data.name : '';
	if (/SessionExpired/i.test(name)) return true;
	return /\b(session|token)\b[^.]*\b(expired|invalid|not valid|no longer valid)\b|\b(expired|invalid)\b[^.]*\b(session|token)\b|unauthori[sz]ed/i.test(
		message,
	);
}

function rpcText(rpc: RpcError): string {
	const parts: string[] = [];
	if (typeof rpc.message === 'string' && rpc.message) parts.push(rpc.message);
	const detail = rpc.data?.message;
	if (typeof detail === 'string' && detail && detail !== rpc.message) parts.push(detail);
	return parts.join(': ') || JSON.stringify(rpc);
}

/** The readable part of an HTML error page: its title, else its text. */
function pageText(text: string): string {
	const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1];
	const source = title ?? text.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/gi, '');
	return source.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();
}

/** Redact first, then shorten: cutting first could leave half a secret behind. */
function clean(text: string, secrets: readonly string[]): string {
	const safe = redact(text, secrets);
	return safe.length > MAX_SERVER_TEXT ? `${safe.slice(0, MAX_SERVER_TEXT)}…` : safe;
}

const STATUS_TEXT: Record<number, string> = {
	400: 'Bad Request',
	401: 'Unauthorized',
	403: 'Forbidden',
	404: 'Not Found',
	405: 'Method Not Allowed',
	413: 'Payload Too Large',
	415: 'Unsupported Media Type',
	429: 'Too Many Requests',
	500: 'Internal Server Error',
	502: 'Bad Gateway',
	503: 'Service Unavailable',
	504: 'Gateway Timeout',
};

function statusText(status: number): string {
	return STATUS_TEXT[status] ? ` ${STATUS_TEXT[status]}` : '';
}
