import type { IDisplayOptions, IExecuteFunctions, INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import type { ItemCall } from './itemScheduler';
import type { Endpoint } from '../transport';

export type { ItemCall } from './itemScheduler';

/**
 * One operation in one file (`<operation>.operation.ts`): its parameters (`description`, shown
 * only for its resource and operation), the endpoint it calls, and the code that runs one item
 * in two steps: `prepare` reads and checks the item's parameters without any request (throwing
 * `inputError` on bad input) and returns the call that makes the request and shapes the output.
 * Every item is prepared before the first request, so bad input is found before anything is
 * sent. `C` is what the node's router hands every operation for the run (an `OperationRun` or a
 * node's extension of it).
 */
export interface OperationModule<C> {
	readonly description: INodeProperties[];
	/** The request the operation makes: the documentation tables and the options' texts are derived from it. */
	readonly endpoint: Endpoint;
	/**
	 * No per-item parameters (Get Token, Get Status …): the operation runs once per run, whatever
	 * the number of input items, and its output item is paired with all of them.
	 */
	readonly once?: boolean;
	prepare(this: IExecuteFunctions, itemIndex: number, run: C): ItemCall | Promise<ItemCall>;
}

/** An entry of a resource's operation selector, with the module that implements it. */
export interface OperationEntry<C> extends INodePropertyOptions {
	readonly value: string;
	readonly action: string;
	readonly description: string;
	/** The canvas subtitle when the name alone does not say what the operation acts on (`Check Number`); default: the name. */
	readonly subtitle?: string;
	readonly module: OperationModule<C>;
}

/** A resource of a node (`<resource>.resource.ts`): its selector entry and its operations, in selector order. */
export interface ResourceDefinition<C> {
	readonly option: INodePropertyOptions & { value: string };
	readonly operations: ReadonlyArray<OperationEntry<C>>;
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
export function buildProperties<C>(resources: ReadonlyArray<ResourceDefinition<C>>): INodeProperties[] {
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
			options: resource.operations.map(({ module: _module, subtitle: _subtitle, ...option }) => option),
			default: resource.defaultOperation,
		},
		...resource.operations.flatMap((op) => op.module.description),
	]);
	return [resourceSelector, ...perResource];
}

/** The module for a resource/operation pair, or undefined. */
export function findOperation<C>(
	resources: ReadonlyArray<ResourceDefinition<C>>,
	resource: string,
	operation: string,
): OperationModule<C> | undefined {
	return resources.find((r) => r.option.value === resource)?.operations.find((o) => o.value === operation)?.module;
}

/**
 * The operations that send a given request field, as the editor names them
 * (`Message → Send Text`): for option descriptions such as the API Version's, so that they
 * stay true when an operation is added.
 */
export function operationsSending<C>(resources: ReadonlyArray<ResourceDefinition<C>>, field: string): string[] {
	return resources.flatMap((resource) =>
		resource.operations
			.filter((operation) => operation.module.endpoint.params.includes(field))
			.map((operation) => `${resource.option.name} → ${operation.name}`),
	);
}

/** `a`, `a and b`, `a, b and c`. */
export function listInWords(items: readonly string[]): string {
	return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
