import type {
	IDataObject,
	INodeExecutionData,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';

import { claimDelivery, type Claim } from './deliveries';
import { ignoreReason } from './filters';
import { cleanFileName } from '../shared/fileName';
import { decodeDataUri, looksLikeDataUri } from './media';
import { readTriggerSettings } from './parameters';
import { eventFields, rawPayload, readEvent, type IncomingEvent } from './payload';
import { readJsonBody } from './requestBody';
import { registeredNumberOf } from './registration';
import { apiKeyProblem, generatedSecretProblem, sharedSecretProblem } from './verification';

// Every answer is JSON: `received: true` when accepted or deliberately ignored (200), `received:
// false` with the error when refused (401, 400, 503).
export async function receiveMessage(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const settings = readTriggerSettings(this);
	// An empty Account Number: the number activation read from the gateway and registered.
	if (settings.accountNumber.trim() === '')
		settings.accountNumber =
			registeredNumberOf(this.getWorkflowStaticData('node'), this.getMode() === 'manual') ?? '';

	// Checked before the body is parsed: a stranger's body is not worth the work.
	const secretProblem =
		sharedSecretProblem(this, settings) ?? (await generatedSecretProblem(this, settings));
	if (secretProblem) return refuse(this, 401, secretProblem);

	const body = await readJsonBody(this, settings.maxBodyBytes);
	if ('problem' in body) return refuse(this, 400, body.problem);
	const read = eventFields(body.json);
	if ('problem' in read) return refuse(this, 400, read.problem);
	const event = readEvent(read.fields);

	if (settings.verification === 'apiKey') {
		const problem = await apiKeyProblem(this, event);
		if (problem) return refuse(this, 401, problem);
	}

	const reason = ignoreReason(event, settings);
	if (reason) return { webhookResponse: { received: true, ignored: reason } };

	let claim: Extract<Claim, { duplicate: false }> | undefined;
	if (settings.skipRepeatedDeliveries && event.messageId !== '') {
		let claimed: Claim;
		try {
			claimed = await claimDelivery(this, event.messageId, settings.repeatWindowMs);
		} catch (error) {
			// Queue mode without its Redis: n8n cannot run the execution either; the gateway retries later.
			return refuse(this, 503, `${(error as Error).message}; try again later`);
		}
		if (claimed.duplicate) {
			return {
				webhookResponse: {
					received: true,
					ignored: 'repeated delivery of a message already received',
					messageId: event.messageId,
				},
			};
		}
		claim = claimed;
	}
	// The claim is released if the item cannot be made: the gateway's retry must not be a repeat.
	let item: INodeExecutionData | undefined;
	try {
		item = await messageItem(this, event, read.fields, settings.binaryPropertyName);
	} finally {
		if (!item) await claim?.release();
	}
	return {
		webhookResponse: { received: true, messageId: event.messageId },
		workflowData: [[item]],
	};
}

/** n8n answers `webhookResponse` with the webhook's fixed 200: another status needs `res`. */
function refuse(
	ctx: IWebhookFunctions,
	status: 400 | 401 | 503,
	error: string,
): IWebhookResponseData {
	const res = ctx.getResponseObject();
	const json = JSON.stringify({ received: false, error });
	res.writeHead(status, {
		'content-type': 'application/json; charset=utf-8',
		'content-length': Buffer.byteLength(json),
	});
	res.end(json);
	return { noWebhookResponse: true };
}

const MEDIA_TYPES: ReadonlySet<string> = new Set(['image', 'document', 'audio', 'video']);

/** A file's fields are there exactly when the message carries or announces one, never `""`. */
async function messageItem(
	ctx: IWebhookFunctions,
	event: IncomingEvent,
	fields: IDataObject,
	binaryPropertyName: string,
): Promise<INodeExecutionData> {
	const json: IDataObject = {
		messageId: event.messageId,
		chatId: event.chatId,
		isGroup: event.isGroup,
		sender: event.sender,
	};
	if (event.author) json.author = event.author;
	Object.assign(json, {
		senderName: event.senderName,
		recipient: event.recipient,
		type: event.type,
		text: event.text,
	});
	const item: INodeExecutionData = { json };

	const mediaExpected = MEDIA_TYPES.has(event.type);
	if (event.body !== undefined && (looksLikeDataUri(event.body) || mediaExpected)) {
		const media = decodeDataUri(event.body, event.fileName);
		if ('problem' in media) {
			const fileName = cleanFileName(event.fileName);
			if (fileName) json.fileName = fileName;
			json.mediaError = media.problem;
		} else {
			item.binary = {
				[binaryPropertyName]: await ctx.helpers.prepareBinaryData(
					media.data,
					media.fileName,
					media.mimeType,
				),
			};
			json.fileName = media.fileName;
			json.mimeType = media.mimeType;
			json.fileSize = media.data.length;
		}
	} else if (mediaExpected) {
		const fileName = cleanFileName(event.fileName);
		if (fileName) json.fileName = fileName;
		json.mediaError = `the ${event.type} message has no file (its "body" is missing)`;
	}
	json.receivedAt = new Date().toISOString();
	json.payload = rawPayload(fields);
	return item;
}
