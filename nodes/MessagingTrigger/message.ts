import type { IDataObject, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';

import { FALLBACK_MIME_TYPE, parseBase64Text } from '../shared/dataUri';
import { cleanFileName, extensionFor } from '../shared/fileName';
import { onFirstUse } from '../shared/onFirstUse';
import { normalizePhone } from '../shared/phone';
import type { MessageCategory, TriggerSettings } from './parameters';

const phoneNumbers = onFirstUse(
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use (onFirstUse.ts)
	() => require('libphonenumber-js') as typeof import('libphonenumber-js'),
);

// Some senders post the fields flat instead of under JSON-RPC `params`; every field is optional
// (older senders omit several).

const API_KEY_FIELD = 'x-api-key';
const MAX_DEPTH = 32;
const MAX_VALUES = 10_000;

export interface IncomingEvent {
	messageId: string;
	/** The customer's number (digits), or a group id kept as it came. */
	sender: string;
	isGroup: boolean;
	/** Who wrote: the customer in a direct chat, the member named by the payload in a group. */
	author?: string;
	senderName: string;
	recipient: string;
	type: MessageCategory;
	/** The gateway's literal "undefined" (sent for media) becomes empty. */
	text: string;
	/** As it came: cleaned before it is output. */
	fileName: string;
	body?: string;
	apiKey?: string;
}

const isPlainObject = (value: unknown): value is IDataObject =>
	typeof value === 'object' && value !== null && !Array.isArray(value);

// Walked without recursion, so a very deep array is refused instead of overflowing the stack (here
// or in n8n's deep copy of the item later). JSON.parse makes `"__proto__"` an own property, but
// `copy[key] = value` would set the copy's prototype instead: it is dropped.
export function boundedCopy(value: unknown): { value: unknown } | { problem: string } {
	if (value === null || typeof value !== 'object') return { value };
	const root: unknown = Array.isArray(value) ? [] : {};
	const stack = [{ from: value, to: root as Record<string, unknown> | unknown[], depth: 1 }];
	let count = 1;
	while (stack.length > 0) {
		const { from, to, depth } = stack.pop()!;
		if (depth > MAX_DEPTH) {
			return {
				problem: `The payload is nested deeper than the limit of ${MAX_DEPTH} levels of arrays and objects`,
			};
		}
		const entries = Object.entries(from);
		count += entries.length;
		if (count > MAX_VALUES) {
			return { problem: 'The payload holds more than the limit of 10,000 values' };
		}
		for (const [key, entry] of entries) {
			if (key === '__proto__') continue;
			let copied: unknown = entry;
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

const asText = (value: unknown): string =>
	typeof value === 'string'
		? value
		: typeof value === 'number' || typeof value === 'boolean'
			? String(value)
			: '';

// A group id is kept exactly as it came: read as digits, it would make up a phone number that
// belongs to someone else.
function contactNumber(value: unknown): string {
	const text = asText(value).trim();
	if (text.length > 64) return text;
	const address = text.replace(/@(c\.us|s\.whatsapp\.net)$/i, '');
	if (address.includes('@')) return text;
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

const isDataUri = (body: string) => /^data:/i.test(body);

function messageCategory(rawType: string, body: string | undefined): MessageCategory {
	const named = rawType.trim().toLowerCase();
	if (named) return Object.hasOwn(CATEGORY_OF_TYPE, named) ? CATEGORY_OF_TYPE[named] : 'other';
	if (body === undefined || !isDataUri(body)) return 'text';
	const kind = body.slice(5, 11).toLowerCase();
	return (
		['image/', 'audio/', 'video/'].includes(kind) ? kind.slice(0, -1) : 'document'
	) as MessageCategory;
}

export function readEvent(fields: IDataObject): IncomingEvent {
	const text = asText(fields.message);
	const body = typeof fields.body === 'string' && fields.body !== '' ? fields.body : undefined;
	const apiKey = fields[API_KEY_FIELD];
	const sender = contactNumber(fields.sender);
	const isGroup = sender.toLowerCase().endsWith('@g.us');
	// Fields a group message may name its author in (guessed: the service notes show none).
	const named = [fields.author, fields.participant].map(contactNumber).find((author) => author);
	return {
		messageId: asText(fields.uuid),
		sender,
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

/** Local spellings are compared by their national part: the account's number tells the country. */
function comparable(
	text: string,
	defaultCountry: string,
): { international?: string; national?: string } {
	if (text.length > 32) return {};
	const digits = text.replace(/\D/g, '');
	if (digits === '') return {};
	if (/^\s*(\+|00)/.test(text) || !digits.startsWith('0')) {
		const international = digits.replace(/^00/, '');
		const parsed = phoneNumbers().parsePhoneNumberFromString(`+${international}`);
		return { international, national: parsed?.nationalNumber };
	}
	const normalized = defaultCountry ? normalizePhone(text, defaultCountry) : undefined;
	if (normalized && 'phone' in normalized) return comparable(normalized.phone, '');
	return { national: digits.replace(/^0+/, '') };
}

function sameNumber(a: string, b: string, defaultCountry: string): boolean {
	const left = comparable(a, defaultCountry);
	const right = comparable(b, defaultCountry);
	if (left.international && right.international) return left.international === right.international;
	return !!left.national && left.national === right.national;
}

export function ignoreReason(event: IncomingEvent, settings: TriggerSettings): string | undefined {
	if (settings.messageTypes.length > 0 && !settings.messageTypes.includes(event.type))
		return `message type "${event.type}" is not selected`;
	if (
		settings.ignoreOwnMessages &&
		event.author &&
		sameNumber(event.author, settings.accountNumber, settings.defaultCountry)
	)
		return "sent by the account's own number";
	return undefined;
}

/** The key in any letter case, at any depth (the payload's depth is bounded before). */
function withoutApiKeys(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(withoutApiKeys);
	if (!isPlainObject(value)) return value;
	return Object.fromEntries(
		Object.entries(value)
			.filter(([key]) => key.toLowerCase() !== API_KEY_FIELD)
			.map(([key, inner]) => [key, withoutApiKeys(inner)]),
	);
}

/** The file the gateway puts in `body` as a base64 data URI (service notes). */
function decodeMedia(body: string, fileName: string) {
	if (!isDataUri(body))
		return {
			problem: 'the media body is not a data URI of the form data:<mime type>;base64,<data>',
		};
	const parsed = parseBase64Text(body);
	if ('problem' in parsed) return { problem: `the media body ${parsed.problem}` };
	const mimeType = parsed.mimeType ?? FALLBACK_MIME_TYPE;
	const data = Buffer.from(parsed.base64, 'base64');
	return { data, mimeType, fileName: cleanFileName(fileName) || `file.${extensionFor(mimeType)}` };
}

const MEDIA_TYPES: ReadonlySet<string> = new Set(['image', 'document', 'audio', 'video']);

/** A file's fields are there exactly when the message carries or announces one, never `""`. */
export async function messageItem(
	ctx: IWebhookFunctions,
	event: IncomingEvent,
	fields: IDataObject,
	binaryPropertyName: string,
): Promise<INodeExecutionData> {
	const { messageId, sender, isGroup, author, senderName, recipient, type, text, body } = event;
	const json: IDataObject = { messageId, chatId: sender, isGroup, sender };
	if (author) json.author = author;
	Object.assign(json, { senderName, recipient, type, text });
	const item: INodeExecutionData = { json };

	const mediaExpected = MEDIA_TYPES.has(type);
	if (body !== undefined && (isDataUri(body) || mediaExpected)) {
		const media = decodeMedia(body, event.fileName);
		if ('problem' in media) {
			json.fileName = cleanFileName(event.fileName) || undefined;
			json.mediaError = media.problem;
		} else {
			const { data, mimeType, fileName } = media;
			const binary = await ctx.helpers.prepareBinaryData(data, fileName, mimeType);
			item.binary = { [binaryPropertyName]: binary };
			Object.assign(json, { fileName, mimeType, fileSize: data.length });
		}
	} else if (mediaExpected) {
		json.fileName = cleanFileName(event.fileName) || undefined;
		json.mediaError = `the ${type} message has no file (its "body" is missing)`;
	}
	if (json.fileName === undefined) delete json.fileName;
	json.receivedAt = new Date().toISOString();
	// Without the API key (a secret) and the media data URI (it is in the binary field).
	const payload = { ...fields };
	if (body !== undefined && isDataUri(body)) delete payload.body;
	json.payload = withoutApiKeys(payload) as IDataObject;
	return item;
}
