import type { IDisplayOptions, IExecuteFunctions, INodeExecutionData, INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import type { ApiClient } from './transport';

/** What an operation gets besides n8n's `this`: the transport client and the cancel signal. */
export interface OperationContext {
	readonly client: ApiClient;
	readonly signal?: AbortSignal;
}

/**
 * One operation in one file: its parameters (`description`, shown only for its resource and
 * operation) next to the code that runs one item (`execute`).
 */
export interface OperationModule {
	readonly description: INodeProperties[];
	execute(this: IExecuteFunctions, itemIndex: number, context: OperationContext): Promise<INodeExecutionData | INodeExecutionData[]>;
}

/** An entry of a resource's operation selector, with the module that implements it. */
export interface OperationEntry extends INodePropertyOptions {
	readonly value: string;
	readonly action: string;
	readonly module: OperationModule;
}

export interface ResourceDefinition {
	readonly option: INodePropertyOptions & { value: string };
	readonly operations: readonly OperationEntry[];
	readonly defaultOperation: string;
}

export function showFor(resource: string, operation: string | string[]): IDisplayOptions {
	return { show: { resource: [resource], operation: Array.isArray(operation) ? operation : [operation] } };
}

/** Adds `displayOptions` for one resource/operation to every property of an operation. */
export function forOperation(resource: string, operation: string, properties: INodeProperties[]): INodeProperties[] {
	return properties.map((property) => ({ ...property, displayOptions: showFor(resource, operation) }));
}

/** The resource selector, each resource's operation selector and every operation's fields. */
export function buildProperties(resources: readonly ResourceDefinition[]): INodeProperties[] {
	// The rule cannot see computed defaults; both selectors below do have one.
	// eslint-disable-next-line n8n-nodes-base/node-param-default-missing
	const resourceSelector: INodeProperties = {
		displayName: 'Resource',
		name: 'resource',
		type: 'options',
		noDataExpression: true,
		options: resources.map((r) => r.option),
		default: resources[0].option.value,
	};
	const perResource = resources.flatMap((resource): INodeProperties[] => [
		// eslint-disable-next-line n8n-nodes-base/node-param-default-missing
		{
			displayName: 'Operation',
			name: 'operation',
			type: 'options',
			noDataExpression: true,
			displayOptions: { show: { resource: [resource.option.value] } },
			options: resource.operations.map(({ module: _module, ...option }) => option),
			default: resource.defaultOperation,
		},
		...resource.operations.flatMap((op) => op.module.description),
	]);
	return [resourceSelector, ...perResource];
}

/** The module for a resource/operation pair, or undefined. */
export function findOperation(
	resources: readonly ResourceDefinition[],
	resource: string,
	operation: string,
): OperationModule | undefined {
	return resources.find((r) => r.option.value === resource)?.operations.find((o) => o.value === operation)?.module;
}
