import { updateDisplayOptions, type IDataObject, type INodeProperties } from 'n8n-workflow';

// Where an operation's fields show, and the Options collection: apart from the router, so that an
// operation's file loads only what describes it.

export function showFor(resource: string, operation: string | string[]) {
	return {
		show: { resource: [resource], operation: Array.isArray(operation) ? operation : [operation] },
	};
}

export function forOperation(
	resource: string,
	operation: string,
	properties: INodeProperties[],
): INodeProperties[] {
	return updateDisplayOptions(showFor(resource, operation), properties);
}

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

/** Real clients send their module version in this dotted form. */
export const DEFAULT_MESSAGING_VERSION = '16.0.1.3';

export function messagingVersionOption(description: string): INodeProperties {
	return {
		displayName: 'API Version',
		name: 'version',
		type: 'string',
		default: DEFAULT_MESSAGING_VERSION,
		description,
	};
}
