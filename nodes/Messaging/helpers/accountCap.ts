import { createHash, randomBytes } from 'crypto';

import { MemoryTable } from '../../shared/state/memoryTable';
import {
	sharedState,
	type QueueRedisState,
	type RedisScript,
} from '../../shared/state/sharedState';

/**
 * Options → Account Cap ("at most N messages per minute / per hour"): one sliding window of send
 * times per account (base URL and client id), shared by every workflow and execution that sends
 * from it: in this process's memory in regular mode (every execution runs here), in n8n's queue
 * Redis in queue mode (main, workers, webhook processes), as the idempotency claims are.
 *
 * `take` is check-and-add in one step (memory: no await inside; Redis: one Lua script): a send
 * time is added only when fewer than N are in the window; otherwise nothing is added and the
 * answer is how long until one leaves it. Only nodes with a cap record their sends (a node
 * without one makes no extra round trip per message); two nodes with different caps on one
 * account each hold their own cap against all of them (the last hour is kept).
 */

export interface AccountCap {
	messages: number;
	periodMs: number;
}

/** The longest period a cap can have; send times older than this are dropped. */
const LONGEST_CAP_PERIOD_MS = 3_600_000;

/** The account's key: a hash of base URL and client id (no secret, and short). */
export function accountKey(baseUrl: string, clientId: string): string {
	return createHash('sha256')
		.update(JSON.stringify(['account', baseUrl, clientId]))
		.digest('hex')
		.slice(0, 32);
}

/**
 * Takes one send of `account` at `now` when under `cap`: 0. Else nothing is taken, and the
 * answer is the wait (ms, at least 1) until a send leaves the window.
 */
export async function takeCapSlot(account: string, cap: AccountCap, now: number): Promise<number> {
	const state = sharedState();
	if (state.kind === 'redis') return await takeInRedis(state, account, cap, now);
	return takeInMemory(account, cap, now);
}

// Memory: one sorted list of send times per account (at most 50,000 per hour at the top cap).

const MEMORY_BUDGET_BYTES = 4 * 1024 * 1024;
const sendTimes = new MemoryTable<number[]>(MEMORY_BUDGET_BYTES, (times) => 8 * times.length);

function takeInMemory(account: string, cap: AccountCap, now: number): number {
	const kept = (sendTimes.get(account, now) ?? []).filter((t) => t > now - LONGEST_CAP_PERIOD_MS);
	const inWindow = kept.filter((t) => t > now - cap.periodMs);
	if (inWindow.length < cap.messages) {
		kept.push(now);
		kept.sort((a, b) => a - b);
		sendTimes.set(account, kept, now + LONGEST_CAP_PERIOD_MS);
		return 0;
	}
	sendTimes.set(account, kept, now + LONGEST_CAP_PERIOD_MS);
	// The send whose leaving brings the window under the cap.
	return Math.max(1, inWindow[inWindow.length - cap.messages] + cap.periodMs - now);
}

/** Forgets every account's send times, as a restarted process would (tests). */
export function forgetCapsInProcess(): void {
	sendTimes.clear();
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

let sendCounter = 0;
const processTag = randomBytes(6).toString('hex');

async function takeInRedis(
	state: QueueRedisState,
	account: string,
	cap: AccountCap,
	now: number,
): Promise<number> {
	const member = `${now}:${processTag}:${++sendCounter}`;
	const answer = await state.run(
		TAKE,
		[state.key(`account:${account}`, 'sends')],
		[now, cap.periodMs, cap.messages, LONGEST_CAP_PERIOD_MS, member],
	);
	return Number(answer);
}
