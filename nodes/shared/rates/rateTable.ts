import { parseDecimal } from '../decimalText';
import { ApiError, endpoints } from '../transport';
import { currencyCode } from './rateFields';

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

export function parseRateAnswer(provider: string, answer: unknown, fetchedAtMs: number): RateTable {
	const rows = (answer as { response?: unknown } | null | undefined)?.response;
	if (!Array.isArray(rows)) {
		const shown = JSON.stringify(answer) ?? String(answer);
		throw new ApiError(endpoints.getKurs, {
			kind: 'unexpected-answer',
			reason: 'the answer holds no list of rates ("response")',
			serverMessage: shown.length > 300 ? `${shown.slice(0, 300)}…` : shown,
		});
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

/** Zero, negative or unreadable is null, and so is text that reads two ways ("17.597"): never guessed. */
function readRate(value: unknown): number | null {
	const parsed = typeof value === 'string' ? parseDecimal(value) : undefined;
	const number =
		typeof value === 'number' ? value : parsed && 'value' in parsed ? parsed.value : NaN;
	return Number.isFinite(number) && number > 0 ? number : null;
}
