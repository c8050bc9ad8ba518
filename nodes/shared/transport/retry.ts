// A read is retried on any transient failure; a write only when the server cannot have processed
// it: undici never started writing it, or the server said "not now" (429, 503). A write handed to
// a socket is never retried: EHOSTUNREACH can come after the request went out.

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

export function isRetryableStatus(status: number, isWrite: boolean): boolean {
	return (isWrite ? WRITE_RETRY_STATUSES : READ_RETRY_STATUSES).has(status);
}

/** Half to all of an exponential ceiling, so that many callers failing together spread out. */
export function retryDelayMs(
	retry: number,
	policy: RetryPolicy,
	retryAfterSeconds?: number,
): number {
	if (retryAfterSeconds !== undefined) return retryAfterSeconds * 1000;
	const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
	return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
	if (!value) return undefined;
	const seconds = Number(value);
	if (Number.isFinite(seconds) && seconds >= 0) return seconds;
	const date = Date.parse(value);
	return Number.isFinite(date) ? Math.max(0, (date - now) / 1000) : undefined;
}
