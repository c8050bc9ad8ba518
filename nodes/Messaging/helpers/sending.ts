import { NodeOperationError, type IDataObject } from 'n8n-workflow';

import { clock } from '../../shared/clock';
import { inputError, itemLabel } from '../../shared/errors';
import { endpoints } from '../../shared/transport';
import { readUsageLimit } from '../../shared/usageLimit';
import type { MessagingRun } from '../parameters';
import { identifySend as identifyForRepeats, type SendIdentity } from './idempotency';
import { requestEnded, waitedMs } from './pacing';

/**
 * In the check phase, for every send: its Send Only Between fields are usable (else the item's
 * input error, before anything is sent), and its idempotency key is recorded.
 */
export async function identifySend(
	run: MessagingRun,
	itemIndex: number,
	send: SendIdentity,
): Promise<void> {
	const window = run.options(itemIndex).sendWindow;
	if (window && 'problem' in window)
		throw inputError(
			run.node,
			itemIndex,
			`Send Only Between → ${window.field}`,
			window.problem,
			window.fix,
		);
	await identifyForRepeats(run, itemIndex, send);
}

/**
 * What every sending operation (Send Text, Send File, Send and Wait) does around its request, in
 * one place: in the check phase, `identifySend` (the message's idempotency key, for Skip Repeats
 * Within: idempotency.ts); before the request, a slot of the account's usage limit; after it, the
 * send's output fields. A rule that holds for every send belongs here.
 */

/**
 * One item's send: its usage-limit slot, then `request`, then the send's output fields
 * (`sent`, `id`, `phone`, `message`, `sentAt`, `waitedMs`, `response`), to which an operation
 * adds its own. Pacing, Account Cap and Send Only Between held the item before this
 * (`pacing.ts`, the run's gate): `waitedMs` says how long.
 */
export async function send(
	run: MessagingRun,
	itemIndex: number,
	phone: string,
	request: () => Promise<unknown>,
): Promise<IDataObject> {
	await takeSendSlot(run, itemIndex);
	const sentAt = new Date(clock.now()).toISOString();
	let result: unknown;
	try {
		result = await request();
	} finally {
		await requestEnded(run, itemIndex);
	}
	const { response, ...fields } = sendResultJson(result, phone);
	return { ...fields, sentAt, waitedMs: waitedMs(run, itemIndex), response };
}

/**
 * The output of a send: normalised fields first, the server's answer untouched under `response`.
 * Only reached when the gateway said the message was sent (the transport reads `message.sent`
 * and fails the item otherwise), so `sent: true` is the gateway's word, not the node's.
 * `message` is the gateway's own text about it, as in every operation's output.
 */
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

/**
 * Options → Stop at the Usage Limit: the node reads the account's usage limit once per run,
 * before the first send, and sends only as many items as remain. Every later item fails without
 * a request: an error item marked `notAttempted` with On Error → Continue, else the run stops
 * there (the items before it were sent).
 */

export interface Allowance {
	/** Messages the account could still send when the run started; null when the gateway does not say. */
	remaining: number | null;
	limit: number | null;
	used: number | null;
	/** Items given a slot so far. */
	granted: number;
}

/** Waits for the run's allowance (read once) and takes one send from it, or fails the item without sending. */
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

/** The error of an item left unsent; `notAttempted` tells error items apart from failed sends. */
class UsageLimitReached extends NodeOperationError {
	readonly notAttempted = true;
}

function usageLimitReached(
	run: MessagingRun,
	itemIndex: number,
	allowance: Allowance,
): UsageLimitReached {
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
	return new UsageLimitReached(run.node, message, {
		itemIndex,
		description: `${when} This item was not attempted (no request was made), so running it again cannot send it twice.`,
	});
}
