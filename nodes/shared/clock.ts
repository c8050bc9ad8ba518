/**
 * The time as the nodes read it, in one place: state that outlives a run (idempotency windows,
 * repeated deliveries, and the pacing that builds on them) asks `clock.now()`, so a test moves
 * time with `jest.spyOn(clock, 'now')` instead of waiting for it.
 */
export const clock = {
	now: (): number => Date.now(),
};
