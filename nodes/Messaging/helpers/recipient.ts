import type { INodeProperties } from 'n8n-workflow';

import { textParameter, type RunContext } from '../../shared/execution/operationRun';
import { normalizePhone } from '../../shared/phone';

// A number as people write it, read in the API's form: digits with the country code.

export const PHONE_NUMBER_HINT =
	'Include the country code, e.g. +62 812-8877-6713, or add the "Default Country" option for local numbers such as 0812…';

export function phoneProperty(description: string): INodeProperties {
	return {
		displayName: 'Phone Number',
		name: 'phone',
		type: 'string',
		default: '',
		required: true,
		placeholder: '+62 812-8877-6713',
		hint: PHONE_NUMBER_HINT,
		description,
	};
}

type PhoneRun = RunContext<{ defaultCountry: string }>;

export function recipientPhone(run: PhoneRun, itemIndex: number): string {
	return phoneParameter(run, itemIndex, {
		name: 'phone',
		field: 'Phone Number',
		fix: 'Use digits with the country code, e.g. +62 812-8877-6713, or set "Default Country" in the options for local numbers.',
	});
}

export function phoneParameter(
	run: PhoneRun,
	itemIndex: number,
	{ name, field, fix }: { name: string; field: string; fix: string },
): string {
	const text = textParameter(run, itemIndex, name, field, fix);
	const parsed = normalizePhone(text, run.options(itemIndex).defaultCountry);
	if ('problem' in parsed) throw run.fail(itemIndex, field, parsed.problem, fix);
	return parsed.phone;
}
