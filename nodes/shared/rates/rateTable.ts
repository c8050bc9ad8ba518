import { parseDecimal } from '../decimalText';
import { ApiError, endpoints } from '../transport';

/**
 * The three quotes of one currency, in the provider's home currency per 1 unit; null when not
 * quoted (or not readable without guessing).
 */
export interface CurrencyQuote {
	readonly buy: number | null;
	readonly sell: number | null;
	readonly average: number | null;
	/**
	 * How many units of the currency the provider's quote was for: 1, or e.g. 100 where a table
	 * quotes per 100 (the tax office's JPY). The quotes above are always per 1 unit.
	 */
	readonly unit: number;
}

export type RateType = 'buy' | 'sell' | 'average';

/** How a provider writes numbers as text: `point` = 14,080.00; `comma` = 14.080,00. */
export type RateNumberFormat = 'point' | 'comma';

/** One provider's answer to getkurs, parsed once and shared by every item that needs it. */
export interface RateTable {
	readonly provider: string;
	/** When the answer arrived (ISO 8601); the service sends no date of its own. */
	readonly fetchedAt: string;
	readonly fetchedAtMs: number;
	/** Currency codes (upper case) in the order the provider lists them. */
	readonly codes: readonly string[];
	readonly quotes: ReadonlyMap<string, CurrencyQuote>;
	/** The number format the answer was read in, when it was needed and known (see `parseRateAnswer`). */
	readonly format?: RateNumberFormat;
	/** Quotes that could not be read without guessing (`USD sell "17.597"`): left null. */
	readonly unread: readonly string[];
}

/** What earlier answers of the same provider said (the Currency Rate Trigger keeps it in its memory). */
export interface KnownRates {
	readonly format?: RateNumberFormat;
	/** Per currency, the last quotes read (per 1 unit). */
	readonly quotes?: ReadonlyMap<string, Partial<Record<RateType, number | null>>>;
}

/** Longest currency code kept (ISO 4217 codes have 3 letters; some providers write more). */
export const MAX_CURRENCY_CODE_LENGTH = 12;
/** Most currencies read from one answer (a provider lists about a dozen). */
const MAX_CURRENCIES = 200;

const FIELD_NAMES: Record<RateType, readonly string[]> = {
	buy: ['rate_buy', 'buy'],
	sell: ['rate_sell', 'sell'],
	average: ['rate_avg', 'average', 'avg'],
};
const RATE_TYPES: readonly RateType[] = ['buy', 'sell', 'average'];
const UNIT_FIELDS = ['unit', 'units', 'per', 'satuan', 'nilai'];
/** Units a provider quotes in; anything else is no unit. */
const UNITS = new Set([1, 10, 100, 1000, 10000]);

/**
 * Rates in IDR (the service's home currency) per 1 unit that are plausible for a currency, about
 * 2024 levels divided and multiplied by 4: wide enough for years of moves, narrow enough that a
 * reading 100 or 1000 times off falls outside. Used only to choose between readings (a quote per
 * 100 units, a number written with a decimal comma); a rate outside its range is never refused.
 */
const PLAUSIBLE_IDR_PER_UNIT: Readonly<Record<string, number>> = {
	USD: 16250,
	EUR: 17650,
	GBP: 20690,
	CHF: 18360,
	SGD: 12130,
	AUD: 10590,
	NZD: 9645,
	CAD: 11900,
	HKD: 2085,
	CNY: 2235,
	MYR: 3565,
	SAR: 4332,
	AED: 4425,
	JPY: 106,
	KRW: 11.7,
	THB: 450,
	PHP: 280,
	INR: 195,
	TWD: 500,
	VND: 0.64,
	BND: 12130,
	DKK: 2365,
	SEK: 1530,
	NOK: 1500,
	KWD: 53000,
	BHD: 43100,
	QAR: 4460,
	OMR: 42200,
	TRY: 500,
	ZAR: 880,
	RUB: 180,
	PKR: 58,
	LKR: 54,
	BDT: 138,
	MMK: 7.7,
	LAK: 0.75,
	KHR: 4,
	PGK: 4200,
};
const PLAUSIBLE_FACTOR = 4;
/** Currencies worth less than this (IDR per unit) are the ones tables quote per 100 or 1,000 units. */
const SMALL_UNIT_IDR = 1000;

function plausible(code: string, perUnit: number): boolean | undefined {
	const mid = PLAUSIBLE_IDR_PER_UNIT[code];
	if (mid === undefined) return undefined;
	return perUnit >= mid / PLAUSIBLE_FACTOR && perUnit <= mid * PLAUSIBLE_FACTOR;
}

/**
 * Turns a getkurs `result` into a table. The known shape is
 * `{success: true, response: [{name, rate_buy, rate_sell, rate_avg, provider}]}`; the numbers
 * may come as strings ("14080.00", seen with cimb; "17.597,05" from a server set up for
 * Indonesian), so every number is parsed here and the rest of the node only sees numbers. A
 * missing average is the middle of buy and sell.
 *
 * A number that reads two ways (`17.597`: 17.597 or 17,597) is decided by evidence, strongest
 * first, never by another row's format alone: the currency's known rate (`known`, within 10×),
 * the plausible range of its rate, the other quotes of its own row, the provider's known format,
 * then the answer's other rows when they agree; otherwise it is left null (`unread`). So a row
 * that changes how it writes its numbers cannot change how another row is read.
 *
 * Units: a row's `unit` (or `units`, `per`, `satuan`, `nilai`, or a name such as `JPY 100`) says
 * per how many units it quotes; without one, a quote 100 or 1,000 times its plausible range per
 * unit (for currencies worth little per unit: JPY, KRW, VND, …) is taken as quoted per 100 or
 * 1,000. Quotes are kept per 1 unit, with `unit` saying what the provider quoted.
 */
export function parseRateAnswer(
	provider: string,
	result: unknown,
	fetchedAtMs: number,
	known: KnownRates = {},
): RateTable {
	const rows = rowsOf(result);
	if (!rows) {
		const shown = JSON.stringify(result) ?? String(result);
		throw new ApiError(endpoints.getKurs, {
			kind: 'unexpected-answer',
			reason: 'the answer holds no list of rates ("response")',
			serverMessage: shown.length > 300 ? `${shown.slice(0, 300)}…` : shown,
		});
	}
	const read: Array<{ code: string; unit?: number; fields: Record<RateType, RateText> }> = [];
	const seen = new Set<string>();
	for (const row of rows) {
		if (read.length >= MAX_CURRENCIES) break;
		if (!row || typeof row !== 'object') continue;
		const fields = row as Record<string, unknown>;
		const named = currencyName(fields.name ?? fields.currency ?? fields.code);
		// The first row of a currency wins: a provider listing one twice is a server-side slip.
		if (!named || seen.has(named.code)) continue;
		seen.add(named.code);
		const values = {} as Record<RateType, RateText>;
		for (const type of RATE_TYPES)
			values[type] = rateText(FIELD_NAMES[type].map((name) => fields[name]).find(isGiven));
		read.push({ code: named.code, unit: named.unit ?? unitOf(fields), fields: values });
	}

	const evidence = formatEvidence(
		read.flatMap((row) => RATE_TYPES.map((type) => row.fields[type])),
	);
	const tableFormat = evidence === 'mixed' ? undefined : evidence;
	const quotes = new Map<string, CurrencyQuote>();
	const unread: string[] = [];
	for (const { code, unit: statedUnit, fields } of read) {
		const rowEvidence = formatEvidence(RATE_TYPES.map((type) => fields[type]));
		const knownQuote = known.quotes?.get(code);
		const resolve = (type: RateType): number | null => {
			const text = fields[type];
			if (text.kind !== 'ambiguous') return text.kind === 'value' ? text.value : null;
			const [point, comma] = text.readings;
			// Per 1 unit at the stated unit, or at any unit a provider may have left unstated.
			const units = statedUnit !== undefined ? [statedUnit] : [1, 100, 1000];
			const knownValue = knownQuote?.[type] ?? knownQuote?.average ?? null;
			const byKnown =
				knownValue !== null && knownValue !== undefined
					? oneOf(point, comma, (value) =>
							units.some((unit) => withinTenfold(value / unit, knownValue)),
						)
					: undefined;
			const byRange = oneOf(point, comma, (value) =>
				units.some((unit) => plausible(code, value / unit) === true),
			);
			const format =
				(rowEvidence === 'point' || rowEvidence === 'comma' ? rowEvidence : undefined) ??
				known.format ??
				tableFormat;
			const chosen =
				byKnown ?? byRange ?? (format === 'comma' ? comma : format ? point : undefined);
			if (chosen === undefined) {
				unread.push(`${code} ${type} "${text.text}"`);
				return null;
			}
			return chosen;
		};
		const published = { buy: resolve('buy'), sell: resolve('sell'), average: resolve('average') };
		const unit = statedUnit ?? detectedUnit(code, published, knownQuote);
		const perUnit = (value: number | null) => (value === null ? null : value / unit);
		const buy = perUnit(published.buy);
		const sell = perUnit(published.sell);
		const average =
			perUnit(published.average) ?? (buy !== null && sell !== null ? (buy + sell) / 2 : null);
		quotes.set(code, { buy, sell, average, unit });
	}
	return {
		provider,
		fetchedAt: new Date(fetchedAtMs).toISOString(),
		fetchedAtMs,
		codes: [...quotes.keys()],
		quotes,
		format: known.format ?? tableFormat,
		unread,
	};
}

function isGiven(value: unknown): boolean {
	return value !== undefined && value !== null;
}

/** A quote as written: a number, text that reads two ways, or nothing readable. */
type RateText =
	| { kind: 'value'; value: number; format?: RateNumberFormat }
	| { kind: 'ambiguous'; readings: [number, number]; text: string }
	| { kind: 'none' };

function rateText(value: unknown): RateText {
	if (typeof value === 'number') {
		const number = readRate(value);
		return number === null ? { kind: 'none' } : { kind: 'value', value: number };
	}
	if (typeof value !== 'string') return { kind: 'none' };
	const point = readRate(value, 'point');
	const comma = readRate(value, 'comma');
	if (point !== null && comma !== null && point !== comma)
		return { kind: 'ambiguous', readings: [point, comma], text: value.trim().slice(0, 64) };
	if (point !== null)
		return { kind: 'value', value: point, format: comma === null ? 'point' : undefined };
	if (comma !== null) return { kind: 'value', value: comma, format: 'comma' };
	return { kind: 'none' };
}

/** What quotes that read only one way say about the format: one format, both (`mixed`), or none. */
function formatEvidence(texts: RateText[]): RateNumberFormat | 'mixed' | undefined {
	let found: RateNumberFormat | undefined;
	for (const text of texts) {
		if (text.kind !== 'value' || !text.format) continue;
		if (found && found !== text.format) return 'mixed';
		found = text.format;
	}
	return found;
}

/** The one of two readings that passes `test`, or undefined when none or both do. */
function oneOf(a: number, b: number, test: (value: number) => boolean): number | undefined {
	const [passA, passB] = [test(a), test(b)];
	return passA === passB ? undefined : passA ? a : b;
}

function withinTenfold(value: number, reference: number): boolean {
	return reference > 0 && value / reference < 10 && reference / value < 10;
}

/**
 * A unit the provider did not state: 100 or 1,000 when the quotes per that many units, and not
 * per 1, fall in the currency's plausible range (or within 10× of its known rate per 1).
 */
function detectedUnit(
	code: string,
	published: Record<RateType, number | null>,
	known: Partial<Record<RateType, number | null>> | undefined,
): number {
	const value = published.average ?? published.sell ?? published.buy;
	// Only currencies worth little per unit are quoted per 100 or 1,000 (JPY, KRW, VND, …).
	const perUnit = PLAUSIBLE_IDR_PER_UNIT[code];
	if (value === null || perUnit === undefined || perUnit >= SMALL_UNIT_IDR) return 1;
	const knownValue = known?.average ?? known?.sell ?? known?.buy ?? null;
	const fits = (unit: number) =>
		knownValue !== null && knownValue !== undefined
			? withinTenfold(value / unit, knownValue)
			: plausible(code, value / unit) === true;
	if (fits(1)) return 1;
	return [100, 1000].find(fits) ?? 1;
}

function rowsOf(result: unknown): unknown[] | undefined {
	if (Array.isArray(result)) return result;
	const response = (result as { response?: unknown } | null | undefined)?.response;
	return Array.isArray(response) ? response : undefined;
}

/** Currency codes are compared in upper case; users may type them in either case. */
export function currencyCode(value: unknown): string {
	return typeof value === 'string' ? value.trim().toUpperCase() : '';
}

/**
 * A row's currency: its code (letters and digits, at most MAX_CURRENCY_CODE_LENGTH), and the unit
 * when the name states one (`JPY 100`, `100 JPY`, `JPY/100`, `JPY (100)`). Anything else is no
 * currency: the row is skipped rather than a stranger's text kept as a code.
 */
function currencyName(value: unknown): { code: string; unit?: number } | undefined {
	if (typeof value !== 'string' || value.length > 64) return undefined;
	const name = value.trim().toUpperCase();
	const codeFirst = /^([A-Z]{3})(?: ?\/ ?| ?\( ?| )(\d{1,5})\)?$/.exec(name);
	if (codeFirst && UNITS.has(Number(codeFirst[2])))
		return { code: codeFirst[1], unit: Number(codeFirst[2]) };
	const unitFirst = /^(\d{1,5}) ([A-Z]{3})$/.exec(name);
	if (unitFirst && UNITS.has(Number(unitFirst[1])))
		return { code: unitFirst[2], unit: Number(unitFirst[1]) };
	return name.length >= 2 && name.length <= MAX_CURRENCY_CODE_LENGTH && /^[A-Z0-9]+$/.test(name)
		? { code: name }
		: undefined;
}

/** A unit stated in its own field (`unit: 100`), when it is one of the units providers use. */
function unitOf(fields: Record<string, unknown>): number | undefined {
	for (const name of UNIT_FIELDS) {
		const value = fields[name];
		const number =
			typeof value === 'number' ? value : typeof value === 'string' ? Number(value.trim()) : NaN;
		if (UNITS.has(number)) return number;
	}
	return undefined;
}

/**
 * A quote as a number: numbers pass, numeric strings are parsed in the given format
 * ("14080.00", "14,080.00", "17.597,05"). Zero, negative, infinite or unreadable quotes are
 * null: a conversion must never divide by them.
 */
export function readRate(value: unknown, format: RateNumberFormat = 'point'): number | null {
	let number: number;
	if (typeof value === 'number') number = value;
	else if (typeof value === 'string') {
		const parsed = parseDecimal(value, format);
		number = 'value' in parsed ? parsed.value : NaN;
	} else return null;
	return Number.isFinite(number) && number > 0 ? number : null;
}
