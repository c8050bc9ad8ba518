import { createHash } from 'crypto';

import type { UsageLimit } from '../shared/usageLimit';

/**
 * What the Messaging Account Trigger decides on each poll, apart from n8n and HTTP: given what it
 * remembered (a small object in the workflow's static data), what the gateway answered now and
 * the settings, which events fire and what to remember next. Pure (the time is part of the
 * observation), so every rule is testable.
 *
 * The rule that makes restarts safe (n8n saves static data only when a poll returns something,
 * and once after activation): every change of a watched state is marked `mustSave`. The poll
 * then returns either the events it fires or, when it fires none, an empty result, so that n8n
 * saves the memory in both cases. What is never saved (the count of failed polls) is kept apart,
 * in `PollStreak`, and only ever makes an event late, never false.
 */

/** The events a user can pick. */
export type WatchedEvent =
	| 'disconnected'
	| 'connected'
	| 'qrCodeNeeded'
	| 'webhookChanged'
	| 'usageLimit'
	| 'gatewayUnreachable';

/** What an output item's `event` says. */
export type HealthEventKind =
	| 'disconnected'
	| 'connected'
	| 'qrCodeNeeded'
	| 'webhookChanged'
	| 'usageLow'
	| 'usageBlocked'
	| 'gatewayUnreachable';

export type UsageRule =
	| { readonly kind: 'percent'; readonly percent: number }
	| { readonly kind: 'count'; readonly count: number }
	| { readonly kind: 'blocked' };

export interface WatchSettings {
	readonly events: ReadonlySet<WatchedEvent>;
	readonly usageRule: UsageRule;
	/** gatewayUnreachable: fire after this many polls in a row without an answer. */
	readonly failedPolls: number;
	/** qrCodeNeeded: at most this many QR events per disconnection… */
	readonly qrCodesPerDisconnection: number;
	/** …and at least this many minutes apart. */
	readonly minutesBetweenQrCodes: number;
	/** Whether the first poll (no memory yet) fires for problems already present. */
	readonly reportProblemsAtStart: boolean;
}

/** A request's outcome: its answer, or why there is none. */
export type Reading<T> =
	| { readonly ok: true; readonly value: T }
	| {
			readonly ok: false;
			readonly error: Error;
			/** True when the gateway gave no answer at all (network, timeout, a proxy's 5xx page). */
			readonly noAnswer: boolean;
	  };

export interface SessionReading {
	readonly connected: boolean;
	readonly status: string;
	readonly qrCode?: string;
	readonly hint?: string;
}

/** The webhook the gateway holds: null when it holds none. */
export interface WebhookReading {
	readonly url: string | null;
}

/** One poll: when, and what each request it made answered (absent: not asked). */
export interface Observation {
	readonly at: string;
	readonly session?: Reading<SessionReading>;
	readonly webhook?: Reading<WebhookReading>;
	readonly usage?: Reading<UsageLimit>;
}

/** The session as remembered (short, stable keys: it is stored with the workflow). */
interface SessionMemory {
	connected: boolean;
	/** The last status word seen. */
	status: string;
	/** When this trigger first saw the account in this state (connected or not). */
	since: string;
	/** QR events sent in the current disconnection. */
	qr?: { count: number; lastAt: string; sha: string };
}

/**
 * The webhook as remembered: its origin (what the events show) and salted hashes of the rest
 * (path, query, user info), so that a change of path or secret is seen without keeping either.
 */
interface WebhookMemory {
	origin: string | null;
	path: string;
	rest: string;
	since: string;
}

type UsageLevel = 'ok' | 'low' | 'blocked';

interface UsageMemory {
	/** The rule the level was computed with: another rule starts over from a new baseline. */
	rule: string;
	level: UsageLevel;
	since: string;
}

interface ReachMemory {
	down: boolean;
	since: string;
}

export interface HealthMemory {
	v: 1;
	/** Which account (a hash of the base URL and client id): another account starts over. */
	account: string;
	/** Random, per memory: salts the webhook hashes. */
	salt: string;
	session?: SessionMemory;
	webhook?: WebhookMemory;
	usage?: UsageMemory;
	reach?: ReachMemory;
}

/** Polls in a row the gateway did not answer, in this activation only (never saved). */
export interface PollStreak {
	failed: number;
	since?: string;
	lastError?: string;
}

export interface HealthEvent {
	event: HealthEventKind;
	[field: string]: unknown;
	/** qrCodeNeeded: the QR code to render as an image (never put into the JSON). */
	qrCode?: string;
}

export interface PollDecision {
	events: HealthEvent[];
	memory: HealthMemory;
	/** A watched state changed: n8n must save the memory even if no event fires. */
	mustSave: boolean;
	streak: PollStreak;
	/** Readings that failed, for the error the poll reports when nothing else happens. */
	failures: Array<Extract<Reading<unknown>, { ok: false }>>;
	/** A watched condition had no memory and its request failed: nothing to compare with. */
	baselineFailed: boolean;
}

const SESSION_EVENTS: readonly WatchedEvent[] = ['disconnected', 'connected', 'qrCodeNeeded'];

/** Which requests a poll needs for these events (at most three; Get Status also probes reachability). */
export function requestsFor(events: ReadonlySet<WatchedEvent>): {
	session: boolean;
	webhook: boolean;
	usage: boolean;
} {
	const webhook = events.has('webhookChanged');
	const usage = events.has('usageLimit');
	const session =
		SESSION_EVENTS.some((event) => events.has(event)) ||
		(events.has('gatewayUnreachable') && !webhook && !usage);
	return { session, webhook, usage };
}

export function readMemory(value: unknown, account: string): HealthMemory | undefined {
	if (!value || typeof value !== 'object') return undefined;
	const memory = value as Partial<HealthMemory>;
	if (memory.v !== 1 || memory.account !== account || typeof memory.salt !== 'string')
		return undefined;
	return JSON.parse(JSON.stringify(memory)) as HealthMemory;
}

export function shortHash(...parts: string[]): string {
	return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 24);
}

export function decide(
	settings: WatchSettings,
	remembered: HealthMemory | undefined,
	observation: Observation,
	streak: PollStreak,
	fresh: { account: string; salt: string },
): PollDecision {
	const memory: HealthMemory = remembered
		? structuredClone(remembered)
		: { v: 1, account: fresh.account, salt: fresh.salt };
	const decision: PollDecision = {
		events: [],
		memory,
		mustSave: remembered === undefined,
		streak: { ...streak },
		failures: [],
		baselineFailed: false,
	};
	const { events } = settings;
	const at = observation.at;
	for (const reading of [observation.session, observation.webhook, observation.usage])
		if (reading && !reading.ok) decision.failures.push(reading);

	const sessionWatched = SESSION_EVENTS.some((event) => events.has(event));
	if (!sessionWatched) forget(decision, 'session');
	else if (observation.session) sessionStep(settings, decision, observation.session, at);

	if (!events.has('webhookChanged')) forget(decision, 'webhook');
	else if (observation.webhook) webhookStep(settings, decision, observation.webhook, at);

	if (!events.has('usageLimit')) forget(decision, 'usage');
	else if (observation.usage) usageStep(settings, decision, observation.usage, at);

	reachStep(settings, decision, observation, at);
	return decision;
}

function forget(decision: PollDecision, key: 'session' | 'webhook' | 'usage'): void {
	if (decision.memory[key] === undefined) return;
	delete decision.memory[key];
	decision.mustSave = true;
}

/** True when the request failed (the condition then keeps its memory); without a memory, nothing can be compared. */
function failed<T>(
	decision: PollDecision,
	reading: Reading<T>,
	known: boolean,
): reading is Extract<Reading<T>, { ok: false }> {
	if (reading.ok) return false;
	if (!known) decision.baselineFailed = true;
	return true;
}

// ---------------------------------------------------------------------------------------------
// Session: disconnected, connected again, QR code needed

function sessionStep(
	settings: WatchSettings,
	decision: PollDecision,
	reading: Reading<SessionReading>,
	at: string,
): void {
	const before = decision.memory.session;
	if (failed(decision, reading, before !== undefined)) return;
	const now = reading.value;
	const { events } = settings;

	if (!before || before.connected !== now.connected) {
		const next: SessionMemory = { connected: now.connected, status: now.status, since: at };
		decision.memory.session = next;
		decision.mustSave = true;
		const report = before !== undefined || settings.reportProblemsAtStart;
		if (now.connected && before && events.has('connected')) {
			decision.events.push(sessionEvent('connected', now, before, at));
		}
		if (!now.connected && report && events.has('disconnected')) {
			decision.events.push(sessionEvent('disconnected', now, before, at));
		}
		if (!now.connected && report) qrStep(settings, decision, now, next, at);
		else if (!now.connected && now.qrCode !== undefined && events.has('qrCodeNeeded')) {
			// A problem present at the first poll, not reported (Report Problems at Start off):
			// this QR is known; a new one later is news.
			next.qr = { count: 0, lastAt: at, sha: shortHash('qr', now.qrCode) };
		}
		return;
	}
	// Same state: the status word may move on (init → got qr code) without being a change.
	const next: SessionMemory = { ...before, status: now.status };
	decision.memory.session = next;
	if (!now.connected) qrStep(settings, decision, now, next, at);
}

function sessionEvent(
	kind: 'connected' | 'disconnected',
	now: SessionReading,
	before: SessionMemory | undefined,
	at: string,
): HealthEvent {
	const event: HealthEvent = {
		event: kind,
		connected: now.connected,
		status: now.status,
		previousStatus: before?.status ?? null,
		since: at,
		previousSince: before?.since ?? null,
	};
	if (now.hint !== undefined) event.message = now.hint;
	return event;
}

/** QR code needed: a QR the gateway shows, again when it changed, within the bound. */
function qrStep(
	settings: WatchSettings,
	decision: PollDecision,
	now: SessionReading,
	session: SessionMemory,
	at: string,
): void {
	if (!settings.events.has('qrCodeNeeded') || now.qrCode === undefined) return;
	const sha = shortHash('qr', now.qrCode);
	const sent = session.qr;
	if (sent) {
		if (sent.sha === sha || sent.count >= settings.qrCodesPerDisconnection) return;
		const minutes = (Date.parse(at) - Date.parse(sent.lastAt)) / 60_000;
		if (sent.count > 0 && !(minutes >= settings.minutesBetweenQrCodes)) return;
	}
	const count = (sent?.count ?? 0) + 1;
	session.qr = { count, lastAt: at, sha };
	decision.mustSave = true;
	const event: HealthEvent = {
		event: 'qrCodeNeeded',
		connected: false,
		status: now.status,
		disconnectedSince: session.since,
		qrNumber: count,
		qrLimit: settings.qrCodesPerDisconnection,
		qrCode: now.qrCode,
	};
	if (now.hint !== undefined) event.message = now.hint;
	decision.events.push(event);
}

// ---------------------------------------------------------------------------------------------
// Webhook changed

function webhookStep(
	settings: WatchSettings,
	decision: PollDecision,
	reading: Reading<WebhookReading>,
	at: string,
): void {
	const before = decision.memory.webhook;
	if (failed(decision, reading, before !== undefined)) return;
	const seen = webhookShape(reading.value.url, decision.memory.salt);
	if (
		before &&
		before.path === seen.path &&
		before.rest === seen.rest &&
		before.origin === seen.origin
	)
		return;
	decision.memory.webhook = { ...seen, since: at };
	decision.mustSave = true;
	if (!before) return;
	decision.events.push({
		event: 'webhookChanged',
		previousOrigin: before.origin,
		currentOrigin: seen.origin,
		changed: whatChanged(before, seen),
		since: at,
		previousSince: before.since,
	});
}

function webhookShape(url: string | null, salt: string): Omit<WebhookMemory, 'since'> {
	const text = url?.trim() ?? '';
	if (text === '') return { origin: null, path: '', rest: '' };
	try {
		const parsed = new URL(text);
		const origin = parsed.origin === 'null' ? null : parsed.origin;
		return {
			origin,
			path: shortHash(salt, 'path', parsed.pathname),
			rest: shortHash(salt, 'rest', parsed.search, parsed.hash, parsed.username, parsed.password),
		};
	} catch {
		// Not a URL: no origin to show; the whole text is hashed.
		return { origin: null, path: shortHash(salt, 'text', text), rest: '' };
	}
}

/** Which part changed, named without showing it. */
function whatChanged(
	before: Omit<WebhookMemory, 'since'>,
	now: Omit<WebhookMemory, 'since'>,
): 'set' | 'cleared' | 'origin' | 'path' | 'query' {
	if (before.path === '') return 'set';
	if (now.path === '') return 'cleared';
	if (before.origin !== now.origin) return 'origin';
	if (before.path !== now.path) return 'path';
	return 'query';
}

// ---------------------------------------------------------------------------------------------
// Usage limit

const SEVERITY: Record<UsageLevel, number> = { ok: 0, low: 1, blocked: 2 };

function ruleKey(rule: UsageRule): string {
	return rule.kind === 'percent'
		? `percent:${rule.percent}`
		: rule.kind === 'count'
			? `count:${rule.count}`
			: 'blocked';
}

function usageLevel(usage: UsageLimit, rule: UsageRule): UsageLevel {
	if (usage.blocked) return 'blocked';
	if (rule.kind === 'blocked' || usage.remaining === null) return 'ok';
	if (rule.kind === 'count') return usage.remaining < rule.count ? 'low' : 'ok';
	if (usage.limit === null || usage.limit <= 0) return 'ok';
	return (usage.remaining / usage.limit) * 100 < rule.percent ? 'low' : 'ok';
}

function usageStep(
	settings: WatchSettings,
	decision: PollDecision,
	reading: Reading<UsageLimit>,
	at: string,
): void {
	const rule = ruleKey(settings.usageRule);
	const before = decision.memory.usage?.rule === rule ? decision.memory.usage : undefined;
	if (failed(decision, reading, before !== undefined)) return;
	const usage = reading.value;
	const level = usageLevel(usage, settings.usageRule);
	if (before && before.level === level) return;
	decision.memory.usage = { rule, level, since: at };
	decision.mustSave = true;
	const worse = SEVERITY[level] > SEVERITY[before?.level ?? 'ok'];
	if (!worse || (!before && !settings.reportProblemsAtStart)) return;
	decision.events.push({
		event: level === 'blocked' ? 'usageBlocked' : 'usageLow',
		...usageFields(usage, settings.usageRule),
		level,
		previousLevel: before?.level ?? null,
		since: at,
		previousSince: before?.since ?? null,
	});
}

function usageFields(usage: UsageLimit, rule: UsageRule): Record<string, unknown> {
	return {
		blocked: usage.blocked,
		remaining: usage.remaining,
		limit: usage.limit,
		used: usage.used,
		percentLeft:
			usage.remaining !== null && usage.limit !== null && usage.limit > 0
				? Math.round((usage.remaining / usage.limit) * 10_000) / 100
				: null,
		threshold: thresholdOf(rule),
	};
}

function thresholdOf(rule: UsageRule): string {
	if (rule.kind === 'percent') return `below ${rule.percent}% left`;
	if (rule.kind === 'count') return `below ${rule.count} left`;
	return 'blocked';
}

// ---------------------------------------------------------------------------------------------
// Gateway unreachable

function reachStep(
	settings: WatchSettings,
	decision: PollDecision,
	observation: Observation,
	at: string,
): void {
	const readings = [observation.session, observation.webhook, observation.usage].filter(
		(reading) => reading !== undefined,
	);
	const noAnswer = readings.length > 0 && readings.every((r) => !r.ok && r.noAnswer);
	const streak = decision.streak;
	if (noAnswer) {
		streak.failed += 1;
		streak.since ??= at;
		const last = readings.at(-1);
		if (last && !last.ok) streak.lastError = last.error.message;
	} else {
		decision.streak = { failed: 0 };
	}

	if (!settings.events.has('gatewayUnreachable')) {
		if (decision.memory.reach !== undefined) {
			delete decision.memory.reach;
			decision.mustSave = true;
		}
		return;
	}
	const before = decision.memory.reach;
	if (!before && noAnswer) decision.baselineFailed = true;
	if (!noAnswer) {
		if (!before || before.down) {
			decision.memory.reach = { down: false, since: at };
			decision.mustSave = true;
		}
		return;
	}
	if (!before || before.down || streak.failed < settings.failedPolls) return;
	decision.memory.reach = { down: true, since: streak.since ?? at };
	decision.mustSave = true;
	decision.events.push({
		event: 'gatewayUnreachable',
		failedPolls: streak.failed,
		since: streak.since ?? at,
		previousSince: before.since,
		error: streak.lastError ?? null,
	});
}

// ---------------------------------------------------------------------------------------------
// Fetch Test Event

const SAMPLE_ORDER: readonly WatchedEvent[] = [
	'disconnected',
	'connected',
	'qrCodeNeeded',
	'webhookChanged',
	'usageLimit',
	'gatewayUnreachable',
];

/**
 * "Fetch Test Event": one item per chosen event, shaped like that event, from the account's
 * state now (`sample: true`); "previous" fields from the active workflow's memory when there is
 * one. Readings that failed are left out (the poll reports them).
 */
export function sampleEvents(
	settings: WatchSettings,
	observation: Observation,
	remembered: HealthMemory | undefined,
): HealthEvent[] {
	const value = <T>(reading: Reading<T> | undefined): T | undefined =>
		reading?.ok ? reading.value : undefined;
	const session = value(observation.session);
	const webhook = value(observation.webhook);
	const usage = value(observation.usage);
	const events: HealthEvent[] = [];
	for (const picked of SAMPLE_ORDER.filter((event) => settings.events.has(event))) {
		if ((picked === 'disconnected' || picked === 'connected') && session) {
			events.push({
				...sessionEvent(picked, session, remembered?.session, observation.at),
				sample: true,
			});
		}
		if (picked === 'qrCodeNeeded' && session) {
			const event: HealthEvent = {
				event: 'qrCodeNeeded',
				sample: true,
				connected: session.connected,
				status: session.status,
				disconnectedSince:
					remembered?.session && !remembered.session.connected ? remembered.session.since : null,
				qrNumber: session.qrCode === undefined ? 0 : 1,
				qrLimit: settings.qrCodesPerDisconnection,
			};
			if (session.qrCode !== undefined && !session.connected) event.qrCode = session.qrCode;
			if (session.hint !== undefined) event.message = session.hint;
			events.push(event);
		}
		if (picked === 'webhookChanged' && webhook) {
			const now = webhookShape(webhook.url, remembered?.salt ?? '');
			events.push({
				event: 'webhookChanged',
				sample: true,
				previousOrigin: remembered?.webhook ? remembered.webhook.origin : null,
				currentOrigin: now.origin,
				changed: null,
				since: observation.at,
				previousSince: remembered?.webhook?.since ?? null,
			});
		}
		if (picked === 'usageLimit' && usage) {
			const level = usageLevel(usage, settings.usageRule);
			events.push({
				event: level === 'blocked' ? 'usageBlocked' : 'usageLow',
				sample: true,
				...usageFields(usage, settings.usageRule),
				level,
				previousLevel: remembered?.usage?.level ?? null,
				since: observation.at,
				previousSince: remembered?.usage?.since ?? null,
			});
		}
		if (picked === 'gatewayUnreachable') {
			events.push({
				event: 'gatewayUnreachable',
				sample: true,
				failedPolls: 0,
				since: null,
				previousSince: remembered?.reach?.since ?? null,
				error: null,
			});
		}
	}
	return events;
}
