import { createHash, randomBytes } from 'crypto';
import type { IDataObject, INodeExecutionData, JsonObject, NodeOperationError } from 'n8n-workflow';

import { clock } from '../../shared/clock';
import { NotAttemptedError, causeInWords, hint, itemLabel, messageOf } from '../../shared/errors';
import type { RunContext } from '../../shared/execution/operationRun';
import {
	MemoryTable,
	sharedState,
	type QueueRedisState,
	type RedisScript,
} from '../../shared/store';
import { endpoints, readUsageLimit, type UsageLimit } from '../../shared/transport';
import { Repeats, type RepeatSettings, type SendIdentity } from './idempotency';
import { describeWindow, windowState, type SendWindow } from './sendWindow';
import type { WindowProblem } from './sendWindowFields';

export type SendSettings = RepeatSettings & {
	messageDelay: { minMs: number; maxMs: number };
	accountCap: AccountCap | undefined;
	sendWindow: SendWindow | WindowProblem | undefined;
	maxWaitMs: number;
	stopAtUsageLimit: boolean;
};

/** Every message's way out: identified at the check, then sent top to bottom in `send()`. */
export class Sender {
	private readonly pacer: SendPacer;
	private repeats: Repeats | undefined;
	private allowance: Promise<Allowance> | undefined;

	constructor(private readonly run: RunContext<SendSettings>) {
		this.pacer = new SendPacer(run);
	}

	/** At the check of an item, before any request: its window is readable, its key known. */
	async identify(itemIndex: number, identity: SendIdentity): Promise<void> {
		const { sendWindow, skipRepeatsHours } = this.run.options(itemIndex);
		if (sendWindow && 'problem' in sendWindow) {
			const { field, problem, fix } = sendWindow;
			throw this.run.fail(itemIndex, `Send Only Between → ${field}`, problem, fix);
		}
		if (!(skipRepeatsHours > 0)) return;
		this.repeats ??= new Repeats(this.run, skipRepeatsHours);
		await this.repeats.identify(itemIndex, identity);
	}

	/** `describe` adds the operation's fields to what was sent. */
	async send(
		itemIndex: number,
		phone: string,
		request: () => Promise<unknown>,
		describe: (sent: IDataObject) => IDataObject = (sent) => sent,
	): Promise<INodeExecutionData> {
		const { repeats, pacer } = this;
		const known = await repeats?.check(itemIndex);
		if (known) return known;
		const capEntry = await pacer.turn(itemIndex);
		let result: unknown;
		let sentAt = '';
		try {
			const repeat = await repeats?.take(itemIndex);
			if (repeat) return repeat;
			let failure: { error: unknown } | undefined;
			try {
				await this.takeSendSlot(itemIndex);
				sentAt = new Date(clock.now()).toISOString();
				result = await request();
			} catch (error) {
				failure = { error };
			}
			await repeats?.settle(itemIndex, failure);
			if (failure) throw failure.error;
		} finally {
			await pacer.requestEnded(capEntry);
		}
		const { response, ...fields } = sendResultJson(result, phone);
		const waitedMs = pacer.waited.get(itemIndex) ?? 0;
		return { json: describe({ ...fields, sentAt, waitedMs, response }) };
	}

	async refusals(): Promise<Map<number, NodeOperationError>> {
		return (await this.repeats?.refusals()) ?? new Map();
	}

	async finish(): Promise<void> {
		this.pacer.finish();
		await this.repeats?.finish();
	}

	rerunNote(): string {
		return this.repeats?.rerunNote() ?? '';
	}

	// Stop at the Usage Limit: read once per run, before the first send; the rest fail unsent.
	private async takeSendSlot(itemIndex: number): Promise<void> {
		if (!this.run.options(itemIndex).stopAtUsageLimit) return;
		this.allowance ??= this.readAllowance();
		const allowance = await this.allowance;
		if (allowance.remaining === null || allowance.granted < allowance.remaining) {
			allowance.granted++;
			return;
		}
		throw usageLimitReached(this.run, itemIndex, allowance);
	}

	private async readAllowance(): Promise<Allowance> {
		const answer = await this.run.client.call(endpoints.limit, {}, { signal: this.run.signal });
		const { blocked, limit, used, remaining } = readUsageLimit(answer);
		// A gateway that says "blocked" has nothing left, whatever its numbers say.
		return { remaining: blocked ? 0 : remaining, limit, used, granted: 0 };
	}
}

/** Only reached when the gateway said the message was sent: `sent: true` is its word, not ours. */
function sendResultJson(result: unknown, phone: string): IDataObject {
	const message = (result as { message?: { id?: unknown; message?: unknown } } | undefined)
		?.message;
	const id = message?.id;
	return {
		sent: true,
		id: typeof id === 'string' || typeof id === 'number' ? String(id) : null,
		phone,
		message: typeof message?.message === 'string' ? message.message : null,
		response: (result ?? null) as IDataObject,
	};
}

type Allowance = Omit<UsageLimit, 'blocked'> & { granted: number };

function usageLimitReached(
	run: RunContext<unknown>,
	itemIndex: number,
	{ remaining, limit, used, granted }: Allowance,
): NotAttemptedError {
	const counts = limit !== null && used !== null ? ` (limit ${limit}, ${used} used)` : '';
	const sentNow =
		granted === 0
			? 'so nothing was sent in this run'
			: `and ${granted === 1 ? 'it went to an earlier item' : `they went to ${granted} earlier items`}`;
	const why = `the account's usage limit is reached. It had ${messages(remaining ?? 0)} left when this run started${counts}, ${sentNow}`;
	// The limit answer says nothing of when the count starts again (service notes).
	const fix =
		'The gateway does not say when the count starts again: check Account → Get Usage Limit before running the remaining items.';
	return notSent(run, itemIndex, why, fix);
}

/** Kept back without a request: its claim is given back, and a re-run sends it. */
function notSent(
	run: RunContext<unknown>,
	itemIndex: number,
	why: string,
	fix = 'Run it again later.',
	details?: JsonObject,
): NotAttemptedError {
	const message = `Not sent: ${why} ${itemLabel(itemIndex)}`;
	return new NotAttemptedError(run.node, message, itemIndex, fix, details);
}

// Delay Between Messages, Send Only Between and Account Cap, in that order, before a message's
// request. Max Wait bounds the waits for the window and the cap together, so a run over the cap
// never waits item by item longer than the user allowed.
class SendPacer {
	readonly waited = new Map<number, number>();
	private readonly account: string;
	private nextStartAt = 0;
	private budgetMs: number;
	private readonly held = { cap: 0, window: 0 };
	private readonly paused = { count: 0, ms: 0 };
	private readonly refused = { cap: 0, window: 0 };
	private nextOpening: number | undefined;

	constructor(private readonly run: RunContext<SendSettings>) {
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
			const why = `the run was stopped while waiting (${messageOf(error)})`;
			held = notSent(this.run, itemIndex, why);
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
				slot = await takeCapSlot(this.account, accountCap);
			} catch (error) {
				const why = `Account Cap could not count the account's messages: ${causeInWords(messageOf(error))}`;
				const fix =
					'Check that n8n reaches its Redis (queue mode), or remove Account Cap to send without it.';
				return notSent(this.run, itemIndex, why, fix);
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
		const why = `outside Send Only Between (${describeWindow(window)}); it opens next at ${at}`;
		const fix = `Run it again once the window is open, or put Message → Wait for Send Window before this node: the execution then waits for the opening without holding n8n.`;
		return notSent(this.run, itemIndex, why, fix, { nextWindowOpensAt: at });
	}

	private overCap(itemIndex: number, cap: AccountCap, waitMs: number): Error {
		this.refused.cap++;
		const per = cap.periodMs === 60_000 ? 'minute' : 'hour';
		const why = `the account sent ${cap.messages} messages in the last ${per} (Account Cap), and its next turn is in ${seconds(waitMs)}, beyond what Max Wait leaves`;
		const fix = 'Run it again later, raise Max Wait, or send fewer messages per run.';
		const capFreesAt = new Date(clock.now() + waitMs).toISOString();
		return notSent(this.run, itemIndex, why, fix, { capFreesAt });
	}

	async requestEnded(entry: string | undefined): Promise<void> {
		// Counted from its start already: failing here only makes the cap less strict.
		if (entry !== undefined) await endCapSlot(this.account, entry).catch(() => undefined);
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

// Account Cap: one sliding window per account, shared by every workflow and execution that sends
// from it; only nodes with a cap record their sends, so others make no extra round trip.

type AccountCap = { messages: number; periodMs: number };

const LONGEST_CAP_PERIOD_MS = 3_600_000;

// By client id alone: one account reached under two Base URL spellings has one cap, and two
// gateways sharing a client id only make the cap stricter.
function accountKey(clientId: string): string {
	const hash = createHash('sha256').update(JSON.stringify(['account', clientId]));
	return hash.digest('hex').slice(0, 32);
}

let sendCounter = 0;
const processTag = randomBytes(6).toString('hex');

/** `entry` counts only when `waitMs` is 0. */
async function takeCapSlot(
	account: string,
	cap: AccountCap,
): Promise<{ waitMs: number; entry: string }> {
	const now = clock.now();
	const entry = `${now}:${processTag}:${++sendCounter}`;
	const state = sharedState();
	if (state.kind !== 'redis') return { waitMs: takeInMemory(account, cap, now, entry), entry };
	const args = [now, cap.periodMs, cap.messages, LONGEST_CAP_PERIOD_MS, entry];
	return { waitMs: Number(await state.run(TAKE, [sendsKey(state, account)], args)), entry };
}

// From the request's end: counted from its start, a slow request would leave the window before the
// message arrived and let the next period's first message in beside it.
async function endCapSlot(account: string, entry: string): Promise<void> {
	const now = clock.now();
	const state = sharedState();
	if (state.kind === 'redis') await state.run(END, [sendsKey(state, account)], [now, entry]);
	else endInMemory(account, entry, now);
}

const sendTimes = new MemoryTable<Array<{ at: number; entry: string }>>(
	8 * 1024 * 1024,
	(sends) => 64 * sends.length,
);

function takeInMemory(account: string, cap: AccountCap, now: number, entry: string): number {
	const kept = (sendTimes.get(account) ?? []).filter((s) => s.at > now - LONGEST_CAP_PERIOD_MS);
	const inWindow = kept.filter((s) => s.at > now - cap.periodMs);
	const free = inWindow.length < cap.messages;
	if (free) {
		kept.push({ at: now, entry });
		kept.sort((a, b) => a.at - b.at);
	}
	sendTimes.set(account, kept, now + LONGEST_CAP_PERIOD_MS);
	// Else the send whose leaving brings the window under the cap.
	return free ? 0 : Math.max(1, inWindow[inWindow.length - cap.messages].at + cap.periodMs - now);
}

function endInMemory(account: string, entry: string, now: number): void {
	const kept = sendTimes.get(account);
	const sent = kept?.find((s) => s.entry === entry);
	if (!kept || !sent) return;
	sent.at = Math.max(sent.at, now);
	kept.sort((a, b) => a.at - b.at);
}

// Redis: one sorted set per account, send times as scores (members unique per send).

const sendsKey = (state: QueueRedisState, account: string) =>
	state.key(`account:${account}`, 'sends');

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
