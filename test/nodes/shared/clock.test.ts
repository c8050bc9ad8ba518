/**
 * The package's one module of time and timers (n8n's scanner forbids setTimeout / setInterval in
 * a node): waits end early on an abort, time limits take any number of ms, the periodic task
 * stops. No wall-clock durations are asserted: only order and outcome.
 */
import { MAX_TIMER_MS, clock, timerDelay } from '../../../nodes/shared/clock';

describe('clock', () => {
	it('sleep resolves after the shorter wait first', async () => {
		const order: string[] = [];
		await Promise.all([
			clock.sleep(60).then(() => order.push('60 ms')),
			clock.sleep(5).then(() => order.push('5 ms')),
		]);
		expect(order).toEqual(['5 ms', '60 ms']);
	});

	it('an abort ends an hour-long sleep at once, with the signal reason', async () => {
		const stop = new AbortController();
		const hour = clock.sleep(3_600_000, stop.signal);
		stop.abort(new Error('stopped by the user'));
		await expect(hour).rejects.toThrow('stopped by the user');
		await expect(clock.sleep(10, stop.signal)).rejects.toThrow('stopped by the user');
	});

	it('deadline takes fractions and delays beyond what a timer holds', async () => {
		const fraction = clock.deadline(1.5);
		const long = clock.deadline(10 * MAX_TIMER_MS);
		await clock.sleep(20);
		expect(fraction.aborted).toBe(true);
		expect(long.aborted).toBe(false);
		expect(timerDelay(10 * MAX_TIMER_MS)).toBe(MAX_TIMER_MS);
		expect(timerDelay(Number.NaN)).toBe(0);
	});

	it('limit: the earliest fires first on the shared timer, a cancelled one never', async () => {
		const order: string[] = [];
		clock.limit(80, () => order.push('80 ms'));
		const cancel = clock.limit(10, () => order.push('cancelled'));
		clock.limit(30, () => order.push('30 ms'));
		clock.limit(5, () => order.push('5 ms'));
		const never = clock.limit(10 * MAX_TIMER_MS, () => order.push('beyond a timer'));
		cancel();
		for (let waited = 0; order.length < 3 && waited < 2000; waited += 5) await clock.sleep(5);
		await clock.sleep(20);
		never();
		expect(order).toEqual(['5 ms', '30 ms', '80 ms']);
	});

	it('limit: several due at once (a busy event loop) expire earliest first', async () => {
		const order: string[] = [];
		for (const ms of [80, 30, 5]) clock.limit(ms, () => order.push(`${ms} ms`));
		const busyUntil = performance.now() + 100;
		while (performance.now() < busyUntil); // the event loop is blocked past all three
		for (let waited = 0; order.length < 3 && waited < 2000; waited += 5) await clock.sleep(5);
		expect(order).toEqual(['5 ms', '30 ms', '80 ms']);
	});
});
