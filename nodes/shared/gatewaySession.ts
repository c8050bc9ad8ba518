import type { IDataObject } from 'n8n-workflow';

/**
 * The gateway's WhatsApp session as its Login, Get Status and Get QR Code answers show it, read
 * the same way by the Messaging node (Session operations) and the Messaging Account Trigger.
 * They answer alike: `qrCode` (a payload or a data:image URI) while waiting for a scan,
 * `accountStatus` / `device_status` once logged in, and sometimes a hint (`error`,
 * `message.whatsappStatus.message`).
 */
export interface SessionAnswer {
	/** The gateway's status word (`authenticated`, `got qr code`, `init`, …), or one derived from the answer. */
	status: string;
	connected: boolean;
	/** Whether the answer says anything about the session (a status word or a QR code). */
	stated: boolean;
	deviceStatus?: string;
	/** The QR to scan: a raw payload, or a data:image URI on the older route. */
	qrCode?: string;
	/** A human hint the gateway adds when it cannot give a QR code or a status. */
	hint?: string;
}

const CONNECTED_WORDS = new Set(['authenticated', 'connected', 'open', 'ready', 'online']);

export function readSessionAnswer(result: unknown): SessionAnswer {
	const answer = (result && typeof result === 'object' ? result : {}) as IDataObject;
	const accountStatus = text(answer.accountStatus ?? answer.account_status ?? answer.status);
	const deviceStatus = text(answer.device_status ?? answer.deviceStatus);
	const qrCode = text(answer.qrCode ?? answer.qr_code ?? answer.qr);
	const connected =
		(accountStatus !== undefined && CONNECTED_WORDS.has(accountStatus.toLowerCase())) ||
		(deviceStatus !== undefined && CONNECTED_WORDS.has(deviceStatus.toLowerCase()));
	const session: SessionAnswer = {
		status:
			accountStatus ??
			(connected ? 'authenticated' : qrCode ? 'got qr code' : (deviceStatus ?? 'unknown')),
		connected,
		stated: accountStatus !== undefined || deviceStatus !== undefined || qrCode !== undefined,
	};
	if (deviceStatus !== undefined) session.deviceStatus = deviceStatus;
	if (qrCode !== undefined) session.qrCode = qrCode;
	const hint = hintOf(answer);
	if (hint !== undefined) session.hint = hint;
	return session;
}

function text(value: unknown): string | undefined {
	return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function hintOf(answer: IDataObject): string | undefined {
	const nested =
		answer.message && typeof answer.message === 'object'
			? (answer.message as IDataObject)
			: undefined;
	const whatsappStatus =
		nested?.whatsappStatus && typeof nested.whatsappStatus === 'object'
			? (nested.whatsappStatus as IDataObject)
			: undefined;
	return (
		text(answer.error) ??
		text(whatsappStatus?.message) ??
		text(nested?.message) ??
		text(answer.message)
	);
}
