/**
 * `useVirtualTime()`: the nodes' clock (`nodes/shared/clock.ts`) under the test's control, for
 * every test of the file (or describe block) that calls it. `clock.now()` reads a virtual time
 * that starts at the real one; `clock.sleep(ms)` wakes at virtual `now + ms` (time moves to the
 * latest wake so far, never by the sum of concurrent sleeps) after a real pause of 1 ms per
 * virtual second (at most 200 ms): long enough for a request already on its way to the sandbox
 * to land before another run's wait ends, as in real time; it rejects when its signal aborts.
 * Pacing, the account cap and send windows then take no real time, and a test asserts times
 * from the virtual clock only (pass `now` to the sandbox so that its ledger uses it too).
 */
import { clock } from '../../nodes/shared/clock';

export interface VirtualTime {
	/** The virtual time now (ms since the epoch). */
	now(): number;
	/** Sets the virtual time to `at` (a test's scene: Monday 08:59:50, say). */
	set(at: number): void;
	/** Every wait asked of `clock.sleep` in this test, in ms, in order. */
	sleeps(): number[];
}

export function useVirtualTime(): VirtualTime {
	let now = 0;
	let sleeps: number[] = [];
	beforeEach(() => {
		now = Date.now();
		sleeps = [];
		jest.spyOn(clock, 'now').mockImplementation(() => now);
		jest.spyOn(clock, 'sleep').mockImplementation(async (ms: number, signal?: AbortSignal) => {
			sleeps.push(ms);
			// Date.now() is whole milliseconds, and so is this clock.
			const wakeAt = now + Math.max(0, Math.ceil(ms));
			await new Promise((resolve) => setTimeout(resolve, Math.min(200, Math.ceil(ms / 1000))));
			now = Math.max(now, wakeAt);
			if (signal?.aborted) throw new Error('The execution was stopped');
		});
	});
	afterEach(() => {
		jest.restoreAllMocks();
	});
	return {
		now: () => now,
		set: (at) => {
			now = at;
		},
		sleeps: () => sleeps,
	};
}
