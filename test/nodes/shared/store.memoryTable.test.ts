/**
 * The process memory's table (nodes/shared/store.ts, lru-cache): entries expire at their time on
 * the nodes' clock, and the least recently used leave first once the table is over its byte budget.
 */
import { clock } from '../../../nodes/shared/clock';
import { MemoryTable } from '../../../nodes/shared/store';

const table = (budgetBytes: number) =>
	new MemoryTable<string>(budgetBytes, (value) => 2 * value.length);

let now = 0;
beforeEach(() => {
	now = 1_000_000;
	jest.spyOn(clock, 'now').mockImplementation(() => now);
});
afterEach(() => jest.restoreAllMocks());

/** What one entry of a one-letter key and value counts, as the table itself counts it. */
function entryBytes(): number {
	const t = table(Number.MAX_SAFE_INTEGER);
	t.set('a', 'x', Infinity);
	return t.size().bytes;
}

it('forgets an entry at its expiry', () => {
	const t = table(10_000);
	t.set('a', 'x', now + 1_000);
	now += 999;
	expect(t.get('a')).toBe('x');
	now += 1;
	expect(t.get('a')).toBeUndefined();
	expect(t.size().entries).toBe(0);
});

it('over budget, drops the least recently used entry, not the oldest set', () => {
	const t = table(3 * entryBytes());
	t.set('a', 'x', Infinity);
	t.set('b', 'x', Infinity);
	t.set('c', 'x', Infinity);
	// "a" is read (used) again, so "b" is now the least recently used.
	expect(t.get('a')).toBe('x');
	t.set('d', 'x', Infinity);
	expect(['a', 'b', 'c', 'd'].map((key) => t.get(key) !== undefined)).toEqual([
		true,
		false,
		true,
		true,
	]);
	expect(t.size().bytes).toBeLessThanOrEqual(t.budgetBytes);
});

it('counts bytes, not entries: one large entry pushes out several small ones', () => {
	// Room for five small entries and a bit; the big one counts as three of them.
	const small = entryBytes() + 2;
	const t = table(5 * small + 10);
	for (let i = 0; i < 5; i++) t.set(`k${i}`, 'x', Infinity);
	t.set('big', 'y'.repeat(small), Infinity);
	// Three small ones leave.
	expect(t.size().entries).toBe(3);
	expect(['k0', 'k1', 'k2', 'k3', 'k4', 'big'].map((key) => t.get(key) !== undefined)).toEqual([
		false,
		false,
		false,
		true,
		true,
		true,
	]);
});

it('knows since when it lost nothing early: an entry pushed out or a clear moves it', () => {
	const t = table(2 * entryBytes());
	expect(t.completeSince).toBe(now);
	now += 10;
	t.set('a', 'x', Infinity);
	t.set('b', 'x', Infinity);
	expect(t.completeSince).toBe(1_000_000);
	now += 10;
	t.set('c', 'x', Infinity);
	expect(t.completeSince).toBe(now);
	now += 10;
	t.clear();
	expect(t.completeSince).toBe(now);
});
