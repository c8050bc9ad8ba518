import { clock } from '../clock';
import { cutShort } from '../errors';
import { ApiError, endpoints, type ApiClient } from '../transport';

export type NumberFormat = 'auto' | 'point' | 'comma';
export type RateType = 'buy' | 'sell' | 'average';

/** Amounts of the base currency per 1 unit, as the service quotes them; null when none is usable. */
export type CurrencyQuote = Readonly<Record<RateType, number | null>>;

export interface RateTable {
	readonly provider: string;
	/** The answer has no date of its own: when it arrived. */
	readonly fetchedAt: string;
	readonly fetchedAtMs: number;
	/** In the provider's order. */
	readonly quotes: ReadonlyMap<string, CurrencyQuote>;
}

const MAX_CURRENCIES = 200;
/** A trigger keeps codes in static data: anything else is no currency, and its row is skipped. */
const CURRENCY_CODE = /^[A-Z0-9]{2,12}$/;
const PLAIN = /^[+-]?(\d+(?:\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const GROUPED_POINT = /^[+-]?[1-9]\d{0,2}(,\d{3})+(\.\d+)?$/;
const GROUPED_COMMA = /^[+-]?[1-9]\d{0,2}(\.\d{3})+(,\d+)?$/;
const DECIMAL_COMMA = /^[+-]?(\d+,\d*|,\d+)$/;

// `16.250` is 16250 to an Indonesian reader and 16.25 to an English one: unless the format says
// which, such text gives both readings, never a guess. Two different readings are always `1.234`.
export function parseDecimal(
	input: string,
	format: NumberFormat = 'auto',
): number | [number, number] | undefined {
	// No number is longer than 64 characters: a longer text is not scanned at all.
	const text = input.length > 256 ? '' : input.replace(/\s/g, '');
	if (text.length > 64) return undefined;
	const point = format === 'comma' ? undefined : pointReading(text);
	const comma = format === 'point' ? undefined : commaReading(text);
	if (point !== undefined && comma !== undefined && point !== comma) return [point, comma];
	return point ?? comma;
}

function pointReading(text: string): number | undefined {
	if (PLAIN.test(text)) return Number(text);
	if (GROUPED_POINT.test(text)) return Number(text.replace(/,/g, ''));
	return undefined;
}

function commaReading(text: string): number | undefined {
	if (/^[+-]?\d+$/.test(text)) return Number(text);
	if (GROUPED_COMMA.test(text)) return Number(text.replace(/\./g, '').replace(',', '.'));
	if (DECIMAL_COMMA.test(text)) return Number(text.replace(',', '.'));
	return undefined;
}

export async function fetchRateTable(
	client: ApiClient,
	provider: string,
	version: string,
	signal?: AbortSignal,
): Promise<RateTable> {
	const params = { version, currency_id_provider: provider };
	const answer = await client.call(endpoints.getKurs, params, { signal });
	return parseRateAnswer(provider, answer, clock.now());
}

export function parseRateAnswer(provider: string, answer: unknown, fetchedAtMs: number): RateTable {
	const rows = (answer as { response?: unknown } | null | undefined)?.response;
	if (!Array.isArray(rows)) {
		const reason = 'the answer holds no list of rates ("response")';
		const serverMessage = cutShort(JSON.stringify(answer) ?? String(answer), 300);
		throw new ApiError(endpoints.getKurs, { kind: 'unexpected-answer', reason, serverMessage });
	}
	const quotes = new Map<string, CurrencyQuote>();
	for (const row of rows) {
		if (quotes.size >= MAX_CURRENCIES) break;
		const { name, rate_buy, rate_sell, rate_avg } = (row ?? {}) as Record<string, unknown>;
		const code = typeof name === 'string' && name.length <= 64 ? currencyCode(name) : '';
		// The first row of a currency wins: a provider listing one twice is a server-side slip.
		if (!CURRENCY_CODE.test(code) || quotes.has(code)) continue;
		const buy = readRate(rate_buy);
		const sell = readRate(rate_sell);
		const average = readRate(rate_avg) ?? (buy !== null && sell !== null ? (buy + sell) / 2 : null);
		quotes.set(code, { buy, sell, average });
	}
	return { provider, fetchedAt: new Date(fetchedAtMs).toISOString(), fetchedAtMs, quotes };
}

/** Zero, negative or unreadable is null, and so is text that reads two ways ("17.597"). */
function readRate(value: unknown): number | null {
	const number = typeof value === 'string' ? parseDecimal(value) : value;
	return typeof number === 'number' && Number.isFinite(number) && number > 0 ? number : null;
}

export function currencyCode(value: unknown): string {
	return typeof value === 'string' ? value.trim().toUpperCase() : '';
}
