import type { IDataObject, INodeProperties } from 'n8n-workflow';

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

export function asOptions(value: unknown): IDataObject {
	return value && typeof value === 'object' && !Array.isArray(value) ? (value as IDataObject) : {};
}

export function optionText(options: IDataObject, name: string, fallback: string): string {
	const value = options[name];
	const given = typeof value === 'string' || typeof value === 'number' ? String(value).trim() : '';
	return given || fallback;
}
