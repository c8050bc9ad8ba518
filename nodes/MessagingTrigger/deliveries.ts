import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { sha256 } from './secrets';

/**
 * Skip Repeated Deliveries: gateways retry, and one message (one `uuid`) delivered twice must
 * start one execution. Message ids seen are remembered in two places (docs/messaging-trigger.md,
 * "Repeated deliveries"):
 *
 * - this process's memory, claimed synchronously before anything is awaited, so two deliveries
 *   of one id racing into the same n8n process start one execution;
 * - the trigger's workflow static data, which n8n reads from its database for every webhook
 *   request and saves after it: it survives restarts and is shared by every process that receives
 *   webhooks (in queue mode the main process or the webhook processes; workers never run this).
 *
 * Both are bounded: ids older than the window are dropped, and at most MAX_REMEMBERED are kept
 * (the newest). Ids are kept as a short hash, so a huge or odd id costs the same as any other.
 */

export const MAX_REMEMBERED = 1000;
const STATIC_DATA_KEY = 'deliveries';
/** Triggers remembered in this process's memory (each with at most MAX_REMEMBERED ids). */
const MAX_SCOPES = 200;

/** Per trigger (workflow and node): id hash → when it was claimed (ms). Insertion order is age order. */
const claimedInProcess = new Map<string, Map<string, number>>();

export type Claim = { duplicate: true } | { duplicate: false; commit(): void; release(): void };

const idHash = (messageId: string): string => sha256(messageId).slice(0, 32);

function dropOlderThan(claims: Map<string, number>, oldest: number): void {
	for (const [key, at] of claims) {
		if (at >= oldest && claims.size <= MAX_REMEMBERED) break;
		claims.delete(key);
	}
}

function scopeOf(ctx: IWebhookFunctions): Map<string, number> {
	const scope = `${ctx.getWorkflow().id ?? ''}\n${ctx.getNode().id ?? ctx.getNode().name}\n${ctx.getMode()}`;
	let claims = claimedInProcess.get(scope);
	if (!claims) {
		if (claimedInProcess.size >= MAX_SCOPES) claimedInProcess.delete(claimedInProcess.keys().next().value as string);
		claims = new Map();
		claimedInProcess.set(scope, claims);
	}
	return claims;
}

/** The ids kept in static data: hash → seconds since 1970. */
function storedIds(staticData: IDataObject): Record<string, number> {
	const stored = staticData[STATIC_DATA_KEY];
	return typeof stored === 'object' && stored !== null && !Array.isArray(stored) ? (stored as Record<string, number>) : {};
}

/**
 * Claims a message id for this delivery: `duplicate` when it was received within the window;
 * otherwise the caller starts the workflow and then commits (kept in static data), or releases
 * the claim when it could not start it (so that the gateway's retry is not lost).
 */
export function claimDelivery(ctx: IWebhookFunctions, messageId: string, windowMs: number): Claim {
	const now = Date.now();
	const oldest = now - windowMs;
	const key = idHash(messageId);
	const claims = scopeOf(ctx);
	dropOlderThan(claims, oldest);
	const staticData = ctx.getWorkflowStaticData('node');
	const storedAt = storedIds(staticData)[key];
	if (claims.has(key) || (typeof storedAt === 'number' && storedAt * 1000 >= oldest)) return { duplicate: true };
	claims.set(key, now);
	return {
		duplicate: false,
		release: () => {
			claims.delete(key);
		},
		commit: () => {
			const kept = Object.entries(storedIds(staticData))
				.filter(([, at]) => typeof at === 'number' && at * 1000 >= oldest)
				.sort(([, a], [, b]) => a - b)
				.slice(-(MAX_REMEMBERED - 1));
			staticData[STATIC_DATA_KEY] = Object.fromEntries([...kept, [key, Math.floor(now / 1000)]]);
		},
	};
}

/** Forgets every claim this process holds, as a restarted process would (for tests). */
export function forgetClaimsInProcess(): void {
	claimedInProcess.clear();
}
