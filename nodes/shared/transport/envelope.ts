import type { Endpoint } from './endpoints';
import { ApiError } from './errors';
import type { Redactor } from './redact';

const MAX_SERVER_TEXT = 300;
/** Only this prefix is scanned, so a hostile large page costs no more than a small one. */
const SCANNED_TEXT = 64 * 1024;

interface RpcError {
	code?: unknown;
	message?: unknown;
	data?: { name?: unknown; message?: unknown };
}

export interface Answer {
	readonly status: number;
	readonly text: string;
	readonly retryAfterSeconds?: number;
	readonly location?: string;
}

/** The result of a JSON-RPC answer, or an ApiError with the server's words, redacted. */
export function parseEnvelope(endpoint: Endpoint, answer: Answer, redactor: Redactor): unknown {
	const { status: httpStatus, text, retryAfterSeconds, location } = answer;
	const json = parseJson(text);
	const clean = (said: string) => shorten(redactor.text(said.slice(0, SCANNED_TEXT)));
	// Redacted by key too (an `access_token` the package never saw), then by value.
	const cleanJson = (value: unknown) =>
		clean(JSON.stringify(redactor.value(value)) ?? String(value));
	// Redacted before its tags are dropped and its spaces collapsed: either could break the form
	// of a secret apart (a secret holding `<s>` loses it as a "tag") and leave the rest readable.
	const cleanPage = (page: string) => clean(pageText(redactor.text(page.slice(0, SCANNED_TEXT))));

	if (httpStatus >= 300 && httpStatus < 400) {
		// Redirects are never followed (they could carry the secret elsewhere); whatever the body
		// says, a 3xx is not the service's answer.
		throw new ApiError(endpoint, {
			kind: 'http',
			reason: `HTTP ${httpStatus}: the server redirects${location ? ` to ${clean(location)}` : ''}, and redirects are not followed. Check the Base URL (http:// vs https://, the host name, no path after it)`,
			httpStatus,
		});
	}
	const isWrite = endpoint.httpMethod === 'POST';
	if (httpStatus >= 400) {
		const rpc =
			json && typeof json === 'object'
				? ((json as { error?: RpcError }).error ?? undefined)
				: undefined;
		throw new ApiError(endpoint, {
			kind: 'http',
			reason: `HTTP ${httpStatus}${statusText(httpStatus)}`,
			httpStatus,
			serverMessage: rpc
				? clean(rpcText(rpc))
				: json === undefined
					? cleanPage(text)
					: cleanJson(json),
			rpcCode: rpc && typeof rpc.code === 'number' ? rpc.code : undefined,
			authFailure: httpStatus === 401 || httpStatus === 403,
			retryAfterSeconds,
			// A proxy's "bad gateway" or "gateway timeout" after a write reached it: the gateway
			// behind it may have done it (such a write is never retried, retry.ts).
			deliveryUnknown: isWrite && BEHIND_A_PROXY.has(httpStatus),
		});
	}
	if (text.trim() === '') {
		throw new ApiError(endpoint, {
			kind: 'invalid-response',
			reason: `HTTP ${httpStatus} with an empty body`,
			httpStatus,
			// A write answered with success but no readable words: it may well have been done.
			deliveryUnknown: isWrite,
		});
	}
	if (json === undefined || json === null || typeof json !== 'object') {
		throw new ApiError(endpoint, {
			kind: 'invalid-response',
			reason: `HTTP ${httpStatus} with a body that is not JSON`,
			httpStatus,
			serverMessage: cleanPage(text),
			deliveryUnknown: isWrite,
		});
	}

	const envelope = json as { result?: unknown; error?: RpcError };
	if (envelope.error !== undefined && envelope.error !== null) {
		const rpc = typeof envelope.error === 'object' ? envelope.error : { message: envelope.error };
		const message = rpcText(rpc);
		throw new ApiError(endpoint, {
			kind: 'rpc',
			// Odoo answers every server-side failure with code 200: next to an error it reads like
			// "HTTP 200 OK" and tells the user nothing, so only other codes are shown.
			reason: `the server answered an error${typeof rpc.code === 'number' && rpc.code !== 200 ? ` (code ${rpc.code})` : ''}`,
			httpStatus,
			serverMessage: clean(message),
			rpcCode: typeof rpc.code === 'number' ? rpc.code : undefined,
			authFailure: isAuthFailure(rpc, message),
		});
	}
	// Some routes answer a bare object; accept it as the result rather than fail.
	const result = 'result' in envelope ? envelope.result : json;
	if (endpoint.rejection === 'sentFalse') checkSent(endpoint, httpStatus, result, clean, cleanJson);
	const rejection = rejectionText(endpoint, result);
	if (rejection !== undefined) {
		throw new ApiError(endpoint, {
			kind: 'rejected',
			reason: 'the server refused the request',
			httpStatus,
			serverMessage: clean(rejection),
		});
	}
	return result;
}

const BEHIND_A_PROXY = new Set([502, 504]);

function parseJson(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		return undefined;
	}
}

const YES = new Set(['true', '1', 'yes', 'ok', 'success', 'sent']);
const NO = new Set(['false', '0', 'no', 'error', 'failed', 'fail', 'failure', 'not sent']);

// Sent only when the gateway says so; a clear "no" is a refusal. An answer that says neither is
// "may have been delivered": the gateway accepted the request and may have acted on it.
function checkSent(
	endpoint: Endpoint,
	httpStatus: number,
	result: unknown,
	clean: (said: string) => string,
	cleanJson: (value: unknown) => string,
): void {
	const answer = (result && typeof result === 'object' ? result : {}) as Record<string, unknown>;
	const message =
		answer.message && typeof answer.message === 'object'
			? (answer.message as Record<string, unknown>)
			: undefined;
	const words = (value: unknown) =>
		typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
			? String(value).trim().toLowerCase()
			: undefined;
	const said = [
		message?.message,
		answer.message,
		answer.error,
		message?.error,
		answer.status,
		message?.status,
	].find((value) => typeof value === 'string' && value.trim() !== '') as string | undefined;
	const verdicts = [
		message?.sent,
		answer.sent,
		message?.status,
		answer.status,
		answer.success,
		message?.success,
	].map(words);
	const refused =
		verdicts.some((verdict) => verdict !== undefined && NO.has(verdict)) ||
		(answer.error !== undefined && answer.error !== null && answer.error !== false);
	if (refused) {
		throw new ApiError(endpoint, {
			kind: 'rejected',
			reason: 'the message was not sent',
			httpStatus,
			serverMessage: said !== undefined ? clean(said) : cleanJson(answer),
		});
	}
	const sent = words(message?.sent ?? answer.sent);
	if (sent !== undefined && YES.has(sent)) return;
	throw new ApiError(endpoint, {
		kind: 'unexpected-answer',
		reason: 'the answer does not say the message was sent',
		httpStatus,
		serverMessage: cleanJson(answer),
		deliveryUnknown: true,
	});
}

function rejectionText(endpoint: Endpoint, result: unknown): string | undefined {
	if (!result || typeof result !== 'object') return undefined;
	if (endpoint.rejection === 'successFalse') {
		const answer = result as { success?: unknown; message?: unknown; error?: unknown };
		if (answer.success === false) {
			const text = answer.message ?? answer.error;
			return typeof text === 'string' && text ? text : 'success: false';
		}
	}
	return undefined;
}

// Odoo answers an expired session with code 100. Wrong credentials (`AccessDenied`) are left out:
// a new token would not help.
function isAuthFailure(rpc: RpcError, message: string): boolean {
	if (rpc.code === 100 || rpc.code === 401 || rpc.code === 403) return true;
	const name = typeof rpc.data?.name === 'string' ? rpc.data.name.slice(0, 200) : '';
	if (/SessionExpired/i.test(name)) return true;
	// Sentence by sentence, each test a plain word search: linear, where one pattern with
	// `[^.]*` between two words backtracks quadratically on a long sentence.
	return message
		.slice(0, 2048)
		.split('.')
		.some(
			(sentence) =>
				/unauthori[sz]ed/i.test(sentence) ||
				(AUTH_SUBJECT.test(sentence) && AUTH_PROBLEM.test(sentence)),
		);
}

const AUTH_SUBJECT = /\b(?:session|token)\b/i;
const AUTH_PROBLEM = /\b(?:expired|invalid|not valid|no longer valid)\b/i;

function rpcText(rpc: RpcError): string {
	const parts: string[] = [];
	if (typeof rpc.message === 'string' && rpc.message) parts.push(rpc.message);
	const detail = rpc.data?.message;
	if (typeof detail === 'string' && detail && detail !== rpc.message) parts.push(detail);
	return parts.join(': ') || JSON.stringify(rpc);
}

/** indexOf, not patterns such as `<[^>]+>`, which rescan to the end from every `<` (quadratic). */
function pageText(page: string): string {
	const text = page.slice(0, SCANNED_TEXT);
	const lower = text.toLowerCase();
	const titleAt = lower.indexOf('<title');
	if (titleAt !== -1) {
		const open = lower.indexOf('>', titleAt);
		const close = open === -1 ? -1 : lower.indexOf('</title', open);
		if (close !== -1) return collapse(text.slice(open + 1, close));
	}
	let out = '';
	let at = 0;
	while (at < text.length) {
		const tag = text.indexOf('<', at);
		if (tag === -1) {
			out += text.slice(at);
			break;
		}
		out += `${text.slice(at, tag)} `;
		const end = text.indexOf('>', tag);
		if (end === -1) break; // an unclosed tag: nothing readable follows
		const name = lower.slice(tag + 1, tag + 7);
		const skipTo = name.startsWith('script')
			? '</script'
			: name.startsWith('style')
				? '</style'
				: undefined;
		if (skipTo) {
			const closing = lower.indexOf(skipTo, end);
			const closingEnd = closing === -1 ? -1 : lower.indexOf('>', closing);
			if (closingEnd === -1) break;
			at = closingEnd + 1;
		} else at = end + 1;
	}
	return collapse(out);
}

function collapse(text: string): string {
	return text.replace(/\s+/g, ' ').trim();
}

/** Shortened after redaction: cutting first could leave half a secret behind. */
function shorten(safe: string): string {
	return safe.length > MAX_SERVER_TEXT ? `${safe.slice(0, MAX_SERVER_TEXT)}…` : safe;
}

const STATUS_TEXT: Record<number, string> = {
	400: 'Bad Request',
	401: 'Unauthorized',
	403: 'Forbidden',
	404: 'Not Found',
	405: 'Method Not Allowed',
	410: 'Gone',
	413: 'Payload Too Large',
	415: 'Unsupported Media Type',
	429: 'Too Many Requests',
	500: 'Internal Server Error',
	502: 'Bad Gateway',
	503: 'Service Unavailable',
	504: 'Gateway Timeout',
};

/** ` Not Found` for 404: the words of a status, after a space, or nothing. */
export function statusText(status: number): string {
	return STATUS_TEXT[status] ? ` ${STATUS_TEXT[status]}` : '';
}
