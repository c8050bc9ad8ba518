import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

/** Version sent in `params.version`; real clients send their module version in this dotted form. */
export const DEFAULT_MESSAGING_VERSION = '16.0.1.3';

export interface MessagingOptions {
	version: string;
	defaultCountry: string;
	parallel: number;
	delayMs: number;
}

/** Settings that apply to the whole run (read from the first item, like n8n's own nodes do). */
export const optionsProperty: INodeProperties = {
	displayName: 'Options',
	name: 'options',
	type: 'collection',
	placeholder: 'Add option',
	default: {},
	options: [
		{
			displayName: 'API Version',
			name: 'version',
			type: 'string',
			default: DEFAULT_MESSAGING_VERSION,
			description:
				'Value sent as "version" by Send Text, Send File, Check Account and Update Account. Change it only if your gateway asks for another (e.g. v16).',
		},
		{
			displayName: 'Default Country',
			name: 'defaultCountry',
			type: 'string',
			default: '',
			placeholder: 'ID',
			description:
				'Two-letter country code (ISO 3166) used for phone numbers written without a country code, such as 0812 8877 6713',
		},
		{
			displayName: 'Parallel Requests',
			name: 'parallel',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: 50 },
			default: 1,
			description:
				'How many items are sent at the same time. 1 keeps the order of delivery and protects the number from spam bans.',
		},
		{
			displayName: 'Delay Between Requests (Ms)',
			name: 'delayMs',
			type: 'number',
			typeOptions: { minValue: 0 },
			default: 0,
			description: 'Minimum time between the start of two requests, in milliseconds',
		},
	],
};

/**
 * Read once per execution: every item's operation asks for them, and each `getNodeParameter`
 * call goes through n8n's parameter resolution, a real cost at thousands of items per run.
 * Keyed by the execution context, which n8n creates anew for every run of the node.
 */
const optionsByRun = new WeakMap<IExecuteFunctions, MessagingOptions>();

export function messagingOptions(ctx: IExecuteFunctions): MessagingOptions {
	let options = optionsByRun.get(ctx);
	if (!options) {
		options = readOptions(ctx, 0);
		optionsByRun.set(ctx, options);
	}
	return options;
}

function readOptions(ctx: IExecuteFunctions, itemIndex: number): MessagingOptions {
	const options = ctx.getNodeParameter('options', itemIndex, {}) as Partial<MessagingOptions>;
	return {
		version: String(options.version ?? DEFAULT_MESSAGING_VERSION).trim() || DEFAULT_MESSAGING_VERSION,
		defaultCountry: String(options.defaultCountry ?? '').trim(),
		parallel: Number(options.parallel ?? 1) || 1,
		delayMs: Number(options.delayMs ?? 0) || 0,
	};
}
