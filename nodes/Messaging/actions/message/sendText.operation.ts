import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { ItemCall } from '../../../shared/execution/router';
import { forOperation } from '../../../shared/properties';
import { textParameter } from '../../../shared/execution/operationRun';
import { endpoints } from '../../../shared/transport';
import type { MessagingRun } from '../../run';
import { phoneProperty, recipientPhone } from '../../helpers/recipient';

export const description: INodeProperties[] = forOperation('message', 'sendText', [
	phoneProperty('Recipient, with country code (or set "Default Country" in the options)'),
	{
		displayName: 'Text',
		name: 'text',
		type: 'string',
		typeOptions: { rows: 4 },
		default: '',
		required: true,
		description: 'The message to send',
	},
]);

export const endpoint = endpoints.sendMessage;

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	run: MessagingRun,
): Promise<ItemCall> {
	const phone = recipientPhone(run, itemIndex);
	const text = textParameter(run, itemIndex, 'text', 'Text');
	const fix = 'Enter the message text, or map a field that holds it.';
	if (text.trim() === '') throw run.fail(itemIndex, 'Text', 'is empty', fix);
	const { version } = run.options(itemIndex);
	await run.sender.identify(itemIndex, { operation: 'sendText', phone, content: () => [text] });
	const request = async () =>
		await run.client.call(endpoint, { version, phone, body: text }, { signal: run.signal });
	return async () => await run.sender.send(itemIndex, phone, request);
}
