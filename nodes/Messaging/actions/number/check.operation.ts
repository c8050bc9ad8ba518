import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { ItemCall } from '../../../shared/execution/router';
import { forOperation } from '../../../shared/properties';
import { ApiError, endpoints } from '../../../shared/transport';
import type { MessagingRun } from '../../run';
import { phoneProperty, recipientPhone } from '../../helpers/recipient';

export const description: INodeProperties[] = forOperation('number', 'check', [
	phoneProperty('Number to look up, with country code (or set "Default Country" in the options)'),
]);

export const endpoint = endpoints.checkNumber;

export function execute(this: IExecuteFunctions, itemIndex: number, run: MessagingRun): ItemCall {
	const phone = recipientPhone(run, itemIndex);
	return async () => {
		const result = await run.client.call(endpoint, { phone }, { signal: run.signal });
		return {
			json: { phone, exists: numberExists(result), response: (result ?? null) as IDataObject },
		};
	};
}

const YES = new Set('exists exist true yes registered valid 1'.split(' '));
const NO = new Set(
	'notexists notexist not_exists false no notregistered unregistered invalid 0'.split(' '),
);

// An unknown word fails the item with the server's words rather than a guess.
function numberExists(result: unknown): boolean {
	const answer = (result && typeof result === 'object' ? result : { result }) as IDataObject;
	for (const key of ['result', 'exists', 'registered', 'status', 'numberExists']) {
		const verdict = yesOrNo(answer[key]);
		if (verdict !== undefined) return verdict;
	}
	const said = answer.error ?? answer.message ?? answer.result;
	throw new ApiError(endpoint, {
		kind: answer.error !== undefined ? 'rejected' : 'unexpected-answer',
		reason:
			answer.error !== undefined
				? 'the server could not check the number'
				: 'the answer does not say whether the number exists',
		serverMessage: typeof said === 'string' ? said : JSON.stringify(answer).slice(0, 300),
	});
}

function yesOrNo(value: unknown): boolean | undefined {
	if (typeof value === 'boolean') return value;
	if (typeof value === 'number') return value === 1 ? true : value === 0 ? false : undefined;
	if (typeof value !== 'string') return undefined;
	const word = value.trim().toLowerCase().replace(/\s+/g, '');
	if (YES.has(word)) return true;
	if (NO.has(word) || NO.has(value.trim().toLowerCase())) return false;
	return undefined;
}
