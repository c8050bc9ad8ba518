import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { ItemCall, OperationModule } from '../../shared/execution/router';
import { forOperation } from '../../shared/properties';
import { readSessionAnswer } from '../../shared/gateway';
import { qrImage } from '../../shared/qrImage';
import type { Endpoint } from '../../shared/transport';
import { textParameter } from '../../shared/execution/operationRun';
import type { MessagingRun } from '../run';

const qrImageField: INodeProperties = {
	displayName: 'Put QR Image in Field',
	name: 'qrBinaryPropertyName',
	type: 'string',
	default: 'qrCode',
	required: true,
	hint: "While the account waits for a scan, the QR code is in the output's Binary tab: scan it in WhatsApp under Linked devices → Link a device",
	description:
		'Name of the output binary field that receives the login QR code as a PNG image (only when the gateway is waiting for a scan)',
};

/** Session → Get QR Code, Get Status, Login: one field, one answer, three endpoints. */
export function sessionOperation(
	operation: string,
	endpoint: Endpoint,
): OperationModule<MessagingRun> {
	const description = forOperation('session', operation, [qrImageField]);
	return { description, endpoint, once: true, execute };
	function execute(this: IExecuteFunctions, itemIndex: number, run: MessagingRun): ItemCall {
		const field = 'Put QR Image in Field';
		const name = textParameter(run, itemIndex, 'qrBinaryPropertyName', field).trim();
		if (!name) {
			const fix = 'Enter a field name for the QR image, e.g. qrCode.';
			throw run.fail(itemIndex, field, 'is empty', fix);
		}
		return async () => {
			const result = await run.client.call(endpoint, {}, { signal: run.signal });
			const { status, connected, qrCode, deviceStatus, hint } = readSessionAnswer(result);
			const json: IDataObject = { status, connected, qrAvailable: qrCode !== undefined };
			if (deviceStatus !== undefined) json.deviceStatus = deviceStatus;
			if (hint !== undefined) json.message = hint;
			json.response = (result ?? null) as IDataObject;
			if (qrCode === undefined) return { json };
			const qr = await qrImage(qrCode);
			const binary = await this.helpers.prepareBinaryData(qr.image, qr.fileName, qr.mimeType);
			return { json: { ...json, qrImageField: name }, binary: { [name]: binary } };
		};
	}
}
