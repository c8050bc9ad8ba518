import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { inputError } from '../shared/errors';
import { normalizePhone } from '../shared/phone';

/** The "Phone Number" parameter that Send Text, Send File and Check Number share. */
export function phoneProperty(description: string): INodeProperties {
	return {
		displayName: 'Phone Number',
		name: 'phone',
		type: 'string',
		default: '',
		required: true,
		placeholder: '+62 812-8877-6713',
		description,
	};
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
