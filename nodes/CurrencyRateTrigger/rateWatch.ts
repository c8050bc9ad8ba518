import {
	MAX_CURRENCY_CODE_LENGTH,
	type CurrencyQuote,
	type KnownRates,
	type RateNumberFormat,
	type RateTable,
	type RateType,
} from '../shared/rates/rateTable';

// Pure: no I/O, no clock, so that every rule is testable.

export type WatchMode = 'change' | 'threshold' | 'publication';
export type CrossingDirection = 'above' | 'below' | 'either';

export interface WatchSettings {
	readonly provider: string;
	/** Upper-case codes; empty = every currency of the table. */
	readonly currencies: readonly string[];
	readonly mode: WatchMode;
	/** The rate compared (change and threshold); publication looks at all three. */
	readonly field: RateType;
	/** change: fire when the rate moved by MORE than this many percent since the last event. */
	readonly changePercent: number;
	/** threshold: the level, in the base currency per unit. */
	readonly threshold: number;
	readonly direction: CrossingDirection;
}

/** Short keys: it is stored with the workflow. */
interface RememberedRate {
	/** The last values seen: buy, sell, average (null when the provider gave none). */
	b: number | null;
	s: number | null;
	a: number | null;
	at: string;
	/** change: the value at the last event (or the baseline) and when it was seen. */
	ref?: number;
	refAt?: string;
	/** threshold: on which side of the threshold the rate was last seen. */
	side?: 'above' | 'below';
	/** A reading orders of magnitude off the last one, not believed yet: how many polls in a row, and the value. */
	j?: number;
	jv?: number;
}

export interface WatchMemory {
	/** The settings the memory belongs to: other settings start over from a new baseline. */
	settings: string;
	provider?: string;
	format?: RateNumberFormat;
	rates: Record<string, RememberedRate>;
}

type RateEventKind = 'moved' | 'crossedAbove' | 'crossedBelow' | 'published' | 'sample';

export interface RateEvent {
	event: RateEventKind;
	provider: string;
	currency: string;
	field: RateType;
	previousValue: number | null;
	currentValue: number | null;
	change: number | null;
	changePercent: number | null;
	threshold?: number;
	previousSeenAt: string | null;
	currentSeenAt: string;
	buy: number | null;
	sell: number | null;
	average: number | null;
	unit: number;
}

export const MAX_WATCHED_CURRENCIES = 64;
/** A currency missing from the answers is remembered this long, so a move across the gap fires. */
const MISSING_KEPT_MS = 30 * 86_400_000;
/** A reading this many times off the last one (either way) is not believed at once. */
const IMPLAUSIBLE_JUMP = 10;
/** ...until this many polls in a row agree on it: then it is the new baseline (no event). */
const POLLS_TO_BELIEVE_A_JUMP = 3;

const FIELD_KEY: Record<RateType, 'b' | 's' | 'a'> = { buy: 'b', sell: 's', average: 'a' };

function settingsKey(settings: WatchSettings): string {
	const { provider, currencies, mode, field, changePercent, threshold, direction } = settings;
	const shape =
		mode === 'change'
			? [field, changePercent]
			: mode === 'threshold'
				? [field, threshold, direction]
				: [];
	return JSON.stringify([provider, [...currencies].sort(), mode, ...shape]);
}

export function readMemory(value: unknown): WatchMemory | undefined {
	if (!value || typeof value !== 'object') return undefined;
	const memory = value as Partial<WatchMemory>;
	if (typeof memory.settings !== 'string' || !memory.rates || typeof memory.rates !== 'object')
		return undefined;
	const rates: Record<string, RememberedRate> = {};
	for (const [code, rate] of Object.entries(memory.rates).slice(0, MAX_WATCHED_CURRENCIES)) {
		if (code.length <= MAX_CURRENCY_CODE_LENGTH && rate && typeof rate === 'object')
			rates[code] = rate;
	}
	return {
		settings: memory.settings,
		provider: typeof memory.provider === 'string' ? memory.provider : undefined,
		format: memory.format === 'point' || memory.format === 'comma' ? memory.format : undefined,
		rates,
	};
}

export function knownRates(settings: WatchSettings, memory: WatchMemory | undefined): KnownRates {
	if (!memory || (memory.provider ?? settingsProvider(memory.settings)) !== settings.provider)
		return {};
	const quotes = new Map(
		Object.entries(memory.rates).map(([code, rate]) => [
			code,
			{ buy: rate.b, sell: rate.s, average: rate.a },
		]),
	);
	return { format: memory.format, quotes };
}

function settingsProvider(key: string): string | undefined {
	try {
		const parsed = JSON.parse(key) as unknown;
		return Array.isArray(parsed) && typeof parsed[0] === 'string' ? parsed[0] : undefined;
	} catch {
		return undefined;
	}
}

function watchedCodes(settings: WatchSettings, table: RateTable): string[] {
	const codes =
		settings.currencies.length > 0
			? table.codes.filter((code) => settings.currencies.includes(code))
			: table.codes;
	return codes.slice(0, MAX_WATCHED_CURRENCIES);
}

export interface PollDecision {
	events: RateEvent[];
	memory: WatchMemory;
	baseline: boolean;
	// A threshold side changed without an event: n8n saves static data only when a poll returns
	// something, and a restart that lost the side would miss the next crossing.
	mustSave: boolean;
}

// A currency fires at most once per move: its reference moves to the value that fired. A reading
// 10 or more times off the last one fires and moves nothing until three polls agree; then it is the
// new baseline, still without an event.
export function decide(
	settings: WatchSettings,
	table: RateTable,
	previous: WatchMemory | undefined,
	fireOnBaseline: boolean,
): PollDecision {
	const key = settingsKey(settings);
	const known = previous && previous.settings === key ? previous : undefined;
	const memory: WatchMemory = {
		settings: key,
		provider: settings.provider,
		format: table.format,
		rates: {},
	};
	const events: RateEvent[] = [];
	const rule = MODE_RULES[settings.mode];
	let mustSave = false;

	for (const code of watchedCodes(settings, table)) {
		const quote = table.quotes.get(code) as CurrencyQuote;
		const seen: SeenRate = {
			settings,
			code,
			quote,
			current: quote[settings.field],
			seenAt: table.fetchedAt,
		};
		const before = known?.rates[code];
		const jump = before ? implausibleJump(seen, before) : undefined;
		const { next, event } = jump
			? jump
			: before
				? rule(seen, before)
				: { next: baseline(seen), event: undefined };
		// Baseline: fire only when asked, as a "sample" of the current rates.
		if (!before && fireOnBaseline && !known) events.push(eventOf(seen, 'sample', null, null));
		if (event) events.push(event);
		else if (before && next.side !== before.side) mustSave = true;
		memory.rates[code] = next;
	}
	for (const [code, before] of Object.entries(known?.rates ?? {})) {
		if (Object.keys(memory.rates).length >= MAX_WATCHED_CURRENCIES) break;
		if (code in memory.rates) continue;
		if (settings.currencies.length > 0 && !settings.currencies.includes(code)) continue;
		const seenAtMs = Date.parse(before.at);
		if (!(table.fetchedAtMs - seenAtMs < MISSING_KEPT_MS)) continue;
		memory.rates[code] = before;
	}
	return { events, memory, baseline: !known, mustSave };
}

function implausibleJump(
	seen: SeenRate,
	before: RememberedRate,
): { next: RememberedRate; event?: RateEvent } | undefined {
	const last = before[FIELD_KEY[seen.settings.field]];
	const current = seen.current;
	if (current === null || last === null || last === undefined) return undefined;
	if (withinFactor(current, last, IMPLAUSIBLE_JUMP)) return undefined;
	const polls =
		before.jv !== undefined && withinFactor(current, before.jv, 2) ? (before.j ?? 0) + 1 : 1;
	if (polls >= POLLS_TO_BELIEVE_A_JUMP) return { next: baseline(seen) };
	return { next: { ...before, j: polls, jv: current } };
}

function withinFactor(value: number, reference: number, factor: number): boolean {
	return value > 0 && reference > 0 && value / reference < factor && reference / value < factor;
}

interface SeenRate {
	settings: WatchSettings;
	code: string;
	quote: CurrencyQuote;
	current: number | null;
	seenAt: string;
}

type ModeRule = (
	seen: SeenRate,
	before: RememberedRate,
) => { next: RememberedRate; event?: RateEvent };

const MODE_RULES: Record<WatchMode, ModeRule> = {
	change: changeRule,
	threshold: thresholdRule,
	publication: publicationRule,
};

function baseline(seen: SeenRate): RememberedRate {
	const { settings, current, seenAt } = seen;
	const next = remembered(seen);
	if (settings.mode === 'change' && current !== null)
		Object.assign(next, { ref: current, refAt: seenAt });
	if (settings.mode === 'threshold' && current !== null)
		next.side = sideOf(current, settings.threshold);
	return next;
}

function changeRule(
	seen: SeenRate,
	before: RememberedRate,
): { next: RememberedRate; event?: RateEvent } {
	const { settings, current, seenAt } = seen;
	const next = remembered(seen);
	const ref = before.ref ?? null;
	next.ref = ref ?? current ?? undefined;
	next.refAt = ref !== null ? before.refAt : seenAt;
	const moved =
		ref !== null &&
		current !== null &&
		(Math.abs(current - ref) / ref) * 100 > settings.changePercent;
	if (!moved) return { next };
	next.ref = current;
	next.refAt = seenAt;
	return { next, event: eventOf(seen, 'moved', ref, before.refAt ?? before.at) };
}

function thresholdRule(
	seen: SeenRate,
	before: RememberedRate,
): { next: RememberedRate; event?: RateEvent } {
	const { settings, current } = seen;
	const next = remembered(seen);
	next.side = before.side;
	if (current === null) return { next };
	const side = sideOf(current, settings.threshold) ?? before.side;
	next.side = side;
	const crossed = before.side !== undefined && side !== undefined && side !== before.side;
	if (!crossed || (settings.direction !== 'either' && settings.direction !== side)) return { next };
	return {
		next,
		event: eventOf(
			seen,
			side === 'above' ? 'crossedAbove' : 'crossedBelow',
			before[FIELD_KEY[settings.field]],
			before.at,
		),
	};
}

function publicationRule(
	seen: SeenRate,
	before: RememberedRate,
): { next: RememberedRate; event?: RateEvent } {
	const { settings, quote } = seen;
	const next = remembered(seen);
	if (before.b === quote.buy && before.s === quote.sell && before.a === quote.average)
		return { next };
	return { next, event: eventOf(seen, 'published', before[FIELD_KEY[settings.field]], before.at) };
}

function remembered({ quote, seenAt }: SeenRate): RememberedRate {
	return { b: quote.buy, s: quote.sell, a: quote.average, at: seenAt };
}

function eventOf(
	seen: SeenRate,
	kind: RateEventKind,
	previousValue: number | null,
	previousSeenAt: string | null,
): RateEvent {
	return rateEvent(
		seen.settings,
		seen.code,
		seen.quote,
		kind,
		previousValue,
		seen.current,
		previousSeenAt,
		seen.seenAt,
	);
}

export function sampleEvents(
	settings: WatchSettings,
	table: RateTable,
	memory: WatchMemory | undefined,
): RateEvent[] {
	const known = memory && memory.settings === settingsKey(settings) ? memory : undefined;
	return watchedCodes(settings, table).map((code) => {
		const quote = table.quotes.get(code) as CurrencyQuote;
		const before = known?.rates[code];
		const previous = before
			? settings.mode === 'change'
				? (before.ref ?? null)
				: before[FIELD_KEY[settings.field]]
			: null;
		const previousAt = before
			? settings.mode === 'change'
				? (before.refAt ?? before.at)
				: before.at
			: null;
		return rateEvent(
			settings,
			code,
			quote,
			'sample',
			previous,
			quote[settings.field],
			previousAt,
			table.fetchedAt,
		);
	});
}

function sideOf(value: number, threshold: number): 'above' | 'below' | undefined {
	return value > threshold ? 'above' : value < threshold ? 'below' : undefined;
}

function rateEvent(
	settings: WatchSettings,
	currency: string,
	quote: CurrencyQuote,
	event: RateEventKind,
	previousValue: number | null,
	currentValue: number | null,
	previousSeenAt: string | null,
	currentSeenAt: string,
): RateEvent {
	const change =
		previousValue !== null && currentValue !== null ? round(currentValue - previousValue, 6) : null;
	const result: RateEvent = {
		event,
		provider: settings.provider,
		currency,
		field: settings.field,
		previousValue,
		currentValue,
		change,
		changePercent:
			change !== null && previousValue ? round((change / previousValue) * 100, 4) : null,
		previousSeenAt,
		currentSeenAt,
		buy: quote.buy,
		sell: quote.sell,
		average: quote.average,
		unit: quote.unit,
	};
	if (settings.mode === 'threshold') result.threshold = settings.threshold;
	return result;
}

function round(value: number, places: number): number {
	const factor = 10 ** places;
	const rounded = Math.round(value * factor) / factor;
	return rounded === 0 ? 0 : rounded;
}
