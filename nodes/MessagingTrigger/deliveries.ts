import type { IWebhookFunctions } from 'n8n-workflow';

import { sha256 } from './secrets';

/**
 * Skip Repeated Deliveries: gateways retry, and one message (one `uuid`) delivered twice must
 * start one execution. Message ids are remembered in the memory of the n8n process that receives
 * the webhook (in queue mode the main process, or the webhook processes; workers never run this),
 * claimed synchronously before anything is awaited, so deliveries racing into the process start one
 * execution. Bounded: ids older than the window are dropped, and at most MAX_REMEMBERED per trigger
 * are kept (the newest), each as a short hash, so a huge or odd id costs the same as any other.
 *
 * Not in workflow static data: n8n 2.40.7 does not save what a webhook writes there when that
 * webhook starts an execution (it rebuilds the execution's workflow from the same object first,
 * resetting its "changed" flag; seen under n8n start, test/n8n/scenarios/messaging-trigger-v2.ts),
 * and a node can reach no other state shared between n8n processes. The limits this leaves are in
 * docs/messaging-trigger.md, "Repeated deliveries".
 */

export const MAX_REMEMBERED = 1000;
/** Triggers remembered in this process's memory (each with at most MAX_REMEMBERED ids). */
const MAX_SCOPES = 200;

/** Per trigger (workflow, node, mode): id hash → when it was claimed (ms). Insertion order is age order. */
const claimedInProcess = new Map<string, Map<string, number>>();

export type Claim = { duplicate: true } | { duplicate: false; release(): void };

const idHash = (messageId: string): string => sha256(messageId).slice(0, 32);

function dropOldest(claims: Map<string, number>, oldest: number): void {
	for (const [key, at] of claims) {
		if (at >= oldest && claims.size < MAX_REMEMBERED) break;
		claims.delete(key);
	}
}

function scopeOf(ctx: IWebhookFunctions): Map<string, number> {
	const scope = `${ctx.getWorkflow().id ?? ''}\n${ctx.getNode().id ?? ctx.getNode().name}\n${ctx.getMode()}`;
	let claims = claimedInProcess.get(scope);
	if (!claims) {
		if (claimedInProcess.size >= MAX_SCOPES)
			claimedInProcess.delete(claimedInProcess.keys().next().value as string);
		claims = new Map();
		claimedInProcess.set(scope, claims);
	}
	return claims;
}

/**
 * Claims a message id for this delivery: `duplicate` when it was received within the window;
 * otherwise the caller starts the workflow, or releases the claim when it could not (so that the
 * gateway's retry is not taken for a repeat).
 */
export function claimDelivery(ctx: IWebhookFunctions, messageId: string, windowMs: number): Claim {
	const now = Date.now();
	const key = idHash(messageId);
	const claims = scopeOf(ctx);
	const claimedAt = claims.get(key);
	if (claimedAt !== undefined && claimedAt >= now - windowMs) return { duplicate: true };
	claims.delete(key);
	dropOldest(claims, now - windowMs);
	claims.set(key, now);
	return {
		duplicate: false,
		release: () => {
			claims.delete(key);
		},
	};
}

/** How many ids this process remembers for each trigger (for tests and diagnostics). */
export function claimsInProcess(): number[] {
	return [...claimedInProcess.values()].map((claims) => claims.size);
}

/** Forgets every claim this process holds, as a restarted process would (for tests). */
export function forgetClaimsInProcess(): void {
	claimedInProcess.clear();
}
