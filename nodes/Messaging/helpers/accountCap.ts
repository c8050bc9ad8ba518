import { createHash, randomBytes } from 'crypto';

import { MemoryTable } from '../../shared/store';
import { sharedState, type QueueRedisState, type RedisScript } from '../../shared/store';

// One sliding window per account, shared by every workflow and execution that sends from it;
// only nodes with a cap record their sends, so others make no extra round trip.

export interface AccountCap {
	messages: number;
	periodMs: number;
}

const LONGEST_CAP_PERIOD_MS = 3_600_000;

/**
 * By client id alone: one account reached under two Base URL spellings has one cap, and two
 * gateways sharing a client id only make the cap stricter.
 */
export function accountKey(clientId: string): string {
	return createHash('sha256')
		.update(JSON.stringify(['account', clientId]))
		.digest('hex')
		.slice(0, 32);
}

export type CapSlot = { waitMs: 0; entry: string } | { waitMs: number; entry?: undefined };

export async function takeCapSlot(account: string, cap: AccountCap, now: number): Promise<CapSlot> {
	const entry = `${now}:${processTag}:${++sendCounter}`;
	const state = sharedState();
	const waitMs =
		state.kind === 'redis'
			? await takeInRedis(state, account, cap, now, entry)
			: takeInMemory(account, cap, now, entry);
	return waitMs === 0 ? { waitMs: 0, entry } : { waitMs };
}

// From the request's end: counted from its start, a slow request would leave the window before the
// message arrived and let the next period's first message in beside it.
export async function endCapSlot(account: string, entry: string, now: number): Promise<void> {
	const state = sharedState();
	if (state.kind === 'redis')
		await state.run(END, [state.key(`account:${account}`, 'sends')], [now, entry]);
	else endInMemory(account, entry, now);
}

interface Sent {
	at: number;
	entry: string;
}

const MEMORY_BUDGET_BYTES = 8 * 1024 * 1024;
const sendTimes = new MemoryTable<Sent[]>(MEMORY_BUDGET_BYTES, (sends) => 64 * sends.length);

function takeInMemory(account: string, cap: AccountCap, now: number, entry: string): number {
	const kept = (sendTimes.get(account, now) ?? []).filter(
		(s) => s.at > now - LONGEST_CAP_PERIOD_MS,
	);
	const inWindow = kept.filter((s) => s.at > now - cap.periodMs);
	if (inWindow.length < cap.messages) {
		kept.push({ at: now, entry });
		kept.sort((a, b) => a.at - b.at);
		sendTimes.set(account, kept, now + LONGEST_CAP_PERIOD_MS);
		return 0;
	}
	sendTimes.set(account, kept, now + LONGEST_CAP_PERIOD_MS);
	// The send whose leaving brings the window under the cap.
	return Math.max(1, inWindow[inWindow.length - cap.messages].at + cap.periodMs - now);
}

function endInMemory(account: string, entry: string, now: number): void {
	const kept = sendTimes.get(account, now);
	const sent = kept?.find((s) => s.entry === entry);
	if (!kept || !sent) return;
	sent.at = Math.max(sent.at, now);
	kept.sort((a, b) => a.at - b.at);
}

// Redis: one sorted set per account, send times as scores (members unique per send).

const TAKE: RedisScript = {
	name: 'messagingTakeCapSlot',
	keys: 1,
	lua: `
local now, period, cap, keep = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - keep)
local from = '(' .. (now - period)
local count = redis.call('ZCOUNT', KEYS[1], from, '+inf')
if count < cap then
  redis.call('ZADD', KEYS[1], now, ARGV[5])
  redis.call('PEXPIRE', KEYS[1], keep)
  return 0
end
local leaving = redis.call('ZRANGEBYSCORE', KEYS[1], from, '+inf', 'WITHSCORES', 'LIMIT', count - cap, 1)
return math.max(1, tonumber(leaving[2]) + period - now)`,
};

/** Only if the entry is still there, and never back: any Redis version, unlike ZADD XX GT. */
const END: RedisScript = {
	name: 'messagingEndCapSlot',
	keys: 1,
	lua: `
local at = redis.call('ZSCORE', KEYS[1], ARGV[2])
if at and tonumber(at) < tonumber(ARGV[1]) then redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2]) end
return 1`,
};

let sendCounter = 0;
const processTag = randomBytes(6).toString('hex');

async function takeInRedis(
	state: QueueRedisState,
	account: string,
	cap: AccountCap,
	now: number,
	entry: string,
): Promise<number> {
	const answer = await state.run(
		TAKE,
		[state.key(`account:${account}`, 'sends')],
		[now, cap.periodMs, cap.messages, LONGEST_CAP_PERIOD_MS, entry],
	);
	return Number(answer);
}
