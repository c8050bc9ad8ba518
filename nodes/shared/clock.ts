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
			const slice = n8nSleep(Math.min(left, SLICE_MS));
			await (signal ? untilAborted(signal, slice) : slice);
		}
		if (signal?.aborted) throw abortReason(signal);
	},

	/** One turn of the event loop, so that other work runs during a long loop. */
	pause: async (): Promise<void> => await n8nSleep(0),

	deadline: (ms: number): AbortSignal => AbortSignal.timeout(Math.ceil(timerDelay(ms))),

	// Every limit shares one timer: a bulk send sets and cancels one per request, and a timer each
	// was a visible share of a request's CPU. Real time, not `clock.now()`, which tests move.
	limit: (ms: number, expire: () => void): (() => void) => limits.add(timerDelay(ms), expire),
};

const SLICE_MS = 1000;

/** Armed for the earliest limit only: a request costs a Set entry, not a timer. */
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

	/** Several due at once (a busy event loop) expire earliest first. */
	private readonly fire = (): void => {
		this.timer = undefined;
		const now = performance.now();
		const due = [...this.pending].filter((limit) => limit.at <= now).sort((a, b) => a.at - b.at);
		for (const limit of due) {
			this.pending.delete(limit);
			limit.expire();
		}
		// After the expiries: what they added counts too.
		let next = Infinity;
		for (const limit of this.pending) next = Math.min(next, limit.at);
		if (next < this.armedAt()) this.arm(next);
	};

	private armedAt(): number {
		return this.timer?.at ?? Infinity;
	}
}

const limits = new Limits();

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
