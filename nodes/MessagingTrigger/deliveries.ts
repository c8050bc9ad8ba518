import type { IWebhookFunctions } from 'n8n-workflow';

import { clock } from '../shared/clock';
import { MemoryTable } from '../shared/state/memoryTable';
import { sharedState, type RedisScript } from '../shared/state/sharedState';
import { sha256 } from './secrets';

// Gateways retry: one message (one `uuid`) delivered twice starts one execution. Not in static
// data: n8n does not save what a webhook writes there when that webhook starts an execution.

/** Test sessions have a table of their own: they never push out what active triggers remember. */
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

// The caller releases the claim when it could not start the workflow, so that the gateway's retry
// is not taken for a repeat. An unreachable Redis throws: the delivery is refused, to be retried.
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

export function claimsInProcess(): { production: number; manual: number; bytes: number } {
	return {
		production: inProcess.production.size().entries,
		manual: inProcess.manual.size().entries,
		bytes: inProcess.production.size().bytes + inProcess.manual.size().bytes,
	};
}

export function forgetClaimsInProcess(): void {
	inProcess.production.clear();
	inProcess.manual.clear();
}
