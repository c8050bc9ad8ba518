import { NodeApiError, NodeOperationError, type INode, type JsonObject } from 'n8n-workflow';

import { ApiError, CredentialError } from './transport';

/** n8n's item numbering in messages (`[item 2]`), as its own expression errors print it. */
export function itemLabel(itemIndex: number): string {
	return `[item ${itemIndex}]`;
}

/**
 * Bad input of one item: names the item and the field, says how to fix it.
 * Example: `Field "Phone" is not a phone number: "12ab" [item 2]`.
 */
export function inputError(node: INode, itemIndex: number, field: string, problem: string, fix?: string): NodeOperationError {
	return new NodeOperationError(node, `Field "${field}" ${problem} ${itemLabel(itemIndex)}`, {
		itemIndex,
		description: fix,
	});
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
export function toNodeError(node: INode, error: unknown, { itemIndex, action }: ErrorContext = {}): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	const said = error instanceof Error ? error.message : String(error);
	const message = [action ? `Could not ${action}: ${said}` : said, itemIndex !== undefined ? itemLabel(itemIndex) : '']
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

/** The JSON of an error item (Continue On Fail): what failed, and whether it may have been delivered. */
export function errorItemJson(error: NodeApiError | NodeOperationError): JsonObject {
	const apiError = (error as { apiError?: ApiError }).apiError;
	const json: JsonObject = { error: error.message };
	if (error.description) json.description = error.description;
	// Left unsent on purpose (e.g. Stop at the Usage Limit): no request was made.
	if ((error as { notAttempted?: boolean }).notAttempted === true) json.notAttempted = true;
	if (apiError) {
		json.errorKind = apiError.kind;
		if (apiError.httpStatus !== undefined) json.httpStatus = apiError.httpStatus;
		if (apiError.serverMessage !== undefined) json.serverMessage = apiError.serverMessage;
		json.deliveryUnknown = apiError.deliveryUnknown;
	}
	return json;
}
