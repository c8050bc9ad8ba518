import type { IDisplayOptions, INodeProperties } from 'n8n-workflow';

// Where an operation's fields show: apart from the router, so that an operation's file loads
// only what describes it.

export function showFor(resource: string, operation: string | string[]): IDisplayOptions {
	return {
		show: { resource: [resource], operation: Array.isArray(operation) ? operation : [operation] },
	};
}

export function forOperation(
	resource: string,
	operation: string,
	properties: INodeProperties[],
): INodeProperties[] {
	return properties.map((property) => ({
		...property,
		displayOptions: showFor(resource, operation),
	}));
}
