/**
 * State kept in this process's memory: a table of entries that expire, least recently used
 * first out once the table is over its byte budget. One table per purpose (each with its own
 * budget), so that one purpose cannot evict another's entries: a burst of "Listen for test event"
 * deliveries never pushes out what an active trigger remembers, and neither pushes out sends.
 *
 * Sizes are estimates (key and value lengths plus a fixed overhead per entry), counted the same
 * way for every entry, so the budget bounds what the table holds in the same proportion.
 */

/** What one entry costs besides its key and value: the Map slot, the record object, numbers. */
const ENTRY_OVERHEAD_BYTES = 96;

interface Slot<V> {
	value: V;
	expiresAt: number;
	bytes: number;
}

export class MemoryTable<V> {
	/** Insertion order is use order: the first entry is the least recently used. */
	private readonly slots = new Map<string, Slot<V>>();
	private usedBytes = 0;

	/** `sizeOf` estimates a value's bytes (its strings' lengths, mostly). */
	constructor(
		readonly budgetBytes: number,
		private readonly sizeOf: (value: V) => number,
	) {}

	/** The live entry under `key` (marked as used now), or undefined. */
	get(key: string, now: number): V | undefined {
		const slot = this.slots.get(key);
		if (!slot) return undefined;
		this.slots.delete(key);
		if (slot.expiresAt <= now) {
			this.usedBytes -= slot.bytes;
			return undefined;
		}
		this.slots.set(key, slot);
		return slot.value;
	}

	/** Sets `key` until `expiresAt`; the least recently used entries leave when over budget. */
	set(key: string, value: V, expiresAt: number): void {
		this.delete(key);
		const bytes = ENTRY_OVERHEAD_BYTES + 2 * key.length + this.sizeOf(value);
		this.slots.set(key, { value, expiresAt, bytes });
		this.usedBytes += bytes;
		this.evict(key);
	}

	delete(key: string): void {
		const slot = this.slots.get(key);
		if (!slot) return;
		this.slots.delete(key);
		this.usedBytes -= slot.bytes;
	}

	/** Entries and bytes held now (expired ones still count until they are met). */
	size(): { entries: number; bytes: number } {
		return { entries: this.slots.size, bytes: this.usedBytes };
	}

	clear(): void {
		this.slots.clear();
		this.usedBytes = 0;
	}

	/** Drops the least recently used entries until within budget, never `keep` (the one just set). */
	private evict(keep: string): void {
		for (const [key, slot] of this.slots) {
			if (this.usedBytes <= this.budgetBytes) return;
			if (key === keep) continue;
			this.slots.delete(key);
			this.usedBytes -= slot.bytes;
		}
	}
}
