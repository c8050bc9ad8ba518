import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { inputError } from '../../../shared/errors';
import type { OperationContext } from '../../../shared/operation';
import { forOperation } from '../../../shared/operation';
import { normalizePhone } from '../../../shared/phone';
import { endpoints } from '../../../shared/transport';
import { messagingOptions } from '../../options';
import { sendResultJson } from './sendResult';

export const description: INodeProperties[] = forOperation('message', 'sendText', [
	{
		displayName: 'Phone Number',
		name: 'phone',
		type: 'string',
		default: '',
		required: true,
		placeholder: '+62 812-8877-6713',
		description: 'Recipient, with country code (or set "Default Country" in the options)',
	},
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

/** The item's "Phone Number" parameter in the API's form, or an error naming the item. */
export function recipientPhone(ctx: IExecuteFunctions, itemIndex: number, defaultCountry: string): string {
	const value = ctx.getNodeParameter('phone', itemIndex, '') as unknown;
	const parsed = normalizePhone(typeof value === 'number' ? String(value) : typeof value === 'string' ? value : '', defaultCountry);
	if ('problem' in parsed) {
		throw inputError(
			ctx.getNode(),
			itemIndex,
			'Phone Number',
			parsed.problem,
			'Use digits with the country code, e.g. +62 812-8877-6713, or set "Default Country" in the options for local numbers.',
		);
	}
	return parsed.phone;
}
