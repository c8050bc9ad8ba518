/**
 * Node's timers take at most 2^31 - 1 ms (about 24.8 days): a longer delay fires after 1 ms, so a
 * timeout of "a year" would time out at once. Every delay the package sets goes through here.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A delay a timer can hold: longer ones are cut to MAX_TIMER_MS, NaN and negatives to 0. */
export function timerDelay(ms: number): number {
	return Number.isNaN(ms) || ms < 0 ? 0 : Math.min(ms, MAX_TIMER_MS);
}
