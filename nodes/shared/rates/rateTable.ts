import { parseDecimal } from '../decimalText';
import { ApiError, endpoints } from '../transport';

/** The three quotes of one currency, in the provider's home currency per 1 unit; null when not quoted. */
export interface CurrencyQuote {
	readonly buy: number | null;
	readonly sell: number | null;
	readonly average: number | null;
}

export type RateType = keyof CurrencyQuote;

/** One provider's answer to getkurs, parsed once and shared by every item that needs it. */
export interface RateTable {
	readonly provider: string;
	/** When the answer arrived (ISO 8601); the service sends no date of its own. */
	readonly fetchedAt: string;
	readonly fetchedAtMs: number;
	/** Currency codes (upper case) in the order the provider lists them. */
	readonly codes: readonly string[];
	readonly quotes: ReadonlyMap<string, CurrencyQuote>;
}

/**
 * Turns a getkurs `result` into a table. The known shape is
 * `{success: true, response: [{name, rate_buy, rate_sell, rate_avg, provider}]}`; the numbers
 * may come as strings ("14080.00", seen with cimb; "17.597,05" from a server set up for Indonesian),
 * so every number is parsed here and the rest of the node only sees numbers. A missing average is
 * the middle of buy and sell.
 */
export function parseRateAnswer(provider: string, result: unknown, fetchedAtMs: number): RateTable {
	const rows = rowsOf(result);
	if (!rows) {
		const shown = JSON.stringify(result) ?? String(result);
		throw new ApiError(endpoints.getKurs, {
			kind: 'unexpected-answer',
			reason: 'the answer holds no list of rates ("response")',
			serverMessage: shown.length > 300 ? `${shown.slice(0, 300)}…` : shown,
		});
	}
	const quotes = new Map<string, CurrencyQuote>();
	const format = numberFormatOf(rows);
	const rateNumber = (value: unknown) => readRate(value, format);
	for (const row of rows) {
		if (!row || typeof row !== 'object') continue;
		const fields = row as Record<string, unknown>;
		const code = currencyCode(fields.name ?? fields.currency ?? fields.code);
		// The first row of a currency wins: a provider listing one twice is a server-side slip.
		if (!code || quotes.has(code)) continue;
		const buy = rateNumber(fields.rate_buy ?? fields.buy);
		const sell = rateNumber(fields.rate_sell ?? fields.sell);
		const average =
			rateNumber(fields.rate_avg ?? fields.average ?? fields.avg) ??
			(buy !== null && sell !== null ? (buy + sell) / 2 : null);
		quotes.set(code, { buy, sell, average });
	}
	return {
		provider,
		fetchedAt: new Date(fetchedAtMs).toISOString(),
		fetchedAtMs,
		codes: [...quotes.keys()],
		quotes,
	};
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

const RATE_FIELDS = ['rate_buy', 'buy', 'rate_sell', 'sell', 'rate_avg', 'average', 'avg'];

/**
 * How the answer writes its numbers as text: decimal comma (`17.597,05`) when some rate can only
 * be read that way and none only the other way, else decimal point (`14,080.00`, what JSON and
 * Python print). A lone `17.597` then reads the way the rest of the table is written.
 */
function numberFormatOf(rows: unknown[]): 'point' | 'comma' {
	let commaOnly = false;
	for (const row of rows) {
		if (!row || typeof row !== 'object') continue;
		for (const field of RATE_FIELDS) {
			const value = (row as Record<string, unknown>)[field];
			if (typeof value !== 'string') continue;
			const point = parseDecimal(value, 'point');
			const comma = parseDecimal(value, 'comma');
			if ('value' in point && !('value' in comma)) return 'point';
			if ('value' in comma && !('value' in point)) commaOnly = true;
		}
	}
	return commaOnly ? 'comma' : 'point';
}

/**
 * A quote as a number: numbers pass, numeric strings are parsed in the table's format
 * ("14080.00", "14,080.00", "17.597,05"). Zero, negative, infinite or unreadable quotes are
 * null: a conversion must never divide by them.
 */
export function readRate(value: unknown, format: 'point' | 'comma' = 'point'): number | null {
	let number: number;
	if (typeof value === 'number') number = value;
	else if (typeof value === 'string') {
		const parsed = parseDecimal(value, format);
		number = 'value' in parsed ? parsed.value : NaN;
	} else return null;
	return Number.isFinite(number) && number > 0 ? number : null;
}
