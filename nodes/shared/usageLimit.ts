import type { IDataObject } from 'n8n-workflow';

// Seen on the older route: `{"block": <bool>, "block_limit": <int>}`, sometimes `limit_qty`, read
// as the count used (as the sandbox models it). What is not given is null, never invented.
export interface UsageLimit {
	blocked: boolean;
	limit: number | null;
	used: number | null;
	/** null unless the gateway gives both counts. */
	remaining: number | null;
}

export function readUsageLimit(result: unknown): UsageLimit {
	const answer = (result && typeof result === 'object' ? result : {}) as IDataObject;
	const source =
		answer.message && typeof answer.message === 'object' ? (answer.message as IDataObject) : answer;
	const limit = firstNumber(source, ['block_limit', 'limit', 'blockLimit', 'max', 'quota']);
	const used = firstNumber(source, ['limit_qty', 'used', 'sent', 'count', 'usage']);
	const stated = firstBoolean(source, ['block', 'blocked', 'is_blocked', 'isBlocked']);
	return {
		// No flag given: blocked when the count has reached the limit, else not.
		blocked: stated ?? (limit !== null && used !== null ? used >= limit : false),
		limit,
		used,
		remaining: limit !== null && used !== null ? Math.max(0, limit - used) : null,
	};
}

export function usageLimitJson(result: unknown): IDataObject {
	return { ...readUsageLimit(result), response: (result ?? null) as IDataObject };
}

function firstNumber(source: IDataObject, keys: string[]): number | null {
	for (const key of keys) {
		const value = source[key];
		const number =
			typeof value === 'number'
				? value
				: typeof value === 'string' && value.trim() !== ''
					? Number(value)
					: NaN;
		if (Number.isFinite(number)) return number;
	}
	return null;
}

function firstBoolean(source: IDataObject, keys: string[]): boolean | undefined {
	for (const key of keys) {
		const value = source[key];
		if (typeof value === 'boolean') return value;
		if (value === 1 || value === 0) return value === 1;
		if (typeof value === 'string' && /^(true|false|yes|no|1|0)$/i.test(value.trim()))
			return /^(true|yes|1)$/i.test(value.trim());
	}
	return undefined;
}
