import { timerDelay } from './timer';

/**
 * The time as the nodes read it and wait for it, in one place: state that outlives a run
 * (idempotency windows, repeated deliveries, the account's send cap) asks `clock.now()`, and
 * every wait of the package (the delay between requests, the pacing between messages, a wait
 * for the send cap or the send window) is `clock.sleep()`. A test moves time with
 * `jest.spyOn(clock, 'now')` / `jest.spyOn(clock, 'sleep')` instead of waiting for it.
 */
export const clock = {
	now: (): number => Date.now(),
	/**
	 * Resolves after `ms` (cut to what a timer holds), or rejects with the signal's reason as
	 * soon as `signal` aborts (n8n's Stop), so that a long wait never outlives its execution.
	 */
	sleep: async (ms: number, signal?: AbortSignal): Promise<void> =>
		await new Promise<void>((resolve, reject) => {
			if (signal?.aborted) {
				reject(abortReason(signal));
				return;
			}
			const onAbort = () => {
				clearTimeout(timer);
				reject(abortReason(signal as AbortSignal));
			};
			const timer = setTimeout(() => {
				signal?.removeEventListener('abort', onAbort);
				resolve();
			}, timerDelay(ms));
			signal?.addEventListener('abort', onAbort, { once: true });
		}),
};

function abortReason(signal: AbortSignal): Error {
	return signal.reason instanceof Error ? signal.reason : new Error('The execution was stopped');
}
