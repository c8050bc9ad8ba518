/**
 * Fixed exchange-rate tables (IDR per 1 unit of the named currency), one per provider.
 * Built from one table of mid rates plus a per-provider spread and bias, so the numbers look
 * like the real providers (banks quote a buy/sell spread, the tax office one value) and never
 * change between runs.
 */

/** Mid rates in IDR, roughly 2024 levels. */
const MID_RATES: Record<string, number> = {
	USD: 16250,
	EUR: 17650,
	SGD: 12130,
	JPY: 106.05,
	GBP: 20690,
	AUD: 10590,
	CNY: 2235,
	MYR: 3565,
	HKD: 2085,
	CHF: 18360,
	SAR: 4332,
	NZD: 9645,
};

const CORE = ['USD', 'EUR', 'SGD', 'JPY', 'GBP', 'AUD', 'CNY', 'MYR'];

interface ProviderProfile {
	currencies: string[];
	/** Total buy/sell spread as a fraction of the mid rate; 0 means one value for all three. */
	spread: number;
	/** Provider's mid relative to the common mid (banks disagree slightly). */
	bias: number;
	/** Some servers send numbers as strings with two decimals; clients must cope. */
	numbersAsStrings?: boolean;
}

const PROVIDERS: Record<string, ProviderProfile> = {
	kmk: {
		currencies: [...CORE, 'HKD', 'CHF', 'SAR', 'NZD'],
		spread: 0,
		bias: 0.998,
	},
	bca: { currencies: [...CORE, 'HKD', 'CHF', 'SAR'], spread: 0.006, bias: 1.0 },
	bni: { currencies: [...CORE, 'HKD', 'CHF'], spread: 0.008, bias: 1.001 },
	bri: { currencies: [...CORE, 'SAR'], spread: 0.01, bias: 0.999 },
	cimb: { currencies: [...CORE], spread: 0.007, bias: 1.002, numbersAsStrings: true },
};

export interface RateRow {
	name: string;
	rate_sell: number | string;
	rate_buy: number | string;
	rate_avg: number | string;
	provider: string;
}

function round2(value: number): number {
	return Math.round(value * 100) / 100;
}

function rateRow(code: string, currency: string, profile: ProviderProfile): RateRow {
	const mid = MID_RATES[currency] * profile.bias;
	const buy = round2(mid * (1 - profile.spread / 2));
	const sell = round2(mid * (1 + profile.spread / 2));
	const avg = round2((buy + sell) / 2);
	const shown = (value: number) => (profile.numbersAsStrings ? value.toFixed(2) : value);
	return {
		name: currency,
		rate_sell: shown(sell),
		rate_buy: shown(buy),
		rate_avg: shown(avg),
		provider: code,
	};
}

/** Quotes set through the control API (`moveRate`), per `provider|CURRENCY`; they replace the fixed ones. */
export type RateMoves = Map<string, { buy: number; sell: number; average: number }>;

/** Rows for a provider code (case-insensitive), or undefined when the provider is unknown. */
export function ratesFor(providerCode: string, moves?: RateMoves): RateRow[] | undefined {
	const code = providerCode.toLowerCase();
	const profile = PROVIDERS[code];
	return profile?.currencies.map((currency) => {
		const row = rateRow(code, currency, profile);
		const moved = moves?.get(`${code}|${currency}`);
		if (!moved) return row;
		const shown = (value: number) => (profile.numbersAsStrings ? value.toFixed(2) : value);
		return {
			...row,
			rate_buy: shown(moved.buy),
			rate_sell: shown(moved.sell),
			rate_avg: shown(moved.average),
		};
	});
}

/** A rate move asked for through the control API: new quotes, or all three moved by a percentage. */
export interface RateMove {
	provider: string;
	currency: string;
	/** Moves buy, sell and average by this many percent (e.g. 2 or -1.5) from their current values. */
	percent?: number;
	buy?: number;
	sell?: number;
	average?: number;
}

/** Applies a move to `moves` and returns the currency's new row (the provider publishing new rates). */
export function moveRate(moves: RateMoves, move: RateMove): RateRow {
	const provider = String(move.provider ?? '').toLowerCase();
	const currency = String(move.currency ?? '').toUpperCase();
	const row = ratesFor(provider, moves)?.find((candidate) => candidate.name === currency);
	if (!row)
		throw new Error(
			`No rate ${currency || '(currency missing)'} for provider ${provider || '(provider missing)'}`,
		);
	const factor = 1 + Number(move.percent ?? 0) / 100;
	const next = (given: unknown, current: number | string) => {
		const value = given === undefined ? round2(Number(current) * factor) : Number(given);
		if (!Number.isFinite(value) || value <= 0)
			throw new Error(`Rates must be positive numbers, got ${JSON.stringify(given)}`);
		return value;
	};
	moves.set(`${provider}|${currency}`, {
		buy: next(move.buy, row.rate_buy),
		sell: next(move.sell, row.rate_sell),
		average: next(move.average, row.rate_avg),
	});
	return ratesFor(provider, moves)!.find((candidate) => candidate.name === currency)!;
}
