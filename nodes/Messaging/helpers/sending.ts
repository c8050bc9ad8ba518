import type { IDataObject, INodeExecutionData, NodeOperationError } from 'n8n-workflow';

import { clock } from '../../shared/clock';
import { NotAttemptedError, itemLabel } from '../../shared/errors';
import type { RunContext } from '../../shared/execution/operationRun';
import { endpoints, readUsageLimit } from '../../shared/transport';
import { Repeats, type RepeatSettings, type SendIdentity } from './idempotency';
import { SendPacer, type PacingSettings } from './pacing';

export type SendSettings = PacingSettings & RepeatSettings & { stopAtUsageLimit: boolean };

/**
 * Every message's way out, for one run: each item is identified when it is checked, then sent,
 * top to bottom: a known repeat is skipped at once; then the pause, the send window and the
 * account cap; the claim; the usage limit; the request; the claim settled.
 */
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
		if (sendWindow && 'problem' in sendWindow)
			throw this.run.fail(
				itemIndex,
				`Send Only Between → ${sendWindow.field}`,
				sendWindow.problem,
				sendWindow.fix,
			);
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

	/** After every item was checked, before the first send: items the run must not send. */
	async refusals(): Promise<Map<number, NodeOperationError>> {
		return (await this.repeats?.refusals()) ?? new Map();
	}

	/** At the end of the run, stopped or not: its hints. */
	async finish(): Promise<void> {
		this.pacer.finish();
		await this.repeats?.finish();
	}

	/** What running the same input again does, for a stopped run's error. */
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

interface Allowance {
	remaining: number | null;
	limit: number | null;
	used: number | null;
	granted: number;
}

function usageLimitReached(
	run: RunContext<unknown>,
	itemIndex: number,
	allowance: Allowance,
): NotAttemptedError {
	const left = allowance.remaining ?? 0;
	const counts =
		allowance.limit !== null && allowance.used !== null
			? ` (limit ${allowance.limit}, ${allowance.used} used)`
			: '';
	const sentNow =
		allowance.granted === 0
			? 'so nothing was sent in this run'
			: `and ${allowance.granted === 1 ? 'it went to an earlier item' : `they went to ${allowance.granted} earlier items`}`;
	const message = `Not sent: the account's usage limit is reached. It had ${left} message${left === 1 ? '' : 's'} left when this run started${counts}, ${sentNow} ${itemLabel(itemIndex)}`;
	// The limit answer says nothing of when the count starts again (service notes: block, block_limit, limit_qty).
	const when =
		'The gateway does not say when the count starts again: check Account → Get Usage Limit before running the remaining items.';
	return new NotAttemptedError(run.node, message, itemIndex, when);
}
