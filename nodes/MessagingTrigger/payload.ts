import type { IDataObject } from 'n8n-workflow';

import { looksLikeDataUri } from './media';
import type { MessageCategory, TriggerSettings } from './parameters';

/**
 * An incoming event as the gateway posts it (service notes, "Incoming events"): JSON-RPC
 * `{"params": {...}}` or, from some senders, the same fields as a flat object. Every field is
 * optional: older senders omit `recipient`, `type`, `filename` and `body`.
 */

export const API_KEY_FIELD = 'x-api-key';

export interface IncomingEvent {
	/** The gateway's id of the message (`uuid`); empty when the sender gave none. */
	messageId: string;
	/** The customer's number (digits when it is a phone number). */
	sender: string;
	senderName: string;
	/** The account's number (digits when it is a phone number). */
	recipient: string;
	type: MessageCategory;
	/** The message text; the gateway's literal "undefined" (sent for media) becomes empty. */
	text: string;
	fileName: string;
	/** The media `body` string, if any (a data URI when the gateway is right). */
	body?: string;
	/** The `x-api-key` the payload carries, if any. */
	apiKey?: string;
}

const isPlainObject = (value: unknown): value is IDataObject =>
	typeof value === 'object' && value !== null && !Array.isArray(value);

/** The event's fields: `params` of a JSON-RPC body, else the flat object itself. */
export function eventFields(body: unknown): { fields: IDataObject } | { problem: string } {
	if (!isPlainObject(body)) return { problem: 'The body must be a JSON object' };
	return { fields: isPlainObject(body.params) ? body.params : body };
}

function asText(value: unknown): string {
	if (typeof value === 'string') return value;
	if (typeof value === 'number' || typeof value === 'boolean') return String(value);
	return '';
}

/**
 * A number as the gateway may write it: `6281288776713`, `+62 812-8877-6713`, or with a
 * WhatsApp address suffix (`6281288776713@c.us`). Phone numbers become digits; other ids
 * (such as group ids) are kept as they are.
 */
export function contactNumber(value: unknown): string {
	const text = asText(value).trim();
	const address = text.split('@')[0];
	return /^\+?[\d\s().-]+$/.test(address) && /\d/.test(address) ? address.replace(/\D/g, '') : text;
}

const CATEGORY_OF_TYPE: Record<string, MessageCategory> = {
	text: 'text',
	chat: 'text',
	image: 'image',
	document: 'document',
	file: 'document',
	audio: 'audio',
	ptt: 'audio',
	voice: 'audio',
	video: 'video',
};

/** The type the filter and the output use; when the payload names none, the media tells. */
export function messageCategory(rawType: string, body: string | undefined): MessageCategory {
	const named = rawType.trim().toLowerCase();
	if (named) return CATEGORY_OF_TYPE[named] ?? 'other';
	if (body === undefined || !looksLikeDataUri(body)) return 'text';
	const mimeType = body.slice(5, body.search(/[;,]/)).toLowerCase();
	if (mimeType.startsWith('image/')) return 'image';
	if (mimeType.startsWith('audio/')) return 'audio';
	if (mimeType.startsWith('video/')) return 'video';
	return 'document';
}

export function readEvent(fields: IDataObject): IncomingEvent {
	const text = asText(fields.message);
	const body = typeof fields.body === 'string' && fields.body !== '' ? fields.body : undefined;
	const apiKey = fields[API_KEY_FIELD];
	return {
		messageId: asText(fields.uuid),
		sender: contactNumber(fields.sender),
		senderName: asText(fields.sendername),
		recipient: contactNumber(fields.recipient),
		type: messageCategory(asText(fields.type), body),
		text: text.trim() === 'undefined' ? '' : text,
		fileName: asText(fields.filename),
		body,
		apiKey: apiKey === undefined || apiKey === null ? undefined : asText(apiKey),
	};
}

/**
 * The payload as received, for fields this node does not name: without the API key (a secret)
 * and without a media data URI (it is in the binary field; megabytes of base64 in JSON would
 * only slow every later node down).
 */
export function rawPayload(fields: IDataObject): IDataObject {
	const copy: IDataObject = {};
	for (const [key, value] of Object.entries(fields)) {
		if (key === API_KEY_FIELD) continue;
		if (key === 'body' && typeof value === 'string' && looksLikeDataUri(value)) continue;
		copy[key] = value;
	}
	return copy;
}

/** Why a message is not passed on, or undefined when it starts the workflow. */
export function ignoreReason(event: IncomingEvent, settings: TriggerSettings, ownNumber: string): string | undefined {
	if (settings.messageTypes.length > 0 && !settings.messageTypes.includes(event.type)) {
		return `message type "${event.type}" is not selected`;
	}
	if (settings.ignoreOwnMessages && ownNumber !== '' && event.sender === ownNumber) {
		return "sent by the account's own number";
	}
	return undefined;
}
