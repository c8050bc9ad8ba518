import { createHash, randomBytes } from 'crypto';
import type { JsonObject } from 'n8n-workflow';

import { clock } from '../../shared/clock';
import { NotAttemptedError, causeInWords, hint, itemLabel } from '../../shared/errors';
import type { RunContext } from '../../shared/execution/operationRun';
import {
	MemoryTable,
	sharedState,
	type QueueRedisState,
	type RedisScript,
} from '../../shared/store';
import { describeWindow, windowState, type SendWindow, type WindowProblem } from './sendWindow';

// Delay Between Messages, Send Only Between and Account Cap, in that order, before a message's
// request. Max Wait bounds the waits for the window and the cap together, so a run over the cap
// never waits item by item longer than the user allowed.

export interface PacingSettings {
	messageDelay: { minMs: number; maxMs: number };
	accountCap: AccountCap | undefined;
	sendWindow: SendWindow | WindowProblem | undefined;
	maxWaitMs: number;
}

export class SendPacer {
	readonly waited = new Map<number, number>();
	private readonly account: string;
	private nextStartAt = 0;
	private budgetMs: number;
	private readonly held = { cap: 0, window: 0 };
	private readonly paused = { count: 0, ms: 0 };
	private readonly refused = { cap: 0, window: 0 };
	private nextOpening: number | undefined;

	constructor(private readonly run: RunContext<PacingSettings>) {
		this.account = accountKey(run.credentials.clientId);
		this.budgetMs = run.runOptions.maxWaitMs;
	}

	/** Waits for the item's turn, or refuses it; its Account Cap entry, ended by `requestEnded`. */
	async turn(itemIndex: number): Promise<string | undefined> {
		const began = clock.now();
		const { minMs, maxMs } = this.run.runOptions.messageDelay;
		const gapMs = Math.round(minMs + Math.random() * (maxMs - minMs));
		const turnAt = Math.max(began, this.nextStartAt);
		const reserved = turnAt + gapMs;
		this.nextStartAt = reserved;
		this.waited.set(itemIndex, 0);
		let held: { entry?: string } | Error;
		try {
			if (turnAt > began) await this.wait(itemIndex, turnAt - began);
			held = await this.hold(itemIndex);
		} catch (error) {
			held = notSent(this.run, itemIndex, `the run was stopped while waiting (${reasonOf(error)})`);
		}
		if (held instanceof Error) {
			// No message went out: the next item does not wait for this one's pause.
			if (this.nextStartAt === reserved) this.nextStartAt = turnAt;
			throw held;
		}
		this.nextStartAt = Math.max(this.nextStartAt, clock.now() + gapMs);
		return held.entry;
	}

	private async hold(itemIndex: number): Promise<{ entry?: string } | Error> {
		const { accountCap } = this.run.runOptions;
		// Per item: recipients in several time zones each get their own hours.
		const { sendWindow } = this.run.options(itemIndex);
		const window = sendWindow && 'days' in sendWindow ? sendWindow : undefined;
		for (;;) {
			if (window) {
				const now = clock.now();
				const state = windowState(window, now);
				if (!state.open) {
					const waitMs = state.opensAt - now;
					if (waitMs > this.budgetMs) return this.outsideWindow(itemIndex, window, state.opensAt);
					await this.wait(itemIndex, waitMs, 'window');
					continue;
				}
			}
			if (!accountCap) return {};
			let slot;
			try {
				slot = await takeCapSlot(this.account, accountCap, clock.now());
			} catch (error) {
				return notSent(
					this.run,
					itemIndex,
					`Account Cap could not count the account's messages: ${causeInWords(reasonOf(error))}`,
					'Check that n8n reaches its Redis (queue mode), or remove Account Cap to send without it.',
				);
			}
			if (slot.waitMs === 0) return { entry: slot.entry };
			if (slot.waitMs > this.budgetMs) return this.overCap(itemIndex, accountCap, slot.waitMs);
			await this.wait(itemIndex, slot.waitMs, 'cap');
		}
	}

	private async wait(itemIndex: number, ms: number, why?: 'cap' | 'window'): Promise<void> {
		if (why) {
			this.budgetMs -= ms;
			this.held[why] += ms;
		} else {
			this.paused.count++;
			this.paused.ms += ms;
		}
		this.waited.set(itemIndex, (this.waited.get(itemIndex) ?? 0) + ms);
		await clock.sleep(ms, this.run.signal);
	}

	private outsideWindow(itemIndex: number, window: SendWindow, opensAt: number): Error {
		this.refused.window++;
		this.nextOpening = opensAt;
		const at = new Date(opensAt).toISOString();
		return notSent(
			this.run,
			itemIndex,
			`outside Send Only Between (${describeWindow(window)}); it opens next at ${at}`,
			`Run it again once the window is open, or put Message → Wait for Send Window before this node: the execution then waits for the opening without holding n8n.`,
			{ nextWindowOpensAt: at },
		);
	}

	private overCap(itemIndex: number, cap: AccountCap, waitMs: number): Error {
		this.refused.cap++;
		const per = cap.periodMs === 60_000 ? 'minute' : 'hour';
		return notSent(
			this.run,
			itemIndex,
			`the account sent ${cap.messages} messages in the last ${per} (Account Cap), and its next turn is in ${seconds(waitMs)}, beyond what Max Wait leaves`,
			'Run it again later, raise Max Wait, or send fewer messages per run.',
			{ capFreesAt: new Date(clock.now() + waitMs).toISOString() },
		);
	}

	async requestEnded(entry: string | undefined): Promise<void> {
		// Counted from its start already: failing here only makes the cap less strict.
		if (entry !== undefined)
			await endCapSlot(this.account, entry, clock.now()).catch(() => undefined);
	}

	/** The run's hint: how long it paused and waited, and what it left unsent. */
	finish(): void {
		const { minMs, maxMs } = this.run.runOptions.messageDelay;
		const { paused, held, refused } = this;
		const unsent = [
			refused.window &&
				`${refused.window} outside Send Only Between${this.nextOpening ? `, next opening ${new Date(this.nextOpening).toISOString()}` : ''}`,
			refused.cap && `${refused.cap} over the Account Cap beyond Max Wait`,
		].filter(Boolean);
		const lines = [
			paused.count > 0 &&
				`paused ${seconds(paused.ms)} in all before ${messages(paused.count)} (Delay Between Messages: ${rangeInSeconds(minMs, maxMs)} at random before each message but the first, so that the WhatsApp account does not send in bursts)`,
			held.window > 0 && `waited ${seconds(held.window)} for Send Only Between to open`,
			held.cap > 0 && `waited ${seconds(held.cap)} for the Account Cap`,
			unsent.length > 0 &&
				`left ${messages(refused.cap + refused.window)} unsent (${unsent.join('; ')}): each says why, and none was attempted`,
		].filter(Boolean);
		if (lines.length > 0)
			hint(this.run.ctx, `This run ${lines.join(', and ')}.`, unsent.length ? 'warning' : 'info');
	}
}

const messages = (n: number) => `${n} message${n === 1 ? '' : 's'}`;

function seconds(ms: number): string {
	return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.ceil(ms / 1000)} s`;
}

function rangeInSeconds(minMs: number, maxMs: number): string {
	return minMs === maxMs ? `${minMs / 1000} s` : `${minMs / 1000}–${maxMs / 1000} s`;
}

function reasonOf(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

/** Kept back without a request: its claim is given back, and a re-run sends it. */
function notSent(
	run: RunContext<unknown>,
	itemIndex: number,
	why: string,
	fix = 'Run it again later.',
	details?: JsonObject,
): NotAttemptedError {
	return new NotAttemptedError(
		run.node,
		`Not sent: ${why} ${itemLabel(itemIndex)}`,
		itemIndex,
		fix,
		details,
	);
}

// Account Cap

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
function accountKey(clientId: string): string {
	return createHash('sha256')
		.update(JSON.stringify(['account', clientId]))
		.digest('hex')
		.slice(0, 32);
}

export type CapSlot = { waitMs: 0; entry: string } | { waitMs: number; entry?: undefined };

async function takeCapSlot(account: string, cap: AccountCap, now: number): Promise<CapSlot> {
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
async function endCapSlot(account: string, entry: string, now: number): Promise<void> {
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
	const kept = (sendTimes.get(account) ?? []).filter((s) => s.at > now - LONGEST_CAP_PERIOD_MS);
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
	const kept = sendTimes.get(account);
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
