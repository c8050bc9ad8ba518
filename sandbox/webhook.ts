/**
 * Incoming messages: the sandbox plays the gateway and POSTs an event to the account's
 * registered webhook, with the fields a public receiver of the real service reads.
 */
import { randomBytes, randomUUID } from 'crypto';
import { request, type Dispatcher } from 'undici';
import type { AccountState } from './state';
import type { IncomingMessage, IncomingResult } from './types';

export const DEFAULT_SENDER = '6281200000001';
const DEFAULT_SENDER_NAME = 'Sandbox Sender';
export const DEFAULT_TEXT = 'Hello from the sandbox';

function mediaTypeOf(msg: IncomingMessage, mimeType: string): string {
	if (msg.type) return msg.type;
	return mimeType.startsWith('image/') ? 'image' : 'document';
}

/** The event fields; media adds `filename` and a data-URI `body` like the real gateway. */
function buildIncomingPayload(account: AccountState, msg: IncomingMessage): Record<string, string> {
	const isMedia = msg.fileBase64 !== undefined;
	const mimeType = msg.mimeType ?? 'application/octet-stream';
	const payload: Record<string, string> = { uuid: msg.uuid ?? randomUUID() };
	if (msg.apiKey !== undefined) payload['x-api-key'] = msg.apiKey;
	Object.assign(payload, {
		sender: msg.sender ?? DEFAULT_SENDER,
		...(msg.author === undefined ? {} : { author: msg.author }),
		recipient: account.whatsappNumber ?? '',
		// The real gateway sends the literal string "undefined" as the text of a media message.
		message: msg.message ?? (isMedia ? 'undefined' : DEFAULT_TEXT),
		sendername: msg.senderName ?? DEFAULT_SENDER_NAME,
		senderkeyhash: randomBytes(16).toString('hex'),
		recipientkeyhash: randomBytes(16).toString('hex'),
		type: isMedia ? mediaTypeOf(msg, mimeType) : (msg.type ?? 'text'),
	});
	if (msg.filename !== undefined || isMedia) payload.filename = msg.filename ?? 'file';
	if (isMedia) payload.body = `data:${mimeType};base64,${msg.fileBase64}`;
	return payload;
}

function webhookUrl(
	webhook: string,
	query: Record<string, string> | undefined,
	origin: string | undefined,
): string {
	const url = new URL(webhook);
	if (origin) {
		const other = new URL(origin);
		url.protocol = other.protocol;
		url.host = other.host;
	}
	for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, value);
	return url.toString();
}

export async function deliverIncoming(
	account: AccountState,
	msg: IncomingMessage,
	flatPayload: boolean,
	dispatcher: Dispatcher,
): Promise<IncomingResult> {
	if (!account.whatsappWebhook) {
		throw new Error(
			`Account ${account.clientId} has no registered webhook: call Update Account with whatsapp_webhook first`,
		);
	}
	const url = webhookUrl(account.whatsappWebhook, msg.query, msg.origin);
	const payload = buildIncomingPayload(account, msg);
	const text =
		msg.rawBody ?? JSON.stringify(flatPayload ? payload : { jsonrpc: '2.0', params: payload });
	const contentType = msg.charset ? `application/json; charset=${msg.charset}` : 'application/json';
	const response = await request(url, {
		method: 'POST',
		headers: { 'content-type': contentType, ...msg.headers },
		body: msg.charset ? Buffer.from(text, msg.charset) : text,
		dispatcher,
	});
	return { url, status: response.statusCode, body: await response.body.text() };
}

/** Why a Messaging Trigger ignored the message, from its answer (`{"received": true, "ignored": "…"}`). */
export function ignoredReason(body: string): string | undefined {
	if (body.length > 4096) return undefined;
	try {
		const ignored = (JSON.parse(body) as { ignored?: unknown } | null)?.ignored;
		return typeof ignored === 'string' ? ignored.slice(0, 200) : undefined;
	} catch {
		return undefined;
	}
}
