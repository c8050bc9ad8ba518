import type {
	IBinaryKeyData,
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

import { inputError } from '../../shared/errors';
import type { ItemCall } from '../../shared/execution/router';
import { qrImage } from './qrImage';
import type { Endpoint } from '../../shared/transport';
import { textParameter } from '../../shared/execution/operationRun';
import type { MessagingRun } from '../parameters';

/** The field every session operation offers: where the QR image goes when there is one. */
export const qrImageField: INodeProperties = {
	displayName: 'Put QR Image in Field',
	name: 'qrBinaryPropertyName',
	type: 'string',
	default: 'qrCode',
	required: true,
	hint: "While the account waits for a scan, the QR code is in the output's Binary tab: scan it in WhatsApp under Linked devices → Link a device",
	description:
		'Name of the output binary field that receives the login QR code as a PNG image (only when the gateway is waiting for a scan)',
};

/** The execute step of Login, Get Status and Get QR Code: the field checked, then one call. */
export function sessionExecute(endpoint: Endpoint) {
	return function execute(this: IExecuteFunctions, itemIndex: number, run: MessagingRun): ItemCall {
		const field = qrField(run, itemIndex);
		return async () =>
			await sessionOutput(this, field, await run.client.call(endpoint, {}, { signal: run.signal }));
	};
}

const CONNECTED_WORDS = new Set(['authenticated', 'connected', 'open', 'ready', 'online']);

/**
 * One output item for Login, Get Status and Get QR Code. They answer alike: `qrCode` (a payload
 * or a data:image URI) while waiting for a scan, `accountStatus` / `device_status` once logged
 * in, and sometimes a hint (`error`, `message.whatsappStatus.message`).
 */
async function sessionOutput(
	ctx: IExecuteFunctions,
	field: string,
	result: unknown,
): Promise<INodeExecutionData> {
	const answer = (result && typeof result === 'object' ? result : {}) as IDataObject;
	const accountStatus = text(answer.accountStatus ?? answer.account_status ?? answer.status);
	const deviceStatus = text(answer.device_status ?? answer.deviceStatus);
	const qrCode = text(answer.qrCode ?? answer.qr_code ?? answer.qr);
	const connected =
		(accountStatus !== undefined && CONNECTED_WORDS.has(accountStatus.toLowerCase())) ||
		(deviceStatus !== undefined && CONNECTED_WORDS.has(deviceStatus.toLowerCase()));

	const json: IDataObject = {
		status:
			accountStatus ??
			(connected ? 'authenticated' : qrCode ? 'got qr code' : (deviceStatus ?? 'unknown')),
		connected,
		qrAvailable: qrCode !== undefined,
	};
	if (deviceStatus !== undefined) json.deviceStatus = deviceStatus;
	const hint = hintOf(answer);
	if (hint !== undefined) json.message = hint;
	json.response = (result ?? null) as IDataObject;

	if (qrCode === undefined) return { json };
	const qr = await qrImage(qrCode);
	const binary: IBinaryKeyData = {
		[field]: await ctx.helpers.prepareBinaryData(qr.image, qr.fileName, qr.mimeType),
	};
	json.qrImageField = field;
	return { json, binary };
}

/** The item's "Put QR Image in Field", checked before the request. */
function qrField(run: MessagingRun, itemIndex: number): string {
	const name = textParameter(
		run,
		itemIndex,
		'qrBinaryPropertyName',
		'Put QR Image in Field',
	).trim();
	if (!name) {
		throw inputError(
			run.node,
			itemIndex,
			'Put QR Image in Field',
			'is empty',
			'Enter a field name for the QR image, e.g. qrCode.',
		);
	}
	return name;
}

function text(value: unknown): string | undefined {
	return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** A human hint the gateway adds when it cannot give a QR code or a status. */
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
