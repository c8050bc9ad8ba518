// One table per purpose, each with its own byte budget, so that one purpose cannot evict another's
// entries (a burst of test-event deliveries never pushes out an active trigger's memory).

const ENTRY_OVERHEAD_BYTES = 96;

interface Slot<V> {
	value: V;
	expiresAt: number;
	bytes: number;
}

/** Every table of this process. */
const tables = new Set<MemoryTable<unknown>>();

export class MemoryTable<V> {
	/** What a restart of n8n does to this package's memory (the test harness restarts with it). */
	static forgetAll(): void {
		for (const table of tables) table.clear();
	}

	/** Insertion order is use order: the first entry is the least recently used. */
	private readonly slots = new Map<string, Slot<V>>();
	private usedBytes = 0;

	constructor(
		readonly budgetBytes: number,
		private readonly sizeOf: (value: V) => number,
	) {
		tables.add(this as MemoryTable<unknown>);
	}

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

	/** Expired entries still count until they are met. */
	size(): { entries: number; bytes: number } {
		return { entries: this.slots.size, bytes: this.usedBytes };
	}

	clear(): void {
		this.slots.clear();
		this.usedBytes = 0;
	}

	private evict(keep: string): void {
		for (const [key, slot] of this.slots) {
			if (this.usedBytes <= this.budgetBytes) return;
			if (key === keep) continue;
			this.slots.delete(key);
			this.usedBytes -= slot.bytes;
		}
	}
}
