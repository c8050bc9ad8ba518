import type { IDataObject, INodeProperties } from 'n8n-workflow';

/**
 * The "Options" collection of the nodes (settings that apply to the whole run) and the options
 * more than one node offers, defined once.
 */

export function optionsCollection(
	options: INodeProperties[],
	extra: Partial<INodeProperties> = {},
): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		...extra,
		options,
	};
}

/** "Default Country": how phone numbers written without a country code are read. */
export function defaultCountryOption(description: string): INodeProperties {
	return {
		displayName: 'Default Country',
		name: 'defaultCountry',
		type: 'string',
		default: '',
		placeholder: 'ID',
		description,
	};
}

/** The Options collection's value as n8n gives it (an empty record when nothing is set). */
export function asOptions(value: unknown): IDataObject {
	return value && typeof value === 'object' && !Array.isArray(value) ? (value as IDataObject) : {};
}

/** A text option, trimmed; `fallback` when it is not set, empty, or neither text nor a number. */
export function optionText(options: IDataObject, name: string, fallback: string): string {
	const value = options[name];
	const given = typeof value === 'string' || typeof value === 'number' ? String(value).trim() : '';
	return given || fallback;
}
