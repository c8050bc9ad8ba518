// A read is retried on any transient failure; a write only when the server cannot have processed
// it: undici never started writing it (`onRequestStart`), or the server said "not now" (429, 503).
// A write handed to a socket is never retried: EHOSTUNREACH can come after the request went out.

export interface RetryPolicy {
	readonly maxRetries: number;
	readonly baseDelayMs: number;
	readonly maxDelayMs: number;
	/** A Retry-After longer than this is not waited for: the call fails and says so. */
	readonly maxRetryAfterSeconds: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
	maxRetries: 3,
	baseDelayMs: 300,
	maxDelayMs: 5_000,
	maxRetryAfterSeconds: 60,
};

const READ_RETRY_STATUSES = new Set([429, 502, 503, 504]);
const WRITE_RETRY_STATUSES = new Set([429, 503]);

const TIMEOUT_CODES = new Set([
	'UND_ERR_HEADERS_TIMEOUT',
	'UND_ERR_BODY_TIMEOUT',
	'UND_ERR_CONNECT_TIMEOUT',
]);

export function isRetryableStatus(status: number, isWrite: boolean): boolean {
	return (isWrite ? WRITE_RETRY_STATUSES : READ_RETRY_STATUSES).has(status);
}

export function isTimeoutCode(code: string | undefined): boolean {
	return code !== undefined && TIMEOUT_CODES.has(code);
}

export function isRetryableNetworkError(isWrite: boolean, dispatched: boolean): boolean {
	return isWrite ? !dispatched : true;
}

export function retryDelayMs(
	retry: number,
	policy: RetryPolicy,
	retryAfterSeconds?: number,
	random: () => number = Math.random,
): number {
	if (retryAfterSeconds !== undefined) return retryAfterSeconds * 1000;
	const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
	return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

export function parseRetryAfter(
	header: string | string[] | undefined,
	now = Date.now(),
): number | undefined {
	const value = Array.isArray(header) ? header[0] : header;
	if (!value) return undefined;
	const seconds = Number(value);
	if (Number.isFinite(seconds) && seconds >= 0) return seconds;
	const date = Date.parse(value);
	return Number.isFinite(date) ? Math.max(0, (date - now) / 1000) : undefined;
}
