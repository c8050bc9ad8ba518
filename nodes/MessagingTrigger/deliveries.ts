import type { IWebhookFunctions } from 'n8n-workflow';

import { clock } from '../shared/clock';
import { MemoryTable } from '../shared/store';
import { sharedState, type RedisScript } from '../shared/store';
import { sha256 } from './secrets';

// Gateways retry: one message (one `uuid`) delivered twice starts one execution. Not in static
// data: n8n does not save what a webhook writes there when that webhook starts an execution.

const CLAIM: RedisScript = {
	name: 'messagingTriggerClaim',
	keys: 1,
	lua: `return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0`,
};

/** Deletes the key only while it holds this delivery's token (never another delivery's claim). */
const RELEASE: RedisScript = {
	name: 'messagingTriggerRelease',
	keys: 1,
	lua: `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
};

type Release = () => Promise<void>;

/** The ids one n8n process received; queue mode keeps them in n8n's Redis instead. */
export class Deliveries {
	// Test sessions have a table of their own: they never push out what active triggers remember.
	private readonly production = new MemoryTable<true>(8 * 1024 * 1024, () => 8);
	private readonly manual = new MemoryTable<true>(512 * 1024, () => 8);

	/**
	 * Undefined for a repeat. The caller releases the claim when it could not start the workflow,
	 * so that the gateway's retry is no repeat. An unreachable Redis throws.
	 */
	async claim(
		ctx: IWebhookFunctions,
		messageId: string,
		windowMs: number,
	): Promise<Release | undefined> {
		const node = ctx.getNode();
		const mode = ctx.getMode();
		const scope = `${ctx.getWorkflow().id ?? ''}:${node.id ?? node.name}:${mode}`;
		const id = sha256(messageId).slice(0, 32);
		const state = sharedState();
		if (state.kind === 'memory') {
			// Claimed before anything is awaited: deliveries racing into this process start one execution.
			const table = mode === 'manual' ? this.manual : this.production;
			const key = `${scope}\n${id}`;
			if (table.get(key, clock.now())) return undefined;
			table.set(key, true, clock.now() + windowMs);
			return async () => table.delete(key);
		}
		const key = state.key(scope, 'delivery', id);
		const token = `${clock.now()}.${Math.random().toString(36).slice(2)}`;
		const claimed = await state.run(CLAIM, [key], [token, Math.max(1, Math.round(windowMs))]);
		if (claimed !== 1) return undefined;
		return async () => {
			await state.run(RELEASE, [key], [token]).catch(() => undefined);
		};
	}
}
