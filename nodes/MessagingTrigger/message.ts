import type { IDataObject, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';

import { FALLBACK_MIME_TYPE, parseBase64Text } from '../shared/dataUri';
import { cleanFileName, extensionFor } from '../shared/fileName';
import { nationalNumber, normalizePhone } from '../shared/phone';
import { MESSAGE_CATEGORIES, type MessageCategory, type TriggerSettings } from './parameters';

const API_KEY_FIELD = 'x-api-key';
const MAX_DEPTH = 32;
const MAX_VALUES = 10_000;

export const isPlainObject = (value: unknown): value is IDataObject =>
	typeof value === 'object' && value !== null && !Array.isArray(value);

// Walked without recursion, so a very deep array is refused instead of overflowing the stack (here
// or in n8n's deep copy of the item later). JSON.parse makes `"__proto__"` an own property, but
// `copy[key] = value` would set the copy's prototype instead: it is dropped.
export function boundedCopy(value: unknown): { value: unknown } | { problem: string } {
	const root: Record<string, unknown> = {};
	const stack: Array<[object, Record<string, unknown>, number]> = [[{ value }, root, 0]];
	let count = 0;
	for (let next = stack.pop(); next; next = stack.pop()) {
		const [from, to, depth] = next;
		if (depth > MAX_DEPTH)
			return {
				problem: `The payload is nested deeper than the limit of ${MAX_DEPTH} levels of arrays and objects`,
			};
		const entries = Object.entries(from);
		if ((count += entries.length) > MAX_VALUES)
			return { problem: 'The payload holds more than the limit of 10,000 values' };
		for (const [key, entry] of entries) {
			if (key === '__proto__') continue;
			const isObject = entry !== null && typeof entry === 'object';
			to[key] = isObject ? (Array.isArray(entry) ? [] : {}) : entry;
			if (isObject) stack.push([entry, to[key] as Record<string, unknown>, depth + 1]);
		}
	}
	return { value: root.value };
}

const asText = (value: unknown): string =>
	['string', 'number', 'boolean'].includes(typeof value) ? String(value) : '';

// A group id is kept exactly as it came: read as digits, it would make up a phone number that
// belongs to someone else.
function contactNumber(value: unknown): string {
	const text = asText(value).trim();
	if (text.length > 64) return text;
	const address = text.replace(/@(c\.us|s\.whatsapp\.net)$/i, '');
	if (address.includes('@')) return text;
	return /^\+?[\d\s().-]+$/.test(address) && /\d/.test(address) ? address.replace(/\D/g, '') : text;
}

/** The gateway's names for a category, besides the category's own name. */
const ALIASES = { chat: 'text', file: 'document', ptt: 'audio', voice: 'audio' } as const;

const isDataUri = (body: string | undefined): body is string =>
	body !== undefined && /^data:/i.test(body);

function messageCategory(rawType: string, body: string | undefined): MessageCategory {
	const named = rawType.trim().toLowerCase();
	if (Object.hasOwn(ALIASES, named)) return ALIASES[named as keyof typeof ALIASES];
	if (named) return MESSAGE_CATEGORIES.find((category) => category === named) ?? 'other';
	if (!isDataUri(body)) return 'text';
	const kind = /^data:(image|audio|video)\//i.exec(body)?.[1].toLowerCase();
	return (kind ?? 'document') as MessageCategory;
}

export type IncomingEvent = ReturnType<typeof readEvent>;

// Some senders post the fields flat instead of under JSON-RPC `params`; every field is optional
// (older senders omit several).
export function readEvent(payload: IDataObject) {
	const fields = isPlainObject(payload.params) ? payload.params : payload;
	const text = asText(fields.message);
	const body = typeof fields.body === 'string' && fields.body !== '' ? fields.body : undefined;
	const sender = contactNumber(fields.sender);
	const isGroup = sender.toLowerCase().endsWith('@g.us');
	// Fields a group message may name its author in (guessed: the service notes show none).
	const named = [fields.author, fields.participant].map(contactNumber).find((author) => author);
	return {
		fields,
		messageId: asText(fields.uuid),
		sender,
		isGroup,
		// Who wrote: the customer in a direct chat, the member named by the payload in a group.
		author: isGroup ? named : sender || named,
		senderName: asText(fields.sendername),
		recipient: contactNumber(fields.recipient),
		type: messageCategory(asText(fields.type), body),
		// The gateway sends the literal "undefined" for media.
		text: text.trim() === 'undefined' ? '' : text,
		fileName: asText(fields.filename),
		body,
		apiKey: asText(fields[API_KEY_FIELD]),
	};
}

/** Local spellings are compared by their national part: the account's number tells the country. */
function comparable(text: string, country: string): { international?: string; national?: string } {
	if (text.length > 32) return {};
	const digits = text.replace(/\D/g, '');
	if (digits === '') return {};
	if (/^\s*(\+|00)/.test(text) || !digits.startsWith('0')) {
		const international = digits.replace(/^00/, '');
		return { international, national: nationalNumber(international) };
	}
	const normalized = country ? normalizePhone(text, country) : undefined;
	if (normalized && 'phone' in normalized) return comparable(normalized.phone, '');
	return { national: digits.replace(/^0+/, '') };
}

export function ignoreReason(event: IncomingEvent, settings: TriggerSettings): string | undefined {
	if (settings.messageTypes.length > 0 && !settings.messageTypes.includes(event.type))
		return `message type "${event.type}" is not selected`;
	if (!settings.ignoreOwnMessages || !event.author) return undefined;
	const author = comparable(event.author, settings.defaultCountry);
	const account = comparable(settings.accountNumber, settings.defaultCountry);
	const own =
		author.international && account.international
			? author.international === account.international
			: !!author.national && author.national === account.national;
	return own ? "sent by the account's own number" : undefined;
}

const MEDIA_TYPES: ReadonlySet<string> = new Set(['image', 'document', 'audio', 'video']);

/** A file's fields are there exactly when the message carries or announces one, never `""`. */
export async function messageItem(
	ctx: IWebhookFunctions,
	event: IncomingEvent,
	binaryPropertyName: string,
): Promise<INodeExecutionData> {
	const { messageId, sender, isGroup, author, senderName, recipient, type, text, body } = event;
	const json: IDataObject = { messageId, chatId: sender, isGroup, sender };
	if (author) json.author = author;
	Object.assign(json, { senderName, recipient, type, text });
	const item: INodeExecutionData = { json };

	// The gateway puts the file in `body` as a base64 data URI (service notes).
	let mediaError: string | undefined;
	if (isDataUri(body)) {
		const parsed = parseBase64Text(body);
		if ('problem' in parsed) mediaError = `the media body ${parsed.problem}`;
		else {
			const mimeType = parsed.mimeType ?? FALLBACK_MIME_TYPE;
			const data = Buffer.from(parsed.base64, 'base64');
			const fileName = cleanFileName(event.fileName) || `file.${extensionFor(mimeType)}`;
			const binary = await ctx.helpers.prepareBinaryData(data, fileName, mimeType);
			item.binary = { [binaryPropertyName]: binary };
			Object.assign(json, { fileName, mimeType, fileSize: data.length });
		}
	} else if (MEDIA_TYPES.has(type)) {
		mediaError =
			body === undefined
				? `the ${type} message has no file (its "body" is missing)`
				: 'the media body is not a data URI of the form data:<mime type>;base64,<data>';
	}
	if (mediaError) {
		const fileName = cleanFileName(event.fileName);
		if (fileName) json.fileName = fileName;
		json.mediaError = mediaError;
	}
	json.receivedAt = new Date().toISOString();
	// Without the API key (a secret, in any letter case and at any depth) and the media data URI
	// (it is in the binary field).
	const payload = { ...event.fields };
	if (isDataUri(body)) delete payload.body;
	json.payload = JSON.parse(JSON.stringify(payload), (key, value: unknown) =>
		key.toLowerCase() === API_KEY_FIELD ? undefined : value,
	) as IDataObject;
	return item;
}
