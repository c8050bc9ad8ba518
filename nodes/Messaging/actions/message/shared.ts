import type { IDataObject } from 'n8n-workflow';

/** The output of a send: normalised fields first, the server's answer untouched under `response`. */
export function sendResultJson(result: unknown, phone: string): IDataObject {
	const message = (result as { message?: { id?: unknown; message?: unknown } } | undefined)?.message;
	return {
		sent: true,
		id: typeof message?.id === 'string' ? message.id : null,
		phone,
		status: typeof message?.message === 'string' ? message.message : null,
		response: (result ?? null) as IDataObject,
	};
}
