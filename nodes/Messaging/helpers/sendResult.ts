import type { IDataObject } from 'n8n-workflow';

/**
 * The output of a send: normalised fields first, the server's answer untouched under `response`.
 * Only reached when the gateway said the message was sent (the transport reads `message.sent`
 * and fails the item otherwise), so `sent: true` is the gateway's word, not the node's.
 * `message` is the gateway's own text about it, as in every operation's output.
 */
export function sendResultJson(result: unknown, phone: string): IDataObject {
	const message = (result as { message?: { id?: unknown; message?: unknown } } | undefined)?.message;
	const id = message?.id;
	return {
		sent: true,
		id: typeof id === 'string' || typeof id === 'number' ? String(id) : null,
		phone,
		message: typeof message?.message === 'string' ? message.message : null,
		response: (result ?? null) as IDataObject,
	};
}
