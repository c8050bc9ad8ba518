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
	kmk: { currencies: [...CORE, 'HKD', 'CHF', 'SAR', 'NZD'], spread: 0, bias: 0.998 },
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
	return { name: currency, rate_sell: shown(sell), rate_buy: shown(buy), rate_avg: shown(avg), provider: code };
}

/** Rows for a provider code (case-insensitive), or undefined when the provider is unknown. */
export function ratesFor(providerCode: string): RateRow[] | undefined {
	const code = providerCode.toLowerCase();
	const profile = PROVIDERS[code];
	return profile?.currencies.map((currency) => rateRow(code, currency, profile));
}
