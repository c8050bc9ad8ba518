import { sleep as n8nSleep } from 'n8n-workflow';

// Every time read, wait and limit goes through here, so that tests can move time. No setTimeout
// (n8n's package scanner forbids it): waits are n8n-workflow's `sleep` in one-second slices, so an
// abort ends them at once; limits are `AbortSignal.timeout`, which keeps no process alive.
export const clock = {
	now: (): number => Date.now(),

	/** Rejects as soon as `signal` aborts (n8n's Stop): a wait never outlives its execution. */
	sleep: async (ms: number, signal?: AbortSignal): Promise<void> => {
		const until = Date.now() + timerDelay(ms);
		for (let left = until - Date.now(); left > 0; left = until - Date.now()) {
			if (signal?.aborted) throw abortReason(signal);
			await (signal
				? untilAborted(signal, n8nSleep(Math.min(left, SLICE_MS)))
				: n8nSleep(Math.min(left, SLICE_MS)));
		}
		if (signal?.aborted) throw abortReason(signal);
	},

	deadline: (ms: number): AbortSignal => AbortSignal.timeout(Math.ceil(timerDelay(ms))),

	/** Calls `expire` after `ms` of real time (not `clock.now()`, which tests move); the result cancels. */
	limit: (ms: number, expire: () => void): (() => void) => {
		const signal = clock.deadline(ms);
		signal.addEventListener('abort', expire, { once: true });
		return () => signal.removeEventListener('abort', expire);
	},
};

const SLICE_MS = 1000;

/** Node fires a longer delay after 1 ms: a timeout of a year would expire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export function timerDelay(ms: number): number {
	return Number.isNaN(ms) || ms < 0 ? 0 : Math.min(ms, MAX_TIMER_MS);
}

async function untilAborted(signal: AbortSignal, wait: Promise<void>): Promise<void> {
	let onAbort = () => {};
	try {
		await Promise.race([
			wait,
			new Promise<never>((_resolve, reject) => {
				onAbort = () => reject(abortReason(signal));
				signal.addEventListener('abort', onAbort, { once: true });
			}),
		]);
	} finally {
		signal.removeEventListener('abort', onAbort);
	}
}

export function abortReason(signal: AbortSignal): Error {
	return signal.reason instanceof Error ? signal.reason : new Error('The execution was stopped');
}
