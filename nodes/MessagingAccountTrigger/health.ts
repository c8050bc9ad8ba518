import { createHash } from 'crypto';

import { cutShort } from '../shared/errors';
import { readAccountAnswer, readSessionAnswer } from '../shared/gateway';
import { readUsageLimit } from '../shared/transport';

/** Each event, and the part of the account it watches. */
const PART_OF = {
	disconnected: 'session',
	connected: 'session',
	qrCodeNeeded: 'session',
	webhookChanged: 'webhook',
	usageLimit: 'usage',
	gatewayUnreachable: undefined,
} as const;
export type WatchedEvent = keyof typeof PART_OF;

/** What the table of events reads of the trigger's settings. */
interface Settings {
	events: ReadonlySet<WatchedEvent>;
	usageRule: { kind: 'percent' | 'count' | 'blocked'; below: number };
	failedPolls: number;
	qrCodesPerDisconnection: number;
	minutesBetweenQrCodes: number;
	reportProblemsAtStart: boolean;
}
export type Part = 'session' | 'webhook' | 'usage';
type Level = 'ok' | 'low' | 'blocked';
type Session = { connected: boolean; status: string; hint?: string; qr?: Qr };
type Qr = { code: string; sha: string };
/** Salted hashes: the memory never holds a webhook's path or secret. */
type Webhook = { origin: string | null; path: string; rest: string };
type Usage = { level: Level; [count: string]: unknown };

/** What one poll saw; a part it did not ask for, or could not read, is missing. */
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
	/** As last reported; `qr`: the codes sent in this disconnection; `seen` and `flips`: `flapping`. */
	session?: {
		connected: boolean;
		status: string;
		since: string;
		qr?: SentQr;
		seen?: boolean;
		flips?: string[];
	};
	webhook?: Webhook & { since: string };
	/** `rule`: the threshold the level was read with; another one starts over. */
	usage?: { rule: string; level: Level; since: string };
	reach?: { down: boolean; since: string };
}
type SentQr = { count: number; lastAt: string; sha: string };

export type HealthEvent = { event: string; qrCode?: string; [field: string]: unknown };

export const watches = (settings: Settings, part: Part) =>
	[...settings.events].some((event) => PART_OF[event] === part);

export const shortHash = (...parts: string[]) =>
	createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 24);

// The snapshot's parts, read from the gateway's answers

export function sessionOf(answer: unknown): Session {
	const { stated, connected, status, hint, qrCode } = readSessionAnswer(answer);
	// A server's words of any length are cut, so that items and the memory stay small.
	const message = hint === undefined ? undefined : cutShort(hint, 299);
	if (!stated)
		throw new Error(
			`Get Status answered without a status or a QR code${message ? `: "${message}"` : ''}`,
		);
	const qr = qrCode === undefined ? undefined : { code: qrCode, sha: shortHash('qr', qrCode) };
	return { connected, status: cutShort(status, 63), hint: message, qr };
}

export function webhookOf(answer: unknown, salt: string): Webhook {
	const url = readAccountAnswer(answer).webhookUrl;
	if (url === undefined)
		throw new Error(
			'Check Account answered without the webhook, so this gateway cannot tell when it changes',
		);
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

export function usageOf(answer: unknown, { kind, below }: Settings['usageRule']): Usage {
	const { blocked, remaining, limit, used } = readUsageLimit(answer);
	const left = remaining !== null && limit !== null && limit > 0 ? remaining / limit : null;
	const low =
		kind === 'count'
			? remaining !== null && remaining < below
			: kind === 'percent' && left !== null && left * 100 < below;
	return {
		...{ blocked, remaining, limit, used },
		percentLeft: left === null ? null : Math.round(left * 10_000) / 100,
		threshold: kind === 'blocked' ? kind : `below ${below}${kind === 'percent' ? '%' : ''} left`,
		level: blocked ? 'blocked' : low ? 'low' : 'ok',
	};
}

function webhookChange(before: Webhook, now: Webhook) {
	if (before.origin === now.origin && before.path === now.path && before.rest === now.rest)
		return undefined;
	if (before.path === '') return 'set';
	if (now.path === '') return 'cleared';
	if (before.origin !== now.origin) return 'origin';
	return before.path !== now.path ? 'path' : 'query';
}

// The events: each compares what the memory holds with the snapshot

/** `before.usage` only when it was read with the same threshold. */
type Poll = { before: Memory; now: Snapshot; settings: Settings };

interface EventDefinition {
	name: WatchedEvent;
	displayName: string;
	subtitle?: string;
	description: string;
	fires(poll: Poll): boolean;
	item(poll: Poll): HealthEvent | undefined;
}

const SEVERITY: Record<Level, number> = { ok: 0, low: 1, blocked: 2 };
const withHint = ({ hint }: Session) => (hint === undefined ? {} : { message: hint });
/** The disconnection this poll still sees, if any. */
const ongoing = ({ before, now }: Poll) =>
	before.session?.connected === false && now.session?.connected === false
		? before.session
		: undefined;

const FLAP_WINDOW_MS = 15 * 60_000;

/** The times of the last three changes the polls saw, reported or not. */
const flipsAfter = ({ before: { session: before }, now: { at, session: now } }: Poll) => {
	if (!before || !now || now.connected === (before.seen ?? before.connected)) return before?.flips;
	return [...(before.flips ?? []), at].slice(-3);
};

/** A session that changed three times within a quarter of an hour reports nothing until it settles. */
const flapping = (poll: Poll) => {
	const flips = flipsAfter(poll) ?? [];
	return flips.length === 3 && Date.parse(poll.now.at) - Date.parse(flips[0]) < FLAP_WINDOW_MS;
};

const sessionItem =
	(event: WatchedEvent) =>
	({ before, now: { at, session: now } }: Poll) =>
		now && {
			event,
			connected: now.connected,
			status: now.status,
			previousStatus: before.session?.status ?? null,
			since: at,
			previousSince: before.session?.since ?? null,
			...withHint(now),
		};

/** In the order of the items of one poll. */
export const EVENTS: EventDefinition[] = [
	{
		name: 'disconnected',
		displayName: 'Disconnected',
		description:
			'The WhatsApp session stopped being connected (the phone logged out, the session ended, the gateway is restarting it)',
		fires: (poll) =>
			poll.now.session?.connected === false &&
			!flapping(poll) &&
			(poll.before.session ? poll.before.session.connected : poll.settings.reportProblemsAtStart),
		item: sessionItem('disconnected'),
	},
	{
		name: 'connected',
		displayName: 'Connected Again',
		description: 'The WhatsApp session is connected again after it was not',
		// Never at the first poll: there is nothing to be connected again from.
		fires: (poll) =>
			!!poll.now.session?.connected && poll.before.session?.connected === false && !flapping(poll),
		item: sessionItem('connected'),
	},
	{
		name: 'qrCodeNeeded',
		displayName: 'QR Code Needed',
		description:
			'The gateway shows a QR code to scan: the item carries it as a PNG image, again when the code changes (bounded)',
		// A new code fires within the bound: N per disconnection, M minutes apart.
		fires: (poll) => {
			const { before, now, settings } = poll;
			if (!now.session?.qr || now.session.connected || flapping(poll)) return false;
			if (!ongoing(poll)) return !!before.session || settings.reportProblemsAtStart;
			const sent = ongoing(poll)?.qr;
			if (!sent) return true;
			if (sent.sha === now.session.qr.sha || sent.count >= settings.qrCodesPerDisconnection)
				return false;
			const minutes = (Date.parse(now.at) - Date.parse(sent.lastAt)) / 60_000;
			return sent.count === 0 || minutes >= settings.minutesBetweenQrCodes;
		},
		item: (poll) => {
			const { at, session: now } = poll.now;
			return (
				now && {
					event: 'qrCodeNeeded',
					connected: now.connected,
					status: now.status,
					disconnectedSince: ongoing(poll)?.since ?? at,
					qrNumber: (ongoing(poll)?.qr?.count ?? 0) + 1,
					qrLimit: poll.settings.qrCodesPerDisconnection,
					qrCode: now.connected ? undefined : now.qr?.code,
					...withHint(now),
				}
			);
		},
	},
	{
		name: 'webhookChanged',
		displayName: 'Webhook Changed',
		description:
			'The webhook URL the gateway holds for the account changed (another system or workflow took it over): the item names the old and new origin, never a path or secret',
		fires: ({ before, now }) =>
			!!before.webhook && !!now.webhook && !!webhookChange(before.webhook, now.webhook),
		item: ({ before: { webhook: before }, now: { at, webhook: now } }) =>
			now && {
				event: 'webhookChanged',
				previousOrigin: before?.origin ?? null,
				currentOrigin: now.origin,
				changed: (before && webhookChange(before, now)) ?? null,
				since: at,
				previousSince: before?.since ?? null,
			},
	},
	{
		name: 'usageLimit',
		displayName: 'Usage Limit Running Out',
		subtitle: 'Usage Limit',
		description:
			'The messages left fall below a percentage or a number you set, or sending is blocked: once per crossing',
		fires: ({ before: { usage: before }, now: { usage: now }, settings }) =>
			!!now &&
			SEVERITY[now.level] > SEVERITY[before?.level ?? 'ok'] &&
			(!!before || settings.reportProblemsAtStart),
		item: ({ before: { usage: before }, now: { at, usage: now } }) =>
			now && {
				event: now.level === 'blocked' ? 'usageBlocked' : 'usageLow',
				...now,
				previousLevel: before?.level ?? null,
				since: at,
				previousSince: before?.since ?? null,
			},
	},
	{
		name: 'gatewayUnreachable',
		displayName: 'Gateway Unreachable',
		subtitle: 'Unreachable',
		description: 'The gateway did not answer a number of polls in a row (you set how many)',
		// Once per outage: again only after the gateway answered in between.
		fires: ({ before, now: { outage }, settings }) =>
			before.reach?.down === false && !!outage && outage.polls >= settings.failedPolls,
		item: ({ before, now: { outage } }) => ({
			event: 'gatewayUnreachable',
			failedPolls: outage?.polls ?? 0,
			since: outage?.since ?? null,
			previousSince: before.reach?.since ?? null,
			error: outage?.error ?? null,
		}),
	},
];

const ruleOf = ({ kind, below }: Settings['usageRule']) =>
	kind === 'blocked' ? kind : `${kind}:${below}`;
const comparison = (memory: Memory, now: Snapshot, settings: Settings): Poll => {
	const usage = memory.usage?.rule === ruleOf(settings.usageRule) ? memory.usage : undefined;
	return { before: { ...memory, usage }, now, settings };
};

/** The items of the events that fire, the memory after them, and whether the poll must fail. */
export function decide(saved: Memory, now: Snapshot, settings: Settings) {
	const compared = comparison(saved, now, settings);
	const fired = EVENTS.filter((event) => settings.events.has(event.name) && event.fires(compared));
	const memory = remember(compared, new Set(fired.map((event) => event.name)));
	// A watched part could not be read and has nothing to compare with.
	const unknownBefore =
		now.failures.some((failure) => watches(settings, failure.part) && !memory[failure.part]) ||
		(settings.events.has('gatewayUnreachable') && !memory.reach);
	return { items: fired.flatMap((event) => event.item(compared) ?? []), memory, unknownBefore };
}

/** Fetch Test Event: the item each chosen event would give now, fired or not. */
export const samples = (memory: Memory, now: Snapshot, settings: Settings) =>
	EVENTS.filter((event) => settings.events.has(event.name)).flatMap((event) => {
		const item = event.item(comparison(memory, now, settings));
		return item ? [{ ...item, sample: true }] : [];
	});

/** A part not read keeps its memory; a part no chosen event watches is forgotten. */
function remember(poll: Poll, fired: ReadonlySet<WatchedEvent>): Memory {
	const { before, now, settings } = poll;
	const { at, session, webhook, usage, outage } = now;
	const next: Memory = { v: 1, account: before.account, salt: before.salt };
	if (watches(settings, 'session')) next.session = before.session;
	const flips = flipsAfter(poll);
	if (watches(settings, 'session') && session && flapping(poll)) {
		const reported = before.session as NonNullable<Memory['session']>;
		const seen = session.connected === reported.connected ? undefined : session.connected;
		next.session = { ...reported, seen, flips };
	} else if (watches(settings, 'session') && session) {
		// The status word may move on within one state (init → got qr code): no change of its own.
		const same = before.session?.connected === session.connected ? before.session : undefined;
		const { connected, status, qr } = session;
		next.session = { connected, status, since: same?.since ?? at, ...(flips ? { flips } : {}) };
		if (fired.has('qrCodeNeeded') && qr)
			next.session.qr = { count: (same?.qr?.count ?? 0) + 1, lastAt: at, sha: qr.sha };
		else if (same?.qr) next.session.qr = same.qr;
		// A code not reported (at the first poll): known, so that only a new one is news.
		else if (qr && !connected && settings.events.has('qrCodeNeeded'))
			next.session.qr = { count: 0, lastAt: at, sha: qr.sha };
	}
	if (watches(settings, 'webhook')) {
		const changed = webhook && (!before.webhook || webhookChange(before.webhook, webhook));
		next.webhook = changed ? { ...webhook, since: at } : before.webhook;
	}
	if (watches(settings, 'usage')) {
		const rule = ruleOf(settings.usageRule);
		const same = !usage || before.usage?.level === usage.level;
		next.usage = same ? before.usage : { rule, level: usage.level, since: at };
	}
	if (settings.events.has('gatewayUnreachable')) {
		const up = before.reach?.down === false ? before.reach : { down: false, since: at };
		const down = fired.has('gatewayUnreachable')
			? { down: true, since: outage?.since ?? at }
			: before.reach;
		next.reach = outage ? down : up;
	}
	return next;
}
