import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { inputError } from '../../../shared/errors';
import type { OperationContext } from '../../../shared/operation';
import { forOperation } from '../../../shared/operation';
import { endpoints } from '../../../shared/transport';
import { messagingOptions } from '../../options';
import { phoneProperty, recipientPhone } from '../../phoneParameter';
import { sendResultJson } from './sendResult';

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

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	{ client, signal }: OperationContext,
): Promise<INodeExecutionData> {
	const options = messagingOptions(this);
	const phone = recipientPhone(this, itemIndex, options.defaultCountry);
	const text = this.getNodeParameter('text', itemIndex, '') as unknown;
	if (typeof text !== 'string' || text.trim() === '') {
		throw inputError(this.getNode(), itemIndex, 'Text', 'is empty', 'Enter the message text, or map a field that holds it.');
	}
	const result = await client.call(endpoints.sendMessage, { version: options.version, phone, body: text }, { signal });
	return { json: sendResultJson(result, phone) };
}
