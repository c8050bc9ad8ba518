import { parseDecimal } from '../decimalText';
import { ApiError, endpoints } from '../transport';

/** Per 1 unit; null when not quoted, or not readable without guessing. */
export interface CurrencyQuote {
	readonly buy: number | null;
	readonly sell: number | null;
	readonly average: number | null;
	/** What the provider quoted for: 1, or e.g. 100 (the tax office's JPY). */
	readonly unit: number;
}

export type RateType = 'buy' | 'sell' | 'average';

export type RateNumberFormat = 'point' | 'comma';

export interface RateTable {
	readonly provider: string;
	readonly fetchedAt: string;
	readonly fetchedAtMs: number;
	readonly codes: readonly string[];
	readonly quotes: ReadonlyMap<string, CurrencyQuote>;
	readonly format?: RateNumberFormat;
	readonly unread: readonly string[];
}

export interface KnownRates {
	readonly format?: RateNumberFormat;
	readonly quotes?: ReadonlyMap<string, Partial<Record<RateType, number | null>>>;
}

export const MAX_CURRENCY_CODE_LENGTH = 12;
const MAX_CURRENCIES = 200;

const FIELD_NAMES: Record<RateType, readonly string[]> = {
	buy: ['rate_buy', 'buy'],
	sell: ['rate_sell', 'sell'],
	average: ['rate_avg', 'average', 'avg'],
};
const RATE_TYPES: readonly RateType[] = ['buy', 'sell', 'average'];
const UNIT_FIELDS = ['unit', 'units', 'per', 'satuan', 'nilai'];
const UNITS = new Set([1, 10, 100, 1000, 10000]);

// About 2024 levels: a reading 100 or 1,000 times off falls outside PLAUSIBLE_FACTOR. Only chooses
// between readings; a rate outside its range is never refused.
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
const SMALL_UNIT_IDR = 1000;

function plausible(code: string, perUnit: number): boolean | undefined {
	const mid = PLAUSIBLE_IDR_PER_UNIT[code];
	if (mid === undefined) return undefined;
	return perUnit >= mid / PLAUSIBLE_FACTOR && perUnit <= mid * PLAUSIBLE_FACTOR;
}

// A number that reads two ways (`17.597`) is decided by evidence, strongest first, else left null:
// a row that changes how it writes cannot change how another row is read.
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

function formatEvidence(texts: RateText[]): RateNumberFormat | 'mixed' | undefined {
	let found: RateNumberFormat | undefined;
	for (const text of texts) {
		if (text.kind !== 'value' || !text.format) continue;
		if (found && found !== text.format) return 'mixed';
		found = text.format;
	}
	return found;
}

function oneOf(a: number, b: number, test: (value: number) => boolean): number | undefined {
	const [passA, passB] = [test(a), test(b)];
	return passA === passB ? undefined : passA ? a : b;
}

function withinTenfold(value: number, reference: number): boolean {
	return reference > 0 && value / reference < 10 && reference / value < 10;
}

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

export function currencyCode(value: unknown): string {
	return typeof value === 'string' ? value.trim().toUpperCase() : '';
}

/** Anything else is no currency: the row is skipped, not a stranger's text kept as a code. */
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

function unitOf(fields: Record<string, unknown>): number | undefined {
	for (const name of UNIT_FIELDS) {
		const value = fields[name];
		const number =
			typeof value === 'number' ? value : typeof value === 'string' ? Number(value.trim()) : NaN;
		if (UNITS.has(number)) return number;
	}
	return undefined;
}

/** Zero, negative or unreadable quotes are null: a conversion must never divide by them. */
export function readRate(value: unknown, format: RateNumberFormat = 'point'): number | null {
	let number: number;
	if (typeof value === 'number') number = value;
	else if (typeof value === 'string') {
		const parsed = parseDecimal(value, format);
		number = 'value' in parsed ? parsed.value : NaN;
	} else return null;
	return Number.isFinite(number) && number > 0 ? number : null;
}
