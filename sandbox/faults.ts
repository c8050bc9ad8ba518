/**
 * Fault injection: rules chosen per request, with seeded randomness so a failing test or
 * benchmark run can be repeated exactly.
 */
import type { FaultKind, FaultRule } from './types';
import { OPERATIONS } from './endpoints';

const FAULT_KINDS: readonly FaultKind[] = [
	'http429',
	'html502',
	'html503',
	'html504',
	'dropBeforeProcessing',
	'dropAfterProcessing',
	'slow',
	'expireToken',
	'sentFalse',
	'malformedJson',
	'emptyBody',
	'rpcError',
	'trickle',
	'hugeBody',
	'redirect',
	'answer',
	'raw',
	'http500AfterProcessing',
	'http503AfterProcessing',
	'rpcErrorAfterProcessing',
];

/** Kinds that let the request be processed (validated, handled, recorded) before they act. */
const PROCESSING_KINDS: ReadonlySet<FaultKind> = new Set([
	'dropAfterProcessing',
	'slow',
	'sentFalse',
	'trickle',
	'http500AfterProcessing',
	'http503AfterProcessing',
	'rpcErrorAfterProcessing',
]);

export function faultProcessesRequest(kind: FaultKind): boolean {
	return PROCESSING_KINDS.has(kind);
}

/** Small, fast, seedable PRNG (mulberry32); returns floats in [0, 1). */
function mulberry32(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

/** What a rule is matched against. */
export interface FaultTarget {
	path: string;
	method: string;
	/** params.method or params.function, when the body had one. */
	rpcMethod?: string;
}

export interface FiredFault {
	kind: FaultKind;
	rule: FaultRule;
	/** An error-after-processing fault whose request was refused first (an expired token) never applies. */
	refusedFirst?: boolean;
}

/** The params.method of every send (the rows of the API table marked `sends`). */
const SEND_METHODS = new Set(OPERATIONS.filter((op) => op.sends).map((op) => op.selector));

interface ActiveRule {
	rule: FaultRule;
	kinds: FaultKind[];
	/** Firings left; Infinity for probability rules without `times`. */
	remaining: number;
	/** Matching requests still to let through before the rule may fire (`skip`). */
	toSkip: number;
	random: () => number;
}

function kindsOf(rule: FaultRule): FaultKind[] {
	const kinds = rule.kinds ?? (rule.kind ? [rule.kind] : []);
	if (kinds.length === 0) throw new Error('Fault rule needs `kind` or `kinds`');
	for (const kind of kinds) {
		if (!FAULT_KINDS.includes(kind)) throw new Error(`Unknown fault kind: ${String(kind)}`);
	}
	return kinds;
}

function activate(rule: FaultRule): ActiveRule {
	const unlimited = rule.probability !== undefined && rule.times === undefined;
	return {
		rule,
		kinds: kindsOf(rule),
		remaining: unlimited ? Infinity : (rule.times ?? 1),
		toSkip: rule.skip ?? 0,
		random: mulberry32(rule.seed ?? 1),
	};
}

function matches(active: ActiveRule, target: FaultTarget): boolean {
	const match = active.rule.match ?? {};
	if (match.path !== undefined && match.path !== target.path) return false;
	if (match.method !== undefined && match.method.toUpperCase() !== target.method) return false;
	if (match.rpcMethod !== undefined && match.rpcMethod !== target.rpcMethod) return false;
	// A rule that can only say "sent: false" is meaningless elsewhere; don't spend it on other calls.
	const onlySentFalse = active.kinds.every((kind) => kind === 'sentFalse');
	if (onlySentFalse && !SEND_METHODS.has(target.rpcMethod ?? '')) return false;
	return true;
}

export class FaultEngine {
	private rules: ActiveRule[] = [];

	/** Validates every rule first so a bad list is rejected as a whole. */
	add(rules: FaultRule[]): void {
		const activated = rules.map(activate);
		this.rules.push(...activated);
	}

	clear(): void {
		this.rules = [];
	}

	/** The first rule (in order) that matches and fires, consuming one of its `times`. */
	pick(target: FaultTarget): FiredFault | undefined {
		for (const active of this.rules) {
			if (active.remaining <= 0 || !matches(active, target)) continue;
			if (active.toSkip > 0) {
				active.toSkip -= 1;
				continue;
			}
			const probability = active.rule.probability;
			if (probability !== undefined && active.random() >= probability) continue;
			active.remaining -= 1;
			const kind = active.kinds[Math.floor(active.random() * active.kinds.length)];
			return { kind, rule: active.rule };
		}
		return undefined;
	}
}
