import { createHash } from 'crypto';
import { deepCopy } from 'n8n-workflow';

import { readAccountAnswer } from '../shared/gatewayAccount';
import { readSessionAnswer } from '../shared/gatewaySession';
import { readUsageLimit, type UsageLimit } from '../shared/usageLimit';
import type { TriggerSettings as Settings, UsageRule, WatchedEvent } from './parameters';

export type Part = 'session' | 'webhook' | 'usage';
export type Answers = Partial<
	Record<Part, { ok: true; value: unknown } | { ok: false; error: Error; noAnswer: boolean }>
>;

type Level = 'ok' | 'low' | 'blocked';
/** Salted hashes: the memory never holds a webhook's path or secret. */
type Webhook = { origin: string | null; path: string; rest: string };
type Session = {
	connected: boolean;
	status: string;
	hint?: string;
	qr?: { code: string; sha: string };
};
type Usage = { level: Level; [count: string]: unknown };

export interface Snapshot {
	at: string;
	session?: Session;
	webhook?: Webhook;
	usage?: Usage;
	/** Polls in a row, this one included, that got no answer at all. */
	outage?: { polls: number; since: string; error: string };
	failures: Array<{ part: Part; error: Error; noAnswer: boolean }>;
}

/** Static data: no secret, QR code or webhook path. */
export interface Memory {
	v: 1;
	/** A hash of the base URL and client id: another account starts over. */
	account: string;
	salt: string;
	/** `qr`: the codes sent in this disconnection. */
	session?: { connected: boolean; status: string; since: string; qr?: SentQr };
	webhook?: Webhook & { since: string };
	/** `rule`: the threshold the level was read with; another one starts over. */
	usage?: { rule: string; level: Level; since: string };
	reach?: { down: boolean; since: string };
}
type SentQr = { count: number; lastAt: string; sha: string };

export type HealthEvent = { event: string; qrCode?: string; [field: string]: unknown };

const PART_EVENTS: Record<Part, WatchedEvent[]> = {
	session: ['disconnected', 'connected', 'qrCodeNeeded'],
	webhook: ['webhookChanged'],
	usage: ['usageLimit'],
};
export const watches = (settings: Settings, part: Part) =>
	PART_EVENTS[part].some((event) => settings.events.has(event));

export function readMemory(stored: unknown, account: string): Memory | undefined {
	const memory = stored as Partial<Memory> | undefined;
	if (memory?.v !== 1 || memory.account !== account || typeof memory.salt !== 'string')
		return undefined;
	return deepCopy(memory as Memory);
}

export const shortHash = (...parts: string[]) =>
	createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 24);

/** A server's words of any length are cut, so that items and the memory stay small. */
const bounded = (text: string, length: number) =>
	text.length <= length ? text : `${text.slice(0, length - 1).replace(/[\uD800-\uDBFF]$/, '')}…`;

export function readSnapshot(
	answers: Answers,
	at: string,
	salt: string,
	settings: Settings,
	outageBefore?: Snapshot['outage'],
): Snapshot {
	const snapshot: Snapshot = { at, failures: [] };
	const read = <T>(part: Part, reader: (answer: unknown) => T): T | undefined => {
		const answer = answers[part];
		try {
			if (answer?.ok) return reader(answer.value);
			if (answer) snapshot.failures.push({ part, error: answer.error, noAnswer: answer.noAnswer });
		} catch (error) {
			snapshot.failures.push({ part, error: error as Error, noAnswer: false });
		}
		return undefined;
	};
	snapshot.session = read('session', (answer): Session => {
		const { stated, connected, status, hint, qrCode } = readSessionAnswer(answer);
		const message = hint === undefined ? undefined : bounded(hint, 300);
		if (!stated)
			throw new Error(
				`Get Status answered without a status or a QR code${message ? `: "${message}"` : ''}`,
			);
		const qr = qrCode === undefined ? undefined : { code: qrCode, sha: shortHash('qr', qrCode) };
		return { connected, status: bounded(status, 64), hint: message, qr };
	});
	snapshot.webhook = read('webhook', (answer) => {
		const url = readAccountAnswer(answer).webhookUrl;
		if (url === undefined)
			throw new Error(
				'Check Account answered without the webhook, so this gateway cannot tell when it changes',
			);
		return webhookOf(url, salt);
	});
	snapshot.usage = read('usage', (answer) => usageOf(readUsageLimit(answer), settings.usageRule));
	const last = snapshot.failures.at(-1);
	const unanswered = snapshot.failures.filter((failure) => failure.noAnswer).length;
	if (last && unanswered === Object.keys(answers).length) {
		const { polls = 0, since = at } = outageBefore ?? {};
		snapshot.outage = { polls: polls + 1, since, error: last.error.message };
	}
	return snapshot;
}

function webhookOf(url: string | null, salt: string): Webhook {
	const text = url?.trim() ?? '';
	if (text === '') return { origin: null, path: '', rest: '' };
	try {
		const { origin, pathname, search, hash, username, password } = new URL(text);
		return {
			origin: origin === 'null' ? null : origin,
			path: shortHash(salt, 'path', pathname),
			rest: shortHash(salt, 'rest', search, hash, username, password),
		};
	} catch {
		return { origin: null, path: shortHash(salt, 'text', text), rest: '' };
	}
}

function webhookChange(before: Webhook, now: Webhook) {
	if (before.origin === now.origin && before.path === now.path && before.rest === now.rest)
		return undefined;
	if (before.path === '') return 'set';
	if (now.path === '') return 'cleared';
	if (before.origin !== now.origin) return 'origin';
	return before.path !== now.path ? 'path' : 'query';
}

function usageOf({ blocked, remaining, limit, used }: UsageLimit, rule: UsageRule): Usage {
	const left = remaining !== null && limit !== null && limit > 0 ? remaining / limit : null;
	const below =
		rule.kind === 'count'
			? remaining !== null && remaining < rule.below
			: rule.kind === 'percent' && left !== null && left * 100 < rule.below;
	const percentLeft = left === null ? null : Math.round(left * 10_000) / 100;
	const threshold = `below ${rule.below}${rule.kind === 'percent' ? '%' : ''} left`;
	return {
		...{ blocked, remaining, limit, used, percentLeft },
		threshold: rule.kind === 'blocked' ? 'blocked' : threshold,
		level: blocked ? 'blocked' : below ? 'low' : 'ok',
	};
}

const ruleKey = ({ kind, below }: UsageRule) => (kind === 'blocked' ? kind : `${kind}:${below}`);
const usageBefore = (previous: Memory, settings: Settings) =>
	previous.usage?.rule === ruleKey(settings.usageRule) ? previous.usage : undefined;
const SEVERITY: Record<Level, number> = { ok: 0, low: 1, blocked: 2 };

const ongoing = ({ session: before }: Memory, now: Session) =>
	before?.connected === false && !now.connected ? before : undefined;

// The events

type Rule<T> = (previous: Memory, current: Snapshot, settings: Settings) => T;

interface EventDefinition {
	name: WatchedEvent;
	displayName: string;
	subtitle?: string;
	description: string;
	fires: Rule<boolean>;
	item: Rule<HealthEvent | undefined>;
	/** Fetch Test Event: what a sample shows instead, being no change. */
	sample?: Rule<object>;
}

const withHint = (now: Session) => (now.hint === undefined ? {} : { message: now.hint });
const sessionItem =
	(event: WatchedEvent): Rule<HealthEvent | undefined> =>
	({ session: before }, { at, session: now }) =>
		now && {
			event,
			connected: now.connected,
			status: now.status,
			previousStatus: before?.status ?? null,
			since: at,
			previousSince: before?.since ?? null,
			...withHint(now),
		};

/** In the order of the items of one poll. */
export const EVENTS: EventDefinition[] = [
	{
		name: 'disconnected',
		displayName: 'Disconnected',
		description:
			'The WhatsApp session stopped being connected (the phone logged out, the session ended, the gateway is restarting it)',
		fires: ({ session: before }, { session: now }, settings) =>
			now?.connected === false && (before ? before.connected : settings.reportProblemsAtStart),
		item: sessionItem('disconnected'),
	},
	{
		name: 'connected',
		displayName: 'Connected Again',
		description: 'The WhatsApp session is connected again after it was not',
		// Never at the first poll: there is nothing to be connected again from.
		fires: ({ session: before }, { session: now }) =>
			!!now?.connected && before?.connected === false,
		item: sessionItem('connected'),
	},
	{
		name: 'qrCodeNeeded',
		displayName: 'QR Code Needed',
		description:
			'The gateway shows a QR code to scan: the item carries it as a PNG image, again when the code changes (bounded)',
		// A new code fires within the bound: N per disconnection, M minutes apart.
		fires: (previous, { at, session: now }, settings) => {
			if (!now?.qr || now.connected) return false;
			if (!ongoing(previous, now)) return !!previous.session || settings.reportProblemsAtStart;
			const sent = ongoing(previous, now)?.qr;
			if (!sent) return true;
			if (sent.sha === now.qr.sha || sent.count >= settings.qrCodesPerDisconnection) return false;
			const minutes = (Date.parse(at) - Date.parse(sent.lastAt)) / 60_000;
			return sent.count === 0 || minutes >= settings.minutesBetweenQrCodes;
		},
		item: (previous, { at, session: now }, settings) =>
			now && {
				event: 'qrCodeNeeded',
				connected: now.connected,
				status: now.status,
				disconnectedSince: ongoing(previous, now)?.since ?? at,
				qrNumber: (ongoing(previous, now)?.qr?.count ?? 0) + 1,
				qrLimit: settings.qrCodesPerDisconnection,
				...(now.qr && !now.connected ? { qrCode: now.qr.code } : {}),
				...withHint(now),
			},
		sample: ({ session: before }, { session: now }) => ({
			disconnectedSince: before?.connected === false ? before.since : null,
			qrNumber: now?.qr ? 1 : 0,
		}),
	},
	{
		name: 'webhookChanged',
		displayName: 'Webhook Changed',
		description:
			'The webhook URL the gateway holds for the account changed (another system or workflow took it over): the item names the old and new origin, never a path or secret',
		fires: ({ webhook: before }, { webhook: now }) =>
			!!before && !!now && !!webhookChange(before, now),
		item: ({ webhook: before }, { at, webhook: now }) =>
			now && {
				event: 'webhookChanged',
				previousOrigin: before?.origin ?? null,
				currentOrigin: now.origin,
				changed: (before && webhookChange(before, now)) ?? null,
				since: at,
				previousSince: before?.since ?? null,
			},
		sample: () => ({ changed: null }),
	},
	{
		name: 'usageLimit',
		displayName: 'Usage Limit Running Out',
		subtitle: 'Usage Limit',
		description:
			'The messages left fall below a percentage or a number you set, or sending is blocked: once per crossing',
		fires: (previous, { usage: now }, settings) => {
			const before = usageBefore(previous, settings);
			if (!now || SEVERITY[now.level] <= SEVERITY[before?.level ?? 'ok']) return false;
			return !!before || settings.reportProblemsAtStart;
		},
		item: (previous, { at, usage: now }, settings) =>
			now && {
				event: now.level === 'blocked' ? 'usageBlocked' : 'usageLow',
				...now,
				previousLevel: usageBefore(previous, settings)?.level ?? null,
				since: at,
				previousSince: usageBefore(previous, settings)?.since ?? null,
			},
		sample: ({ usage: before }) => ({
			previousLevel: before?.level ?? null,
			previousSince: before?.since ?? null,
		}),
	},
	{
		name: 'gatewayUnreachable',
		displayName: 'Gateway Unreachable',
		subtitle: 'Unreachable',
		description: 'The gateway did not answer a number of polls in a row (you set how many)',
		// Once per outage: again only after the gateway answered in between.
		fires: ({ reach: before }, { outage }, settings) =>
			before?.down === false && !!outage && outage.polls >= settings.failedPolls,
		item: ({ reach: before }, { outage }) => ({
			event: 'gatewayUnreachable',
			failedPolls: outage?.polls ?? 0,
			since: outage?.since ?? null,
			previousSince: before?.since ?? null,
			error: outage?.error ?? null,
		}),
	},
];

// `unknownBefore`: a watched part could not be read and has nothing to compare with (poll fails).
export function events(previous: Memory, current: Snapshot, settings: Settings) {
	const fired = EVENTS.filter(
		(event) => settings.events.has(event.name) && event.fires(previous, current, settings),
	);
	const memory = remember(previous, current, settings, new Set(fired.map((event) => event.name)));
	const unknownBefore =
		current.failures.some((failure) => watches(settings, failure.part) && !memory[failure.part]) ||
		(settings.events.has('gatewayUnreachable') && !memory.reach);
	const items = fired.flatMap((event) => event.item(previous, current, settings) ?? []);
	return { items, memory, unknownBefore };
}

export const samples = (previous: Memory, current: Snapshot, settings: Settings) =>
	EVENTS.filter((event) => settings.events.has(event.name)).flatMap((event) => {
		const item = event.item(previous, current, settings);
		return item ? [{ ...item, sample: true, ...event.sample?.(previous, current, settings) }] : [];
	});

/** A part not read keeps its memory; a part no chosen event watches is forgotten. */
function remember(
	previous: Memory,
	{ at, session: now, webhook, usage, outage }: Snapshot,
	settings: Settings,
	fired: ReadonlySet<WatchedEvent>,
): Memory {
	const next: Memory = { v: 1, account: previous.account, salt: previous.salt };
	const before = previous.session;
	if (watches(settings, 'session')) next.session = before;
	if (watches(settings, 'session') && now) {
		// The status word may move on within one state (init → got qr code): no change of its own.
		const same = before?.connected === now.connected ? before : undefined;
		next.session = { connected: now.connected, status: now.status, since: same?.since ?? at };
		if (fired.has('qrCodeNeeded') && now.qr)
			next.session.qr = { count: (same?.qr?.count ?? 0) + 1, lastAt: at, sha: now.qr.sha };
		else if (same?.qr) next.session.qr = same.qr;
		else if (!before && now.qr && !now.connected && settings.events.has('qrCodeNeeded'))
			// A code at the first poll, not reported: known, so that only a new one is news.
			next.session.qr = { count: 0, lastAt: at, sha: now.qr.sha };
	}
	if (watches(settings, 'webhook')) {
		const changed = webhook && (!previous.webhook || webhookChange(previous.webhook, webhook));
		next.webhook = changed ? { ...webhook, since: at } : previous.webhook;
	}
	if (watches(settings, 'usage')) {
		const kept = usageBefore(previous, settings);
		const rule = ruleKey(settings.usageRule);
		next.usage =
			!usage || kept?.level === usage.level ? kept : { rule, level: usage.level, since: at };
	}
	if (settings.events.has('gatewayUnreachable')) {
		const up = previous.reach?.down === false ? previous.reach : { down: false, since: at };
		const down = fired.has('gatewayUnreachable')
			? { down: true, since: outage?.since ?? at }
			: previous.reach;
		next.reach = outage ? down : up;
	}
	return next;
}
