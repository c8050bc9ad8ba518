import { randomBytes } from 'crypto';
import type { IExecuteFunctions } from 'n8n-workflow';

import { clock } from '../../shared/clock';
import { MemoryTable } from '../../shared/state/memoryTable';
import {
	sharedState,
	SharedStateUnavailable,
	type QueueRedisState,
	type RedisScript,
} from '../../shared/state/sharedState';

// One message (one idempotency key of one node) is sent once per window, whatever runs it. Claims
// are atomic (memory, or n8n's queue Redis); n8n's processed-items store is durable but not, so it
// is written only behind a claim. A dead run's undispatched claims are taken over once its lease
// lapses; its dispatched ones stay "may have been delivered".

export interface Holder {
	/** `stopped`: its run stopped while sending it; `recorded`: only n8n's store knows it. */
	state: 'sending' | 'sent' | 'maybe' | 'stopped' | 'recorded';
	executionId: string | null;
	at: number | null;
	notBefore: number;
}

export type ClaimResult = { won: true } | { won: false; holder: Holder };

export type Protection = 'database' | 'redis' | 'database and redis' | 'process';

const STORE_MAX_ENTRIES = 20_000;
const LEASE_MS = 30_000;
const MEMORY_BUDGET_BYTES = 16 * 1024 * 1024;

type Outcome = 'sent' | 'maybe' | 'release';

export class SendClaims {
	private readonly scope: string;
	private readonly owner: string;
	private readonly backend: ClaimBackend;
	private readonly store: ProcessedItems | undefined;
	private readonly added = new Map<string, string[]>();

	constructor(
		ctx: IExecuteFunctions,
		private readonly windowMs: number,
	) {
		const workflowId = ctx.getWorkflow().id;
		const node = ctx.getNode();
		this.scope = `${workflowId ?? 'unsaved'}:${node.id ?? node.name}`;
		const executionId = String(ctx.getExecutionId() ?? '').replace(/\|/g, '') || 'unknown';
		this.owner = `${executionId}.${randomBytes(6).toString('hex')}`;
		const state = sharedState();
		this.backend =
			state.kind === 'redis'
				? new RedisClaims(state, this.scope, this.owner, executionId)
				: new MemoryClaims(this.scope, this.owner, executionId);
		this.store = workflowId ? ProcessedItems.of(ctx) : undefined;
	}

	get protection(): Protection {
		if (this.backend.kind === 'redis') return this.store ? 'database and redis' : 'redis';
		return this.store ? 'database' : 'process';
	}

	// `keys` are distinct. The store has no time, so a key is recorded with this window's bucket and
	// the next's: a repeat within one window is always caught, one after two windows never.
	async claim(keys: string[]): Promise<ClaimResult[]> {
		const now = clock.now();
		const bucket = Math.floor(now / this.windowMs);
		const expiresAt = (bucket + 2) * this.windowMs;
		return await withLock(this.scope, async () => {
			const claimed = await this.backend.claim(keys, now, expiresAt);
			const results: ClaimResult[] = claimed.map((c) =>
				c.won ? { won: true } : { won: false, holder: c.holder },
			);
			if (!this.store) return results;
			const winners = keys.filter((_, i) => claimed[i].won);
			const entries = winners.flatMap((key) => [
				storeEntry(key, bucket),
				storeEntry(key, bucket + 1),
			]);
			// If the store fails, the claims are released; the gate makes each item "not attempted".
			let recorded = false;
			let processed: Set<string>;
			try {
				processed = await this.store.record(entries);
				recorded = true;
			} finally {
				if (!recorded)
					await this.backend.settle(
						winners.map((key) => [key, 'release']),
						false,
					);
			}
			const recordedEarlier: string[] = [];
			const undo: string[] = [];
			keys.forEach((key, i) => {
				const c = claimed[i];
				if (!c.won) return;
				const current = storeEntry(key, bucket);
				const next = storeEntry(key, bucket + 1);
				const addedNext = !processed.has(next);
				// A claim taken over from a run that died: the store holds what that run recorded.
				if (processed.has(current) && !c.tookOver) {
					recordedEarlier.push(key);
					if (addedNext) undo.push(next);
					results[i] = {
						won: false,
						holder: {
							state: 'recorded',
							executionId: null,
							at: null,
							notBefore: (bucket - 1) * this.windowMs,
						},
					};
					return;
				}
				this.added.set(key, [
					...(processed.has(current) ? [] : [current]),
					...(addedNext ? [next] : []),
				]);
			});
			if (recordedEarlier.length) {
				await this.backend.settle(
					recordedEarlier.map((key) => [key, 'release']),
					false,
				);
				if (undo.length) await this.store.remove(undo);
			}
			return results;
		});
	}

	async dispatch(key: string): Promise<Holder | undefined> {
		const now = clock.now();
		const expiresAt = (Math.floor(now / this.windowMs) + 2) * this.windowMs;
		return await this.backend.dispatch(key, now, expiresAt);
	}

	async settle(outcomes: Array<[string, Outcome]>): Promise<void> {
		await withLock(this.scope, async () => {
			await this.backend.settle(outcomes, true);
			const entries = outcomes.flatMap(([key, outcome]) =>
				outcome === 'release' ? (this.added.get(key) ?? []) : [],
			);
			if (this.store && entries.length) await this.store.remove(entries);
		});
	}
}

function storeEntry(key: string, bucket: number): string {
	return `${key}:${bucket}`;
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
		if (entries.length === 0) return new Set();
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

// The claim backends

type BackendClaim = { won: true; tookOver: boolean } | { won: false; holder: Holder };

interface ClaimBackend {
	readonly kind: 'memory' | 'redis';
	claim(keys: string[], now: number, expiresAt: number): Promise<BackendClaim[]>;
	dispatch(key: string, now: number, expiresAt: number): Promise<Holder | undefined>;
	settle(outcomes: Array<[string, Outcome]>, done: boolean): Promise<void>;
}

/** A claim's state letter: claimed, dispatched, sent, maybe delivered. */
type StateLetter = 'c' | 'd' | 's' | 'm';

function holderOf(
	state: StateLetter,
	executionId: string,
	at: number,
	ownerAlive: boolean,
): Holder {
	return {
		state:
			state === 's'
				? 'sent'
				: state === 'm'
					? 'maybe'
					: state === 'd' && !ownerAlive
						? 'stopped'
						: 'sending',
		executionId: executionId || null,
		at,
		notBefore: at,
	};
}

interface MemoryClaim {
	state: StateLetter;
	owner: string;
	executionId: string;
	at: number;
}

/**
 * A claim being sent is never evicted: it alone stops another run from sending the message now.
 * Those of running executions are few; settled ones are bounded in bytes.
 */
class ProcessClaims {
	private readonly inFlight = new Map<string, MemoryClaim & { expiresAt: number }>();
	private readonly settled = new MemoryTable<MemoryClaim>(
		MEMORY_BUDGET_BYTES,
		(c) => 2 * (c.owner.length + c.executionId.length) + 24,
	);

	get(id: string, now: number): (MemoryClaim & { expiresAt?: number }) | undefined {
		const live = this.inFlight.get(id);
		if (live && live.expiresAt > now) return live;
		if (live) this.inFlight.delete(id);
		return this.settled.get(id, now);
	}

	set(id: string, claim: MemoryClaim, expiresAt: number): void {
		this.delete(id);
		if (claim.state === 'c' || claim.state === 'd') this.inFlight.set(id, { ...claim, expiresAt });
		else this.settled.set(id, claim, expiresAt);
	}

	delete(id: string): void {
		this.inFlight.delete(id);
		this.settled.delete(id);
	}

	clear(): void {
		this.inFlight.clear();
		this.settled.clear();
	}
}

const memoryClaims = new ProcessClaims();
const liveOwners = new Set<string>();

/** Every run is in this process, so its memory is the claim (atomic: no await inside). */
class MemoryClaims implements ClaimBackend {
	readonly kind = 'memory';

	constructor(
		private readonly scope: string,
		private readonly owner: string,
		private readonly executionId: string,
	) {}

	async claim(keys: string[], now: number, expiresAt: number): Promise<BackendClaim[]> {
		liveOwners.add(this.owner);
		return keys.map((key): BackendClaim => {
			const id = this.id(key);
			const held = memoryClaims.get(id, now);
			const alive = held ? liveOwners.has(held.owner) : false;
			if (held && held.owner !== this.owner && !(held.state === 'c' && !alive))
				return { won: false, holder: holderOf(held.state, held.executionId, held.at, alive) };
			memoryClaims.set(id, this.record('c', now), expiresAt);
			return { won: true, tookOver: held !== undefined };
		});
	}

	async dispatch(key: string, now: number, expiresAt: number): Promise<Holder | undefined> {
		const id = this.id(key);
		const held = memoryClaims.get(id, now);
		if (held && held.owner !== this.owner)
			return holderOf(held.state, held.executionId, held.at, liveOwners.has(held.owner));
		memoryClaims.set(id, { ...(held ?? this.record('c', now)), state: 'd' }, expiresAt);
		return undefined;
	}

	async settle(outcomes: Array<[string, Outcome]>, done: boolean): Promise<void> {
		const now = clock.now();
		for (const [key, outcome] of outcomes) {
			const id = this.id(key);
			const held = memoryClaims.get(id, now);
			if (held?.owner !== this.owner) continue;
			if (outcome === 'release') memoryClaims.delete(id);
			else
				memoryClaims.set(
					id,
					{ ...held, state: outcome === 'sent' ? 's' : 'm' },
					held.expiresAt ?? now + LEASE_MS,
				);
		}
		if (done) liveOwners.delete(this.owner);
	}

	private id(key: string): string {
		return `${this.scope}\n${key}`;
	}

	private record(state: StateLetter, now: number): MemoryClaim {
		return { state, owner: this.owner, executionId: this.executionId, at: now };
	}
}

export function forgetSendClaimsInProcess(): void {
	memoryClaims.clear();
	liveOwners.clear();
}

// Redis: one string per message, `<state>|<owner>|<executionId>|<at>`, expiring with the window;
// one hash per node of the runs holding claims (owner → end of lease, ms).

const CLAIM: RedisScript = {
	name: 'messagingClaimSends',
	lua: `
local leases, owner, execution, now = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3])
redis.call('HSET', leases, owner, ARGV[4])
redis.call('PEXPIRE', leases, ARGV[5])
local record = 'c|' .. owner .. '|' .. execution .. '|' .. ARGV[3]
local out = {}
for i = 2, #KEYS do
  local held = redis.call('GET', KEYS[i])
  local take, alive = not held, '1'
  if held then
    local state, holder = string.match(held, '^(%a)|([^|]*)|')
    if holder == owner then
      take = true
    else
      local lease = tonumber(redis.call('HGET', leases, holder) or '0')
      if lease <= now then alive = '0' end
      if state == 'c' and alive == '0' then
        take = true
        redis.call('HDEL', leases, holder)
      end
    end
  end
  if take then
    redis.call('SET', KEYS[i], record, 'PX', ARGV[i + 4])
    out[i - 1] = held and 'T' or 'W'
  else
    out[i - 1] = 'L' .. alive .. held
  end
end
return out`,
};

const DISPATCH: RedisScript = {
	name: 'messagingDispatchSend',
	keys: 2,
	lua: `
local held = redis.call('GET', KEYS[2])
if held then
  local holder = string.match(held, '^%a|([^|]*)|')
  if holder ~= ARGV[1] then
    local lease = tonumber(redis.call('HGET', KEYS[1], holder) or '0')
    return (lease > tonumber(ARGV[3]) and '1' or '0') .. held
  end
  local ttl = redis.call('PTTL', KEYS[2])
  if ttl < 1 then ttl = ARGV[4] end
  redis.call('SET', KEYS[2], 'd' .. string.sub(held, 2), 'PX', ttl)
else
  redis.call('SET', KEYS[2], 'd|' .. ARGV[1] .. '|' .. ARGV[2] .. '|' .. ARGV[3], 'PX', ARGV[4])
end
return ''`,
};

const SETTLE: RedisScript = {
	name: 'messagingSettleSends',
	lua: `
local owner = ARGV[1]
if ARGV[2] == '1' then redis.call('HDEL', KEYS[1], owner) end
for i = 2, #KEYS do
  local held = redis.call('GET', KEYS[i])
  if held and string.match(held, '^%a|([^|]*)|') == owner then
    local outcome = ARGV[i + 1]
    if outcome == 'r' then
      redis.call('DEL', KEYS[i])
    else
      local ttl = redis.call('PTTL', KEYS[i])
      if ttl > 0 then redis.call('SET', KEYS[i], outcome .. string.sub(held, 2), 'PX', ttl) end
    end
  end
end
return 1`,
};

const RENEW: RedisScript = {
	name: 'messagingRenewLease',
	keys: 1,
	lua: `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`,
};

class RedisClaims implements ClaimBackend {
	readonly kind = 'redis';
	private renewal: (() => void) | undefined;

	constructor(
		private readonly state: QueueRedisState,
		private readonly scope: string,
		private readonly owner: string,
		private readonly executionId: string,
	) {}

	async claim(keys: string[], now: number, expiresAt: number): Promise<BackendClaim[]> {
		const answer = (await this.state.run(
			CLAIM,
			[this.leases, ...keys.map((key) => this.key(key))],
			[
				this.owner,
				this.executionId,
				now,
				now + LEASE_MS,
				2 * LEASE_MS,
				...keys.map(() => Math.max(1, expiresAt - now)),
			],
		)) as string[];
		this.renewLease();
		return answer.map((reply): BackendClaim => {
			if (reply === 'W' || reply === 'T') return { won: true, tookOver: reply === 'T' };
			return { won: false, holder: parseHolder(reply.slice(2), reply[1] === '1') };
		});
	}

	async dispatch(key: string, now: number, expiresAt: number): Promise<Holder | undefined> {
		const reply = (await this.state.run(
			DISPATCH,
			[this.leases, this.key(key)],
			[this.owner, this.executionId, now, Math.max(1, expiresAt - now)],
		)) as string;
		return reply === '' ? undefined : parseHolder(reply.slice(1), reply[0] === '1');
	}

	async settle(outcomes: Array<[string, Outcome]>, done: boolean): Promise<void> {
		if (done) this.stopRenewal();
		await this.state.run(
			SETTLE,
			[this.leases, ...outcomes.map(([key]) => this.key(key))],
			[this.owner, done ? '1' : '0', ...outcomes.map(([, outcome]) => outcome[0])],
		);
	}

	private renewLease(): void {
		if (this.renewal) return;
		this.renewal = clock.every(LEASE_MS / 3, () => {
			const now = clock.now();
			this.state
				.run(RENEW, [this.leases], [this.owner, now + LEASE_MS, 2 * LEASE_MS])
				.catch(() => undefined);
		});
	}

	private stopRenewal(): void {
		this.renewal?.();
		this.renewal = undefined;
	}

	private get leases(): string {
		return this.state.key(this.scope, 'leases');
	}

	private key(key: string): string {
		return this.state.key(this.scope, 'send', key);
	}
}

function parseHolder(record: string, ownerAlive: boolean): Holder {
	const [state, , executionId, at] = record.split('|');
	return holderOf(state as StateLetter, executionId, Number(at), ownerAlive);
}
