import type { CurrencyQuote, RateTable, RateType } from '../shared/rates/rateTable';
import { MAX_WATCHED_CURRENCIES, type WatchMode, type WatchSettings } from './parameters';

// Which currencies fire: no I/O and no clock, so that every rule is testable.

/** Stored with the workflow, hence the short keys: the last buy, sell and average seen; for moves
 * the reference (the value at the last event or the baseline), for thresholds the side last seen. */
interface RememberedRate {
	b: number | null;
	s: number | null;
	a: number | null;
	at: string;
	ref?: number;
	refAt?: string;
	side?: 'above' | 'below';
}

/** `settings`: other settings start over from a new baseline. */
interface WatchMemory {
	settings: string;
	rates: Record<string, RememberedRate>;
}

export type RateEvent = ReturnType<typeof eventOf>;

/** A currency missing from the answers is remembered this long, so a move across the gap fires. */
const MISSING_KEPT_MS = 30 * 86_400_000;

const FIELD_KEY: Record<RateType, 'b' | 's' | 'a'> = { buy: 'b', sell: 's', average: 'a' };

function settingsKey(settings: WatchSettings): string {
	const { provider, currencies, mode, field, changePercent, threshold, direction } = settings;
	const key: unknown[] = [provider, [...currencies].sort(), mode];
	if (mode === 'change') key.push(field, changePercent);
	if (mode === 'threshold') key.push(field, threshold, direction);
	return JSON.stringify(key);
}

/** The saved memory when it belongs to these settings. */
export function readMemory(value: unknown, settings: WatchSettings): WatchMemory | undefined {
	const memory = value as Partial<WatchMemory> | undefined;
	if (memory?.settings !== settingsKey(settings) || typeof memory.rates !== 'object') return;
	const entries = Object.entries(memory.rates ?? {}).slice(0, MAX_WATCHED_CURRENCIES);
	const rates = entries.filter(([, rate]) => rate && typeof rate === 'object');
	return { settings: memory.settings, rates: Object.fromEntries(rates) };
}

type SeenRate = ReturnType<typeof seenRates>[number];

type Step = { next: RememberedRate; event?: RateEvent };

function seenRates(settings: WatchSettings, table: RateTable) {
	const { currencies, field } = settings;
	const codes = [...table.quotes.keys()].filter(
		(code) => currencies.length === 0 || currencies.includes(code),
	);
	return codes.slice(0, MAX_WATCHED_CURRENCIES).map((code) => {
		const quote = table.quotes.get(code) as CurrencyQuote;
		return { settings, code, quote, current: quote[field], seenAt: table.fetchedAt };
	});
}

// A currency fires at most once per move: its reference moves to the value that fired. `mustSave`:
// a threshold side changed without an event, and n8n saves static data only when a poll returns
// something; a restart that lost the side would miss the next crossing.
export function decide(settings: WatchSettings, table: RateTable, known?: WatchMemory) {
	const memory: WatchMemory = { settings: settingsKey(settings), rates: {} };
	const events: RateEvent[] = [];
	let mustSave = false;
	for (const seen of seenRates(settings, table)) {
		const before = known?.rates[seen.code];
		if (!before) {
			memory.rates[seen.code] = baseline(seen);
			if (settings.fireOnFirstPoll && !known) events.push(eventOf(seen, 'sample'));
			continue;
		}
		const { next, event } = MODE_RULES[settings.mode](seen, before);
		if (event) events.push(event);
		else if (next.side !== before.side) mustSave = true;
		memory.rates[seen.code] = next;
	}
	let kept = Object.keys(memory.rates).length;
	for (const [code, before] of Object.entries(known?.rates ?? {})) {
		if (kept >= MAX_WATCHED_CURRENCIES) break;
		const recent = table.fetchedAtMs - Date.parse(before.at) < MISSING_KEPT_MS;
		if (code in memory.rates || !recent) continue;
		memory.rates[code] = before;
		kept += 1;
	}
	return { events, memory, mustSave };
}

/** Fetch Test Event: the current rates, against the memory when there is one. */
export const sampleEvents = (settings: WatchSettings, table: RateTable, known?: WatchMemory) =>
	seenRates(settings, table).map((seen) => eventOf(seen, 'sample', known?.rates[seen.code]));

const MODE_RULES: Record<WatchMode, (seen: SeenRate, before: RememberedRate) => Step> = {
	change(seen, before) {
		const { settings, current, seenAt } = seen;
		const ref = before.ref ?? null;
		const next = { ...remembered(seen), ref: ref ?? current ?? undefined, refAt: before.refAt };
		if (ref === null) next.refAt = seenAt;
		if (ref === null || current === null) return { next };
		if (!((Math.abs(current - ref) / ref) * 100 > settings.changePercent)) return { next };
		return {
			next: { ...next, ref: current, refAt: seenAt },
			event: eventOf(seen, 'moved', before),
		};
	},
	threshold(seen, before) {
		const { settings, current } = seen;
		const side = (current !== null && sideOf(current, settings.threshold)) || before.side;
		const next = { ...remembered(seen), side };
		const crossed = before.side !== undefined && side !== undefined && side !== before.side;
		if (!crossed || (settings.direction !== 'either' && settings.direction !== side))
			return { next };
		const event = eventOf(seen, side === 'above' ? 'crossedAbove' : 'crossedBelow', before);
		return { next, event };
	},
	publication(seen, before) {
		const { quote } = seen;
		const same = before.b === quote.buy && before.s === quote.sell && before.a === quote.average;
		return { next: remembered(seen), event: same ? undefined : eventOf(seen, 'published', before) };
	},
};

function baseline(seen: SeenRate): RememberedRate {
	const { settings, current, seenAt } = seen;
	const next = remembered(seen);
	if (current === null) return next;
	if (settings.mode === 'change') return { ...next, ref: current, refAt: seenAt };
	if (settings.mode === 'threshold') return { ...next, side: sideOf(current, settings.threshold) };
	return next;
}

const remembered = ({ quote, seenAt }: SeenRate): RememberedRate => ({
	b: quote.buy,
	s: quote.sell,
	a: quote.average,
	at: seenAt,
});

const sideOf = (value: number, threshold: number) =>
	value > threshold ? 'above' : value < threshold ? 'below' : undefined;

/** Against `before`: for moves its reference, else the value of the poll before. */
function eventOf(
	{ settings, code, quote, current, seenAt }: SeenRate,
	event: 'moved' | 'crossedAbove' | 'crossedBelow' | 'published' | 'sample',
	before?: RememberedRate,
) {
	const [previousValue, previousSeenAt] = !before
		? [null, null]
		: settings.mode === 'change'
			? [before.ref ?? null, before.refAt ?? before.at]
			: [before[FIELD_KEY[settings.field]], before.at];
	const change =
		previousValue !== null && current !== null ? round(current - previousValue, 6) : null;
	return {
		provider: settings.provider,
		currency: code,
		baseCurrency: settings.baseCurrency,
		event,
		field: settings.field,
		previousValue,
		currentValue: current,
		change,
		changePercent:
			change !== null && previousValue ? round((change / previousValue) * 100, 4) : null,
		...(settings.mode === 'threshold' ? { threshold: settings.threshold } : {}),
		previousSeenAt,
		currentSeenAt: seenAt,
		...quote,
	};
}

/** Never -0. */
const round = (value: number, places: number) =>
	Math.round(value * 10 ** places) / 10 ** places || 0;
