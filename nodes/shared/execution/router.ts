import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
	INodePropertyOptions,
} from 'n8n-workflow';

import type { OperationRun, RunBasics } from './operationRun';
import { showFor } from '../properties';
import { operationDocumentationUrl } from '../documentationUrl';
import type { Endpoint } from '../transport';

export type ItemCall = () => Promise<INodeExecutionData | INodeExecutionData[]>;

/** `execute` runs for every item before any request: it reads and checks, and returns the call. */
export interface OperationModule<C> {
	readonly description: INodeProperties[];
	/** The docs tables and option texts are derived from it; none for a step without a request. */
	readonly endpoint?: Endpoint;
	readonly once?: boolean;
	execute(this: IExecuteFunctions, itemIndex: number, run: C): ItemCall | Promise<ItemCall>;
	/** After the run, with its output (Send and Wait: the wait for the answers). */
	finish?(this: IExecuteFunctions, output: INodeExecutionData[]): Promise<INodeExecutionData[]>;
}

interface OperationEntry<C> extends INodePropertyOptions {
	readonly value: string;
	readonly action: string;
	readonly description: string;
	readonly subtitle?: string;
	readonly module: OperationModule<C>;
}

export interface ResourceDefinition<C> {
	readonly option: INodePropertyOptions & { value: string };
	readonly operations: ReadonlyArray<OperationEntry<C>>;
	readonly defaultOperation: string;
}

/** With `docsFile`, each operation's panel links its own docs section (n8n's link is per node). */
export function buildProperties<C>(
	resources: ReadonlyArray<ResourceDefinition<C>>,
	docsFile?: string,
): INodeProperties[] {
	// Defaults by name: n8n's lint reads a literal or a name as a default, not `a.b`.
	const firstResource = resources[0].option.value;
	const resourceSelector: INodeProperties = {
		displayName: 'Resource',
		name: 'resource',
		type: 'options',
		noDataExpression: true,
		options: resources.map((r) => r.option),
		default: firstResource,
	};
	const perResource = resources.flatMap(({ defaultOperation, ...resource }): INodeProperties[] => [
		{
			displayName: 'Operation',
			name: 'operation',
			type: 'options',
			noDataExpression: true,
			displayOptions: { show: { resource: [resource.option.value] } },
			options: resource.operations.map(
				({ module: _module, subtitle: _subtitle, ...option }) => option,
			),
			default: defaultOperation,
		},
		...resource.operations.flatMap((op) => [
			...(docsFile ? [operationDocsNotice(docsFile, resource.option, op)] : []),
			...op.module.description,
		]),
	]);
	return [resourceSelector, ...perResource];
}

function operationDocsNotice(
	docsFile: string,
	resource: { value: string; name: string },
	operation: { value: string; name: string },
): INodeProperties {
	const url = operationDocumentationUrl(docsFile, resource.name, operation.name);
	return {
		displayName: `${resource.name} → ${operation.name}: its fields, an example and its errors in the <a href="${url}" target="_blank">docs</a>`,
		name: 'operationDocsNotice',
		type: 'notice',
		default: '',
		displayOptions: showFor(resource.value, operation.value),
	};
}

export function findOperation<C>(
	resources: ReadonlyArray<ResourceDefinition<C>>,
	resource: string,
	operation: string,
): OperationModule<C> | undefined {
	return resources
		.find((r) => r.option.value === resource)
		?.operations.find((o) => o.value === operation)?.module;
}

export function operationsSending<C>(
	resources: ReadonlyArray<ResourceDefinition<C>>,
	field: string,
): string[] {
	return resources.flatMap((resource) =>
		resource.operations
			.filter((operation) => operation.module.endpoint?.params.includes(field))
			.map((operation) => `${resource.option.name} → ${operation.name}`),
	);
}

export interface NodeDefinition<O, C extends OperationRun<O>> {
	readonly resources: ReadonlyArray<ResourceDefinition<C>>;
	readOptions(ctx: IExecuteFunctions, itemIndex: number): O;
	startRun(basics: RunBasics<O>): C;
	/** How many items run at once, and the least time between the starts of two. */
	pacing(options: O): { parallel: number; delayMs: number };
	runWideOptions(options: O): Record<string, unknown>;
}
