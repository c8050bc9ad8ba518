import type {
	IBinaryKeyData,
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

import { inputError } from '../../shared/errors';
import type { ItemCall } from '../../shared/execution/router';
import { readSessionAnswer } from '../../shared/gatewaySession';
import { qrImage } from '../../shared/qrImage';
import type { Endpoint } from '../../shared/transport';
import { textParameter } from '../../shared/execution/operationRun';
import type { MessagingRun } from '../parameters';

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

export function sessionExecute(endpoint: Endpoint) {
	return function execute(this: IExecuteFunctions, itemIndex: number, run: MessagingRun): ItemCall {
		const field = qrField(run, itemIndex);
		return async () =>
			await sessionOutput(this, field, await run.client.call(endpoint, {}, { signal: run.signal }));
	};
}

async function sessionOutput(
	ctx: IExecuteFunctions,
	field: string,
	result: unknown,
): Promise<INodeExecutionData> {
	const session = readSessionAnswer(result);
	const json: IDataObject = {
		status: session.status,
		connected: session.connected,
		qrAvailable: session.qrCode !== undefined,
	};
	if (session.deviceStatus !== undefined) json.deviceStatus = session.deviceStatus;
	if (session.hint !== undefined) json.message = session.hint;
	json.response = (result ?? null) as IDataObject;

	if (session.qrCode === undefined) return { json };
	const qr = await qrImage(session.qrCode);
	const binary: IBinaryKeyData = {
		[field]: await ctx.helpers.prepareBinaryData(qr.image, qr.fileName, qr.mimeType),
	};
	json.qrImageField = field;
	return { json, binary };
}

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
