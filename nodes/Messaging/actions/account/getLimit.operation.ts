import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { ItemCall } from '../../../shared/execution/operation';

import { endpoints } from '../../../shared/transport';
import type { MessagingRun } from '../../parameters';

export const description: INodeProperties[] = [];

export const endpoint = endpoints.limit;

/** No per-item parameters: once per run, whatever the number of input items. */
export const once = true;

export function prepare(this: IExecuteFunctions, _itemIndex: number, run: MessagingRun): ItemCall {
	return async () => {
		const result = await run.client.call(endpoint, {}, { signal: run.signal });
		return { json: limitJson(result) };
	};
}

/**
 * The usage limit as `{blocked, limit, used, remaining}`. Seen on the older route:
 * `{"block": <bool>, "block_limit": <int>}`, sometimes with `limit_qty` (read here as the
 * count used so far, as the sandbox models it). Names and types vary, so several spellings and
 * numbers-as-strings are accepted; what is not given is null, never invented.
 */
export function limitJson(result: unknown): IDataObject {
	const answer = (result && typeof result === 'object' ? result : {}) as IDataObject;
	const source = answer.message && typeof answer.message === 'object' ? (answer.message as IDataObject) : answer;
	const limit = firstNumber(source, ['block_limit', 'limit', 'blockLimit', 'max', 'quota']);
	const used = firstNumber(source, ['limit_qty', 'used', 'sent', 'count', 'usage']);
	const stated = firstBoolean(source, ['block', 'blocked', 'is_blocked', 'isBlocked']);
	return {
		// No flag given: blocked when the count has reached the limit, else not.
		blocked: stated ?? (limit !== null && used !== null ? used >= limit : false),
		limit,
		used,
		remaining: limit !== null && used !== null ? Math.max(0, limit - used) : null,
		response: (result ?? null) as IDataObject,
	};
}

function firstNumber(source: IDataObject, keys: string[]): number | null {
	for (const key of keys) {
		const value = source[key];
		const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
		if (Number.isFinite(number)) return number;
	}
	return null;
}

function firstBoolean(source: IDataObject, keys: string[]): boolean | undefined {
	for (const key of keys) {
		const value = source[key];
		if (typeof value === 'boolean') return value;
		if (value === 1 || value === 0) return value === 1;
		if (typeof value === 'string' && /^(true|false|yes|no|1|0)$/i.test(value.trim())) return /^(true|yes|1)$/i.test(value.trim());
	}
	return undefined;
}
