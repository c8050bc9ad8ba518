import { randomBytes } from 'crypto';
import type { IExecuteFunctions } from 'n8n-workflow';

import { clock } from '../../shared/clock';
import { MemoryTable } from '../../shared/store';
import {
	sharedState,
	SharedStateUnavailable,
	type QueueRedisState,
	type RedisScript,
} from '../../shared/store';

// One message (one key of one node) is sent once per window, whatever runs it. The claim is taken
// atomically just before the request and settled when the request ends: kept as sent or as
// may-have-been-delivered, or given back when the message certainly did not leave. It is never
// taken over: its run may have sent it. Regular mode claims in this process's memory and records
// the run's messages in n8n's processed-items store, so that a restart forgets nothing sent: before
// the first send while memory may not know every send of the window (two windows after the process
// started), alongside the sends once it does. Queue mode claims in n8n's queue Redis.

export interface Holder {
	/** `sending`: not settled (still sending, or its run stopped); `recorded`: only n8n's store knows. */
	state: 'sending' | 'sent' | 'maybe' | 'recorded';
	executionId: string | null;
	at: number | null;
	notBefore: number;
}

export type Protection = 'database' | 'redis' | 'process';

export type Settlement = 'sent' | 'maybe' | 'release';

const STORE_MAX_ENTRIES = 20_000;
const MEMORY_BUDGET_BYTES = 16 * 1024 * 1024;
/** Keys per Redis read: Lua's unpack has a limit. */
const READ_BATCH = 1_000;

/** `<state>|<owner>|<executionId>|<at>`, state: d (sending), s (sent), m (may have been delivered). */
type ClaimRecord = string;

export class SendClaims {
	readonly protection: Protection;
	private readonly scope: string;
	private readonly owner: string;
	private readonly executionId: string;
	private readonly redis: QueueRedisState | undefined;
	private readonly store: ProcessedItems | undefined;
	/** The store entries this run added, per key: removed again at its end unless kept. */
	private readonly recorded = new Map<string, string[]>();
	/** Sent or may have been delivered: stays recorded. */
	private readonly kept = new Set<string>();
	/** The store's record made alongside the sends, and why it failed if it did. */
	private recording: Promise<void> | undefined;
	storeFailure: string | undefined;

	constructor(
		ctx: IExecuteFunctions,
		private readonly windowMs: number,
	) {
		const workflowId = ctx.getWorkflow().id;
		const node = ctx.getNode();
		this.scope = `${workflowId ?? 'unsaved'}:${node.id ?? node.name}`;
		this.executionId = String(ctx.getExecutionId() ?? '').replace(/\|/g, '') || 'unknown';
		this.owner = `${this.executionId}.${randomBytes(6).toString('hex')}`;
		const state = sharedState();
		this.redis = state.kind === 'redis' ? state : undefined;
		this.store = workflowId && !this.redis ? ProcessedItems.of(ctx) : undefined;
		this.protection = this.redis ? 'redis' : this.store ? 'database' : 'process';
	}

	/**
	 * Before any wait: who holds these keys already. In regular mode the others are recorded in
	 * n8n's store in one call; what it knew already was sent by a run this process no longer knows.
	 */
	async held(keys: string[]): Promise<Map<string, Holder>> {
		const held = new Map<string, Holder>();
		if (this.redis) {
			for (let start = 0; start < keys.length; start += READ_BATCH) {
				const batch = keys.slice(start, start + READ_BATCH);
				const records = (await this.redis.run(
					READ,
					batch.map((key) => this.redisKey(key)),
					[],
				)) as Array<ClaimRecord | false>;
				batch.forEach((key, i) => records[i] && held.set(key, holderOf(records[i] as ClaimRecord)));
			}
			return held;
		}
		const now = clock.now();
		for (const key of keys) {
			const record = heldInMemory(this.memoryKey(key));
			if (record) held.set(key, holderOf(record));
		}
		const unknown = keys.filter((key) => !held.has(key));
		if (!this.store) return held;
		if (!memoryKnowsAll(now, this.windowMs)) await this.record(unknown, now, held);
		// Memory answers; the sends need not wait for the store, the end of the run does.
		else
			this.recording = this.record(unknown, now, new Map()).catch((error: unknown) => {
				this.storeFailure = (error as Error).message;
			});
		return held;
	}

	// The store has no time: a key is recorded with this window's bucket and the next's, so a repeat
	// within one window is always caught, one after two windows never.
	private async record(keys: string[], now: number, held: Map<string, Holder>): Promise<void> {
		if (keys.length === 0) return;
		const store = this.store as ProcessedItems;
		const bucket = Math.floor(now / this.windowMs);
		const entries = keys.flatMap((key) => [`${key}:${bucket}`, `${key}:${bucket + 1}`]);
		const processed = await withLock(this.scope, async () => await store.record(entries));
		const undo: string[] = [];
		keys.forEach((key, i) => {
			const [current, next] = entries.slice(2 * i, 2 * i + 2);
			const added = [current, next].filter((entry) => !processed.has(entry));
			if (!processed.has(current)) {
				this.recorded.set(key, added);
				recordedBy.set(this.memoryKey(key), this.executionId);
			} else {
				undo.push(...added);
				// Another run of this process may have taken or settled it while the store answered.
				const claimed = heldInMemory(this.memoryKey(key));
				held.set(
					key,
					claimed
						? holderOf(claimed)
						: {
								state: 'recorded',
								// A run of this process that recorded it and has not taken it yet says who.
								executionId: recordedBy.get(this.memoryKey(key)) ?? null,
								at: null,
								notBefore: (bucket - 1) * this.windowMs,
							},
				);
			}
		});
		if (undo.length) await withLock(this.scope, async () => await store.remove(undo));
	}

	/** Just before the request: undefined when this run now holds the key. */
	async take(key: string): Promise<Holder | undefined> {
		const now = clock.now();
		const expiresAt = this.expiresAt(now);
		const record: ClaimRecord = `d|${this.owner}|${this.executionId}|${now}`;
		const held = this.redis
			? ((await this.redis.run(
					TAKE,
					[this.redisKey(key)],
					[record, expiresAt - now],
				)) as ClaimRecord)
			: takeInMemory(this.memoryKey(key), record, expiresAt);
		return held ? holderOf(held) : undefined;
	}

	async settle(key: string, settlement: Settlement): Promise<void> {
		if (settlement !== 'release') {
			this.kept.add(key);
			this.forget(key);
		}
		if (this.redis) await this.redis.run(SETTLE, [this.redisKey(key)], [this.owner, settlement[0]]);
		else settleInMemory(this.memoryKey(key), this.owner, settlement, (at) => this.expiresAt(at));
	}

	/**
	 * At the end of the run: what it recorded in the store and did not send is removed again. The
	 * number of messages the store could not give back, so that the run can warn of each.
	 */
	async finish(): Promise<number> {
		const store = this.store;
		await this.recording;
		const unsent = [...this.recorded].filter(([key]) => !this.kept.has(key));
		for (const key of this.recorded.keys()) this.forget(key);
		if (!store || unsent.length === 0) return 0;
		const entries = unsent.flatMap(([, added]) => added);
		try {
			await withLock(this.scope, async () => await store.remove(entries));
			return 0;
		} catch {
			return unsent.length;
		}
	}

	private forget(key: string): void {
		const id = this.memoryKey(key);
		if (recordedBy.get(id) === this.executionId) recordedBy.delete(id);
	}

	/** The end of the next window bucket, as the store's entries. */
	private expiresAt(now: number): number {
		return (Math.floor(now / this.windowMs) + 2) * this.windowMs;
	}

	private memoryKey(key: string): string {
		return `${this.scope}\n${key}`;
	}

	private redisKey(key: string): string {
		return (this.redis as QueueRedisState).key(this.scope, 'send', key);
	}
}

function holderOf(record: ClaimRecord): Holder {
	const [state, , executionId, at] = record.split('|');
	return {
		state: state === 's' ? 'sent' : state === 'm' ? 'maybe' : 'sending',
		executionId: executionId || null,
		at: Number(at),
		notBefore: Number(at),
	};
}

// n8n's processed-items store

class ProcessedItems {
	private constructor(private readonly ctx: IExecuteFunctions) {}

	static of(ctx: IExecuteFunctions): ProcessedItems | undefined {
		const helpers = ctx.helpers as Partial<IExecuteFunctions['helpers']>;
		return typeof helpers.checkProcessedAndRecord === 'function' &&
			typeof helpers.removeProcessed === 'function'
			? new ProcessedItems(ctx)
			: undefined;
	}

	// Tried twice: two processes creating the node's row at once fail one insert.
	async record(entries: string[]): Promise<Set<string>> {
		const call = async () =>
			await this.ctx.helpers.checkProcessedAndRecord(entries, 'node', {
				mode: 'entries',
				maxEntries: STORE_MAX_ENTRIES,
			});
		const answer = await call()
			.catch(call)
			.catch((error: unknown) => {
				throw new SharedStateUnavailable(
					`n8n's processed-items store (its database) failed: ${error instanceof Error ? error.message : String(error)}`,
				);
			});
		return new Set(answer.processed.map(String));
	}

	async remove(entries: string[]): Promise<void> {
		await this.ctx.helpers.removeProcessed(entries, 'node', { mode: 'entries' });
	}
}

/** Which execution of this process recorded a key in the store and has not settled it yet. */
const recordedBy = new Map<string, string>();

/** The store is a read-modify-write of one row per node: one writer at a time in this process. */
const locks = new Map<string, Promise<unknown>>();

async function withLock<T>(scope: string, work: () => Promise<T>): Promise<T> {
	const before = locks.get(scope) ?? Promise.resolve();
	const mine = before.then(work, work);
	const tail = mine.catch(() => undefined);
	locks.set(scope, tail);
	try {
		return await mine;
	} finally {
		if (locks.get(scope) === tail) locks.delete(scope);
	}
}

// Regular mode: every run is in this process, so its memory is the claim (no await inside).
// A claim being sent is never evicted; settled ones are bounded in bytes.

const sending = new MemoryTable<ClaimRecord>(
	Number.POSITIVE_INFINITY,
	(record) => 2 * record.length,
);
const settled = new MemoryTable<ClaimRecord>(MEMORY_BUDGET_BYTES, (record) => 2 * record.length);

/** No send of the window can be missing from memory: the store need not be asked. */
function memoryKnowsAll(now: number, windowMs: number): boolean {
	const since = Math.max(sending.completeSince, settled.completeSince);
	return now >= (Math.floor(since / windowMs) + 2) * windowMs;
}

function heldInMemory(id: string): ClaimRecord | undefined {
	return sending.get(id) ?? settled.get(id);
}

function takeInMemory(id: string, record: ClaimRecord, expiresAt: number): ClaimRecord {
	const held = heldInMemory(id);
	if (held) return held;
	sending.set(id, record, expiresAt);
	return '';
}

function settleInMemory(
	id: string,
	owner: string,
	settlement: Settlement,
	expiresAt: (takenAt: number) => number,
): void {
	const record = sending.get(id);
	const [, holder, , at] = record?.split('|') ?? [];
	if (!record || holder !== owner) return;
	sending.delete(id);
	if (settlement !== 'release')
		settled.set(id, `${settlement[0]}${record.slice(1)}`, expiresAt(Number(at)));
}

// Queue mode: one string per message in n8n's queue Redis, expiring with the window.

const READ: RedisScript = {
	name: 'messagingReadSends',
	lua: `return redis.call('MGET', unpack(KEYS))`,
};

const TAKE: RedisScript = {
	name: 'messagingTakeSend',
	keys: 1,
	lua: `
local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ''`,
};

const SETTLE: RedisScript = {
	name: 'messagingSettleSend',
	keys: 1,
	lua: `
local held = redis.call('GET', KEYS[1])
if not held or string.match(held, '^%a|([^|]*)|') ~= ARGV[1] then return 0 end
if ARGV[2] == 'r' then return redis.call('DEL', KEYS[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('SET', KEYS[1], ARGV[2] .. string.sub(held, 2), 'PX', ttl) end
return 1`,
};
