import type { IWebhookFunctions } from 'n8n-workflow';

import { clock } from '../shared/clock';
import { MemoryTable } from '../shared/state/memoryTable';
import { sharedState, type RedisScript } from '../shared/state/sharedState';
import { sha256 } from './secrets';

/**
 * Skip Repeated Deliveries: gateways retry, and one message (one `uuid`) delivered twice must
 * start one execution. Where the message ids are kept depends on n8n's mode (`sharedState`):
 *
 * - **queue mode**: in n8n's queue Redis (`SET NX PX`), so the main process and every
 *   `n8n webhook` process behind a load balancer see the same ids, and a restart forgets none;
 * - **regular mode**: in the memory of the one n8n process, claimed before anything is awaited
 *   (deliveries racing into the process start one execution); a restart forgets them.
 *
 * The process's memory is one table for every trigger, bounded in bytes and least recently used
 * first out; "Listen for test event" (manual mode) has a small table of its own, so test sessions
 * never push out what active triggers remember. Only a short hash of each id is kept.
 *
 * Not in workflow static data: n8n 2.40.7 does not save what a webhook writes there when that
 * webhook starts an execution (it rebuilds the execution's workflow from the same object first,
 * resetting its "changed" flag; seen under n8n start, test/n8n/scenarios/messaging-trigger-v2.ts),
 * and the webhook context has no processed-items store. The limits are in
 * docs/messaging-trigger.md, "Repeated deliveries".
 */

/** Memory for active triggers (about 25,000 ids) and for test sessions (about 1,500). */
const PRODUCTION_BUDGET_BYTES = 8 * 1024 * 1024;
const MANUAL_BUDGET_BYTES = 512 * 1024;

const inProcess = {
	production: new MemoryTable<true>(PRODUCTION_BUDGET_BYTES, () => 8),
	manual: new MemoryTable<true>(MANUAL_BUDGET_BYTES, () => 8),
};

export type Claim = { duplicate: true } | { duplicate: false; release(): Promise<void> };

const idHash = (messageId: string): string => sha256(messageId).slice(0, 32);

/** Deletes the key only if it still holds this delivery's token (never another delivery's claim). */
const RELEASE: RedisScript = {
	name: 'messagingTriggerRelease',
	keys: 1,
	lua: `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
};

const CLAIM: RedisScript = {
	name: 'messagingTriggerClaim',
	keys: 1,
	lua: `return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0`,
};

/**
 * Claims a message id for this delivery: `duplicate` when it was received within the window;
 * otherwise the caller starts the workflow, or releases the claim when it could not (so that the
 * gateway's retry is not taken for a repeat). In queue mode an unreachable Redis throws
 * (`SharedStateUnavailable`): the caller refuses the delivery, so the gateway tries again later.
 */
export async function claimDelivery(
	ctx: IWebhookFunctions,
	messageId: string,
	windowMs: number,
): Promise<Claim> {
	const node = ctx.getNode();
	const mode = ctx.getMode();
	const scope = `${ctx.getWorkflow().id ?? ''}:${node.id ?? node.name}:${mode}`;
	const id = idHash(messageId);
	const state = sharedState();
	if (state.kind === 'memory') {
		// Claimed before anything is awaited: deliveries racing into this process start one execution.
		const table = mode === 'manual' ? inProcess.manual : inProcess.production;
		const key = `${scope}\n${id}`;
		const now = clock.now();
		if (table.get(key, now)) return { duplicate: true };
		table.set(key, true, now + windowMs);
		return {
			duplicate: false,
			release: async () => {
				table.delete(key);
			},
		};
	}
	const key = state.key(scope, 'delivery', id);
	const token = `${clock.now()}.${Math.random().toString(36).slice(2)}`;
	const claimed = await state.run(CLAIM, [key], [token, Math.max(1, Math.round(windowMs))]);
	if (claimed !== 1) return { duplicate: true };
	return {
		duplicate: false,
		release: async () => {
			await state.run(RELEASE, [key], [token]).catch(() => undefined);
		},
	};
}

/** Ids this process remembers, for active triggers and for test sessions (tests and diagnostics). */
export function claimsInProcess(): { production: number; manual: number; bytes: number } {
	return {
		production: inProcess.production.size().entries,
		manual: inProcess.manual.size().entries,
		bytes: inProcess.production.size().bytes + inProcess.manual.size().bytes,
	};
}

/** Forgets every claim this process holds, as a restarted process would (for tests). */
export function forgetClaimsInProcess(): void {
	inProcess.production.clear();
	inProcess.manual.clear();
}
