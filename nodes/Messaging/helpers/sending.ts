import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { clock } from '../../shared/clock';
import { NotAttemptedError, itemLabel } from '../../shared/errors';
import { endpoints, readUsageLimit } from '../../shared/transport';
import type { MessagingRun } from '../parameters';
import { identifyRepeat, type SendIdentity } from './idempotency';
import { SendPacer } from './pacing';

export async function identifySend(
	run: MessagingRun,
	itemIndex: number,
	send: SendIdentity,
): Promise<void> {
	const window = run.options(itemIndex).sendWindow;
	if (window && 'problem' in window)
		throw run.fail(itemIndex, `Send Only Between → ${window.field}`, window.problem, window.fix);
	await identifyRepeat(run, itemIndex, send);
}

/**
 * Every message's way out, top to bottom: a known repeat is skipped at once; then the pause, the
 * send window and the account cap; the claim; the usage limit; the request; the claim settled.
 * `describe` adds the operation's fields to what was sent.
 */
export async function send(
	run: MessagingRun,
	itemIndex: number,
	phone: string,
	request: () => Promise<unknown>,
	describe: (sent: IDataObject) => IDataObject = (sent) => sent,
): Promise<INodeExecutionData> {
	const { repeats } = run;
	const known = await repeats?.check(itemIndex);
	if (known) return known;
	const pacer = (run.pacer ??= new SendPacer(run));
	const capEntry = await pacer.turn(itemIndex);
	let result: unknown;
	let sentAt = '';
	try {
		const repeat = await repeats?.take(itemIndex);
		if (repeat) return repeat;
		let failure: { error: unknown } | undefined;
		try {
			await takeSendSlot(run, itemIndex);
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

// Stop at the Usage Limit: read once per run, before the first send; the rest fail unsent.

export interface Allowance {
	remaining: number | null;
	limit: number | null;
	used: number | null;
	granted: number;
}

async function takeSendSlot(run: MessagingRun, itemIndex: number): Promise<void> {
	if (!run.options(itemIndex).stopAtUsageLimit) return;
	run.allowance ??= readAllowance(run);
	const allowance = await run.allowance;
	if (allowance.remaining === null || allowance.granted < allowance.remaining) {
		allowance.granted++;
		return;
	}
	throw usageLimitReached(run, itemIndex, allowance);
}

async function readAllowance(run: MessagingRun): Promise<Allowance> {
	const answer = await run.client.call(endpoints.limit, {}, { signal: run.signal });
	const { blocked, limit, used, remaining } = readUsageLimit(answer);
	return {
		// A gateway that says "blocked" has nothing left, whatever its numbers say.
		remaining: blocked ? 0 : remaining,
		limit,
		used,
		granted: 0,
	};
}

function usageLimitReached(
	run: MessagingRun,
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
