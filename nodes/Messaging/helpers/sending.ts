import { NodeOperationError, type IDataObject } from 'n8n-workflow';

import { itemLabel } from '../../shared/errors';
import { endpoints } from '../../shared/transport';
import type { MessagingRun } from '../parameters';
import { limitJson } from '../actions/account/getLimit.operation';

/**
 * Options → Stop at the Usage Limit (Send Text, Send File, Send and Wait): the node reads the
 * account's usage limit once per run, before the first send, and sends only as many items as
 * remain. Every later item fails without a request: an error item marked `notAttempted` with
 * On Error → Continue, else the run stops there (the items before it were sent).
 */

interface Allowance {
	/** Messages the account could still send when the run started; null when the gateway does not say. */
	remaining: number | null;
	limit: number | null;
	used: number | null;
	/** When the count starts again, if the gateway says. */
	resetAt: string | null;
	/** Items given a slot so far. */
	granted: number;
}

const allowances = new WeakMap<MessagingRun, Promise<Allowance>>();

/** Waits for the run's allowance (read once) and takes one send from it, or fails the item without sending. */
export async function takeSendSlot(run: MessagingRun, itemIndex: number): Promise<void> {
	if (!run.options(itemIndex).stopAtUsageLimit) return;
	let pending = allowances.get(run);
	if (!pending) {
		pending = readAllowance(run);
		allowances.set(run, pending);
	}
	const allowance = await pending;
	if (allowance.remaining === null || allowance.granted < allowance.remaining) {
		allowance.granted++;
		return;
	}
	throw usageLimitReached(run, itemIndex, allowance);
}

async function readAllowance(run: MessagingRun): Promise<Allowance> {
	const answer = await run.client.call(endpoints.limit, {}, { signal: run.signal });
	const { blocked, limit, used, remaining } = limitJson(answer) as { blocked: boolean; limit: number | null; used: number | null; remaining: number | null };
	return {
		// A gateway that says "blocked" has nothing left, whatever its numbers say.
		remaining: blocked ? 0 : remaining,
		limit,
		used,
		resetAt: resetTime(answer),
		granted: 0,
	};
}

/** Names seen or guessed for "when the count starts again" (the real answer shows none so far). */
const RESET_KEYS = ['reset_at', 'resetAt', 'reset_date', 'reset', 'next_reset', 'renew_at', 'renewal_date'];

function resetTime(answer: unknown): string | null {
	const root = (answer && typeof answer === 'object' ? answer : {}) as IDataObject;
	const source = root.message && typeof root.message === 'object' ? (root.message as IDataObject) : root;
	for (const key of RESET_KEYS) {
		const value = source[key];
		if (typeof value === 'string' && value.trim() && value.length <= 64) return value.trim();
		if (typeof value === 'number' && Number.isFinite(value)) return new Date(value > 1e12 ? value : value * 1000).toISOString();
	}
	return null;
}

/** The error of an item left unsent; `notAttempted` tells error items apart from failed sends. */
export class UsageLimitReached extends NodeOperationError {
	readonly notAttempted = true;
}

function usageLimitReached(run: MessagingRun, itemIndex: number, allowance: Allowance): UsageLimitReached {
	const left = allowance.remaining ?? 0;
	const counts = allowance.limit !== null && allowance.used !== null ? ` (limit ${allowance.limit}, ${allowance.used} used)` : '';
	const sentNow = allowance.granted === 0 ? 'so nothing was sent in this run' : `and ${allowance.granted === 1 ? 'it went to an earlier item' : `they went to ${allowance.granted} earlier items`}`;
	const message = `Not sent: the account's usage limit is reached. It had ${left} message${left === 1 ? '' : 's'} left when this run started${counts}, ${sentNow} ${itemLabel(itemIndex)}`;
	const when = allowance.resetAt
		? `The gateway says the count starts again at ${allowance.resetAt}: run the remaining items then.`
		: 'The gateway does not say when the count starts again: check Account → Get Usage Limit before running the remaining items.';
	return new UsageLimitReached(run.node, message, {
		itemIndex,
		description: `${when} This item was not attempted (no request was made), so running it again cannot send it twice.`,
	});
}
