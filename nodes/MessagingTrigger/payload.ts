import type { IDataObject } from 'n8n-workflow';

import { looksLikeDataUri } from './media';
import type { MessageCategory } from './parameters';

/**
 * An incoming event as the gateway posts it (service notes, "Incoming events"): JSON-RPC
 * `{"params": {...}}` or, from some senders, the same fields as a flat object. Every field is
 * optional: older senders omit `recipient`, `type`, `filename` and `body`.
 */

const API_KEY_FIELD = 'x-api-key';

/** Deepest nesting of arrays and objects the trigger passes on (an event is a flat object). */
export const PAYLOAD_MAX_DEPTH = 32;
/** Most values (strings, numbers, arrays, objects...) in one payload. */
export const PAYLOAD_MAX_VALUES = 10_000;
/** Longest sender, recipient or author that is read as a number; longer ones are kept as text. */
const CONTACT_MAX_LENGTH = 64;

/**
 * Keys that could set an object's prototype when copied by assignment. JSON.parse makes
 * `"__proto__"` an own property, but any later `copy[key] = value` would turn it into the
 * prototype of the copy (hiding fields), so it is dropped while the payload is copied.
 */
const PROTOTYPE_KEYS = new Set(['__proto__']);

export interface IncomingEvent {
	/** The gateway's id of the message (`uuid`); empty when the sender gave none. */
	messageId: string;
	/** The chat partner: the customer's number (digits), or a group id kept as it came. */
	sender: string;
	/** Where a reply goes: the same as `sender`. */
	chatId: string;
	/** Whether the chat is a group (its id ends with `@g.us`). */
	isGroup: boolean;
	/** Who wrote: the customer in a direct chat, the member named by the payload in a group. */
	author?: string;
	senderName: string;
	/** The account's number (digits when it is a phone number). */
	recipient: string;
	type: MessageCategory;
	/** The message text; the gateway's literal "undefined" (sent for media) becomes empty. */
	text: string;
	/** The file name the payload gives, as it came (never output as such: see media.ts). */
	fileName: string;
	/** The media `body` string, if any (a data URI when the gateway is right). */
	body?: string;
	/** The `x-api-key` the payload carries, if any. */
	apiKey?: string;
}

const isPlainObject = (value: unknown): value is IDataObject =>
	typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A copy of a parsed body the rest of n8n can handle: nesting at most PAYLOAD_MAX_DEPTH deep,
 * at most PAYLOAD_MAX_VALUES values, no prototype-setting keys. Walked without recursion, so a
 * 200,000-deep array is refused instead of overflowing the stack (here or in n8n's deep copy of
 * the item later).
 */
export function boundedCopy(value: unknown): { value: unknown } | { problem: string } {
	if (value === null || typeof value !== 'object') return { value };
	const root: unknown = Array.isArray(value) ? [] : {};
	const stack: Array<{ from: unknown; to: Record<string, unknown> | unknown[]; depth: number }> = [
		{ from: value, to: root as Record<string, unknown>, depth: 1 },
	];
	let count = 1;
	while (stack.length > 0) {
		const { from, to, depth } = stack.pop()!;
		if (depth > PAYLOAD_MAX_DEPTH) {
			return {
				problem: `The payload is nested deeper than the limit of ${PAYLOAD_MAX_DEPTH} levels of arrays and objects`,
			};
		}
		const entries: Array<[string, unknown]> = Array.isArray(from)
			? from.map((entry, index) => [String(index), entry])
			: Object.entries(from as Record<string, unknown>);
		count += entries.length;
		if (count > PAYLOAD_MAX_VALUES) {
			return {
				problem: `The payload holds more than the limit of ${PAYLOAD_MAX_VALUES.toLocaleString('en-US')} values`,
			};
		}
		for (const [key, entry] of entries) {
			if (PROTOTYPE_KEYS.has(key)) continue;
			let copied = entry;
			if (entry !== null && typeof entry === 'object') {
				copied = Array.isArray(entry) ? [] : {};
				stack.push({ from: entry, to: copied as Record<string, unknown>, depth: depth + 1 });
			}
			if (Array.isArray(to)) to.push(copied);
			else to[key] = copied;
		}
	}
	return { value: root };
}

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

const PHONE_LIKE = /^\+?[\d\s().-]+$/;
const GROUP_SUFFIX = '@g.us';
/** WhatsApp's address suffixes of a person: the part before them is the phone number. */
const PERSON_SUFFIXES = ['@c.us', '@s.whatsapp.net'];

/**
 * A contact as the gateway may write it: `6281288776713`, `+62 812-8877-6713`, or a WhatsApp
 * address (`6281288776713@c.us`). A person's number becomes digits; a group id
 * (`120363025246125486@g.us`, `6281288776713-1612345678@g.us`) and any other id
 * (`status@broadcast`) are kept exactly as they came: reading a group id as digits would make up a
 * phone number that belongs to someone else.
 */
export function contactNumber(value: unknown): string {
	const text = asText(value).trim();
	if (text.length > CONTACT_MAX_LENGTH) return text;
	const lower = text.toLowerCase();
	const suffix = PERSON_SUFFIXES.find((candidate) => lower.endsWith(candidate));
	const address = suffix ? text.slice(0, -suffix.length) : text;
	if (address.includes('@')) return text;
	return PHONE_LIKE.test(address) && /\d/.test(address) ? address.replace(/\D/g, '') : text;
}

function isGroupId(id: string): boolean {
	return id.toLowerCase().endsWith(GROUP_SUFFIX);
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
	if (named) return Object.hasOwn(CATEGORY_OF_TYPE, named) ? CATEGORY_OF_TYPE[named] : 'other';
	if (body === undefined || !looksLikeDataUri(body)) return 'text';
	const mimeType = body
		.slice(5, 5 + 256)
		.split(/[;,]/)[0]
		.toLowerCase();
	if (mimeType.startsWith('image/')) return 'image';
	if (mimeType.startsWith('audio/')) return 'audio';
	if (mimeType.startsWith('video/')) return 'video';
	return 'document';
}

/** Fields a group message may name its author in (guessed: the service notes show none). */
const AUTHOR_FIELDS = ['author', 'participant'];

export function readEvent(fields: IDataObject): IncomingEvent {
	const text = asText(fields.message);
	const body = typeof fields.body === 'string' && fields.body !== '' ? fields.body : undefined;
	const apiKey = fields[API_KEY_FIELD];
	const sender = contactNumber(fields.sender);
	const isGroup = isGroupId(sender);
	const named = AUTHOR_FIELDS.map((field) => contactNumber(fields[field])).find(
		(author) => author !== '',
	);
	return {
		messageId: asText(fields.uuid),
		sender,
		chatId: sender,
		isGroup,
		author: isGroup ? named : sender || named,
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
 * only slow every later node down). `fields` comes from `boundedCopy`, so it is bounded and has
 * no prototype-setting keys.
 */
export function rawPayload(fields: IDataObject): IDataObject {
	const copy: IDataObject = {};
	for (const [key, value] of Object.entries(fields)) {
		if (key === API_KEY_FIELD || PROTOTYPE_KEYS.has(key)) continue;
		if (key === 'body' && typeof value === 'string' && looksLikeDataUri(value)) continue;
		copy[key] = value;
	}
	return copy;
}
