import type { JsonObject } from 'n8n-workflow';

import { clock } from '../../shared/clock';
import { NotAttemptedError, causeInWords, hint, itemLabel } from '../../shared/errors';
import type { MessagingRun } from '../parameters';
import { accountKey, endCapSlot, takeCapSlot, type AccountCap } from './accountCap';
import { describeWindow, windowState, type SendWindow } from './sendWindow';

// Delay Between Messages, Send Only Between and Account Cap, in that order, before a message's
// request. Max Wait bounds the waits for the window and the cap together, so a run over the cap
// never waits item by item longer than the user allowed.

export class SendPacer {
	readonly waited = new Map<number, number>();
	private readonly account: string;
	private nextStartAt = 0;
	private budgetMs: number;
	private readonly held = { cap: 0, window: 0 };
	private readonly paused = { count: 0, ms: 0 };
	private readonly refused = { cap: 0, window: 0 };
	private nextOpening: number | undefined;

	constructor(private readonly run: MessagingRun) {
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
		const lines: string[] = [];
		if (this.paused.count > 0) {
			const { minMs, maxMs } = this.run.runOptions.messageDelay;
			lines.push(
				`paused ${seconds(this.paused.ms)} in all before ${this.paused.count} message${this.paused.count === 1 ? '' : 's'} (Delay Between Messages: ${rangeInSeconds(minMs, maxMs)} at random before each message but the first, so that the WhatsApp account does not send in bursts)`,
			);
		}
		if (this.held.window > 0)
			lines.push(`waited ${seconds(this.held.window)} for Send Only Between to open`);
		if (this.held.cap > 0) lines.push(`waited ${seconds(this.held.cap)} for the Account Cap`);
		const refused = this.refused.cap + this.refused.window;
		if (refused > 0)
			lines.push(
				`left ${refused} message${refused === 1 ? '' : 's'} unsent (${[
					this.refused.window
						? `${this.refused.window} outside Send Only Between${this.nextOpening ? `, next opening ${new Date(this.nextOpening).toISOString()}` : ''}`
						: '',
					this.refused.cap ? `${this.refused.cap} over the Account Cap beyond Max Wait` : '',
				]
					.filter(Boolean)
					.join('; ')}): each says why, and none was attempted`,
			);
		if (lines.length > 0)
			hint(this.run.ctx, `This run ${lines.join(', and ')}.`, refused > 0 ? 'warning' : 'info');
	}
}

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
	run: MessagingRun,
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
