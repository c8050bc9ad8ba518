import type { IDataObject } from 'n8n-workflow';

export interface SessionAnswer {
	/** The gateway's word (`authenticated`, `got qr code`, …), or one derived from the answer. */
	status: string;
	connected: boolean;
	/** Whether the answer says anything about the session at all. */
	stated: boolean;
	deviceStatus?: string;
	qrCode?: string;
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
