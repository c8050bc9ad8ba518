import {
	NodeApiError,
	NodeOperationError,
	type IExecuteFunctions,
	type INode,
	type JsonObject,
} from 'n8n-workflow';

import { ApiError, CredentialError } from './transport';

export const itemLabel = (itemIndex: number): string => `[item ${itemIndex}]`;

/** `items 0–3, 7`: runs of indexes as ranges. */
export function itemList(indexes: number[]): string {
	const parts: string[] = [];
	for (let i = 0; i < indexes.length; i++) {
		let j = i;
		while (j + 1 < indexes.length && indexes[j + 1] === indexes[j] + 1) j++;
		parts.push(i === j ? `${indexes[i]}` : `${indexes[i]}–${indexes[j]}`);
		i = j;
	}
	return `${indexes.length === 1 ? 'item' : 'items'} ${parts.join(', ')}`;
}

/** A value as an error quotes it: item data can be of any size, so it is cut short. */
export function shown(value: unknown): string {
	const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
	const cut = cutShort(text, 60);
	return typeof value === 'string' ? JSON.stringify(cut) : cut;
}

/** At most `max` characters, then `…`: cut on code points, as half an emoji is no character. */
export function cutShort(text: string, max: number): string {
	// Any 2 max + 1 UTF-16 units hold more than max code points.
	const points = Array.from(text.slice(0, 2 * max + 1));
	return points.length > max ? `${points.slice(0, max).join('')}…` : text;
}

/** Bad input in a field, of an item when `itemIndex` is given: names the field and the fix. */
export function inputError(
	node: INode,
	itemIndex: number | undefined,
	field: string,
	problem: string,
	fix?: string,
): NodeOperationError {
	const item = itemIndex === undefined ? '' : ` ${itemLabel(itemIndex)}`;
	return new NodeOperationError(node, `Field "${field}" ${problem}${item}`, {
		itemIndex,
		description: fix,
	});
}

// n8n replaces the whole message of a node error holding a system error code (ECONNREFUSED, …)
// with a generic sentence of its own (COMMON_ERRORS), so the codes are written in words.
export function causeInWords(cause: string): string {
	return cause
		.replace(/\bconnect ECONNREFUSED\b/g, 'connection refused by')
		.replace(/\bECONNREFUSED\b/g, 'connection refused')
		.replace(/\b(getaddrinfo )?(ENOTFOUND|EAI_AGAIN)\b/g, 'host name not found:')
		.replace(/\bETIMEDOUT\b/g, 'timed out')
		.replace(/\b(ECONNRESET|ECONNABORTED)\b/g, 'connection lost')
		.replace(/\bEHOSTUNREACH\b/g, 'host unreachable');
}

export const messageOf = (error: unknown): string =>
	error instanceof Error ? error.message : String(error);

export function toNodeError(
	node: INode,
	error: unknown,
	{ itemIndex, action }: { itemIndex?: number; action?: string } = {},
): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	const said = action ? `Could not ${action}: ${messageOf(error)}` : messageOf(error);
	const label = itemIndex === undefined ? '' : itemLabel(itemIndex);
	const message = [said, label].filter(Boolean).join(' ');
	if (error instanceof ApiError) {
		const response: JsonObject = { message: error.message, kind: error.kind };
		if (error.httpStatus !== undefined) response.httpStatus = error.httpStatus;
		if (error.serverMessage !== undefined) response.serverMessage = error.serverMessage;
		const nodeError = new NodeApiError(node, response, {
			message,
			description: error.hint || undefined,
			httpCode: error.httpStatus !== undefined ? String(error.httpStatus) : undefined,
			itemIndex,
		});
		// Kept for error items and audits: whether a lost answer means "maybe delivered".
		Object.assign(nodeError, { apiError: error });
		return nodeError;
	}
	if (error instanceof CredentialError)
		return new NodeOperationError(node, action ? message : error.message, {
			itemIndex,
			description: 'Open the credential and correct the field.',
		});
	return new NodeOperationError(node, message, { itemIndex });
}

/** Kept back without a request: running the item again cannot send it twice. */
export class NotAttemptedError extends NodeOperationError {
	readonly notAttempted = true;

	constructor(
		node: INode,
		message: string,
		itemIndex: number,
		description: string,
		/** What the item needs to be sent later (Send Only Between: `nextWindowOpensAt`). */
		readonly itemDetails?: JsonObject,
	) {
		super(node, message, {
			itemIndex,
			description: `${description} This item was not attempted (no request was made), so running it again cannot send it twice.`,
		});
	}
}

export function listInWords(items: readonly string[]): string {
	return items.length <= 1
		? (items[0] ?? '')
		: `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** A note above the output, where n8n shows one. */
export function hint(ctx: IExecuteFunctions, message: string, type: 'info' | 'warning'): void {
	// addExecutionHints exists in newer n8n only.
	(ctx as Partial<IExecuteFunctions>).addExecutionHints?.({
		message,
		type,
		location: 'outputPane',
	});
}
