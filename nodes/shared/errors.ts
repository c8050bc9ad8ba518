import {
	NodeApiError,
	NodeOperationError,
	type IDataObject,
	type INode,
	type JsonObject,
} from 'n8n-workflow';

import { ApiError, CredentialError } from './transport';

/** n8n's item numbering in messages (`[item 2]`), as its own expression errors print it. */
export function itemLabel(itemIndex: number): string {
	return `[item ${itemIndex}]`;
}

/**
 * Bad input of one item: names the item and the field, says how to fix it.
 * Example: `Field "Phone" is not a phone number: "12ab" [item 2]`.
 */
export function inputError(
	node: INode,
	itemIndex: number,
	field: string,
	problem: string,
	fix?: string,
): NodeOperationError {
	return new NodeOperationError(node, `Field "${field}" ${problem} ${itemLabel(itemIndex)}`, {
		itemIndex,
		description: fix,
	});
}

/**
 * A cause written into a message of the package's own, with system error codes in words: n8n
 * replaces the whole message of a node error that contains one (`ECONNREFUSED`, `ETIMEDOUT`, …)
 * with a generic sentence of its own (n8n-workflow NodeError, COMMON_ERRORS), losing the rest.
 */
export function causeInWords(cause: string): string {
	return cause
		.replace(/\bconnect ECONNREFUSED\b/g, 'connection refused by')
		.replace(/\bECONNREFUSED\b/g, 'connection refused')
		.replace(/\b(getaddrinfo )?(ENOTFOUND|EAI_AGAIN)\b/g, 'host name not found:')
		.replace(/\bETIMEDOUT\b/g, 'timed out')
		.replace(/\b(ECONNRESET|ECONNABORTED)\b/g, 'connection lost')
		.replace(/\bEHOSTUNREACH\b/g, 'host unreachable');
}

/** Where a failure happened, for its message. */
export interface ErrorContext {
	/** The item that failed: the message ends with `[item N]`. */
	itemIndex?: number;
	/** What was being done, when not an item's operation: `Could not <action>: …`. */
	action?: string;
}

/**
 * Any failure as the n8n error to throw or to put in an error item: the one conversion of the
 * package. The transport's `ApiError` becomes a `NodeApiError` with the server's words and a hint;
 * anything else a `NodeOperationError`. n8n errors pass through unchanged.
 */
export function toNodeError(
	node: INode,
	error: unknown,
	{ itemIndex, action }: ErrorContext = {},
): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	const said = error instanceof Error ? error.message : String(error);
	const message = [
		action ? `Could not ${action}: ${said}` : said,
		itemIndex !== undefined ? itemLabel(itemIndex) : '',
	]
		.filter(Boolean)
		.join(' ');
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
	if (error instanceof CredentialError) {
		return new NodeOperationError(node, action ? message : error.message, {
			itemIndex,
			description: 'Open the credential and correct the field.',
		});
	}
	return new NodeOperationError(node, message, { itemIndex });
}

/**
 * The JSON of an error item (On Error → "Continue" or "Continue (using error output)"): the
 * message under `error`, everything else under `details`.
 *
 * The shape is n8n's contract, not a taste: with "Continue (using error output)", n8n-core moves
 * an item to the error output only when its `json.error` is set and `json` has no keys besides
 * `error`, `message` and `details` (n8n-core 2.41.1, `dist/execution-engine/workflow-execute.js`,
 * `WorkflowExecute.handleNodeErrorOutput`:
 * `item.json.error && Object.keys(item.json).every((key) => ['error', 'message', 'details'].includes(key))`).
 * An item carrying n8n's own `item.error` is routed too, but `normalizeNodeErrors` then replaces
 * its whole `json` with `{ error: message }`, losing `deliveryUnknown`; hence the keys.
 */
export function errorItemJson(error: NodeApiError | NodeOperationError): JsonObject {
	const apiError = (error as { apiError?: ApiError }).apiError;
	const details: JsonObject = {};
	if (error.context.itemIndex !== undefined) details.item = error.context.itemIndex as number;
	// n8n fills an API error's description with its message when there is no hint: not repeated.
	if (error.description && !error.message.startsWith(error.description))
		details.description = error.description;
	// Left unsent on purpose (e.g. Stop at the Usage Limit): no request was made.
	const notAttempted = (error as { notAttempted?: boolean }).notAttempted === true;
	details.kind = apiError ? apiError.kind : notAttempted ? 'not-attempted' : 'input';
	if (notAttempted) details.notAttempted = true;
	// What the item needs to be sent later (Send Only Between: `nextWindowOpensAt`).
	Object.assign(details, (error as { itemDetails?: JsonObject }).itemDetails);
	if (apiError) {
		if (apiError.httpStatus !== undefined) details.httpStatus = apiError.httpStatus;
		if (apiError.serverMessage !== undefined) details.serverMessage = apiError.serverMessage;
	}
	// false for bad input and for every failure the gateway cannot have processed.
	details.deliveryUnknown = apiError?.deliveryUnknown ?? false;
	return { error: error.message, details };
}

/** True for the JSON of an error item (what n8n routes to the error output). */
export function isErrorItemJson(json: IDataObject): boolean {
	return (
		Boolean(json.error) &&
		Object.keys(json).every((key) => key === 'error' || key === 'message' || key === 'details')
	);
}
