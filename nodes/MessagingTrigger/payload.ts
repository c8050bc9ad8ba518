import type { IDataObject } from 'n8n-workflow';

import { looksLikeDataUri } from './media';
import type { MessageCategory } from './parameters';

// Some senders post the fields flat instead of under JSON-RPC `params`; every field is optional
// (older senders omit several).

const API_KEY_FIELD = 'x-api-key';

export const PAYLOAD_MAX_DEPTH = 32;
export const PAYLOAD_MAX_VALUES = 10_000;
const CONTACT_MAX_LENGTH = 64;

// JSON.parse makes `"__proto__"` an own property, but a later `copy[key] = value` would set the
// copy's prototype instead.
const PROTOTYPE_KEYS = new Set(['__proto__']);

export interface IncomingEvent {
	messageId: string;
	/** The customer's number (digits), or a group id kept as it came. */
	sender: string;
	chatId: string;
	isGroup: boolean;
	/** Who wrote: the customer in a direct chat, the member named by the payload in a group. */
	author?: string;
	senderName: string;
	recipient: string;
	type: MessageCategory;
	/** The gateway's literal "undefined" (sent for media) becomes empty. */
	text: string;
	/** As it came: never output as such (media.ts cleans it). */
	fileName: string;
	body?: string;
	apiKey?: string;
}

const isPlainObject = (value: unknown): value is IDataObject =>
	typeof value === 'object' && value !== null && !Array.isArray(value);

// Walked without recursion, so a very deep array is refused instead of overflowing the stack (here
// or in n8n's deep copy of the item later).
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
const PERSON_SUFFIXES = ['@c.us', '@s.whatsapp.net'];

// A group id is kept exactly as it came: read as digits, it would make up a phone number that
// belongs to someone else.
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

/** Without the API key (a secret) and the media data URI (it is in the binary field). */
export function rawPayload(fields: IDataObject): IDataObject {
	const copy: IDataObject = {};
	for (const [key, value] of Object.entries(fields)) {
		if (key === 'body' && typeof value === 'string' && looksLikeDataUri(value)) continue;
		if (!isApiKeyOrPrototype(key)) copy[key] = withoutApiKeys(value) as IDataObject[string];
	}
	return copy;
}

/** The key in any letter case, at any depth (the payload's depth is bounded before). */
function withoutApiKeys(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(withoutApiKeys);
	if (value === null || typeof value !== 'object') return value;
	const copy: IDataObject = {};
	for (const [key, inner] of Object.entries(value as IDataObject))
		if (!isApiKeyOrPrototype(key)) copy[key] = withoutApiKeys(inner) as IDataObject[string];
	return copy;
}

function isApiKeyOrPrototype(key: string): boolean {
	return key.toLowerCase() === API_KEY_FIELD || PROTOTYPE_KEYS.has(key);
}
