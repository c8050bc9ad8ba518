import {
	NodeOperationError,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	type INodePropertyOptions,
} from 'n8n-workflow';

import { readCredential } from '../credential';
import type { OperationRun, RunBasics } from './operationRun';
import { runItems, type CallGate, type RunItemsOptions } from './itemScheduler';
import { compactForTool } from '../aiTool';
import { showFor } from '../properties';
import { operationDocumentationUrl } from '../documentationUrl';
import {
	ApiClient,
	DEFAULT_RETRY_POLICY,
	sharedTokenCache,
	type Endpoint,
	type RetryPolicy,
} from '../transport';

export type ItemCall = () => Promise<INodeExecutionData | INodeExecutionData[]>;

/** `execute` runs for every item before any request: it reads and checks, and returns the call. */
export interface OperationModule<C> {
	readonly description: INodeProperties[];
	/** The docs tables and option texts are derived from it; none for a step without a request. */
	readonly endpoint?: Endpoint;
	readonly once?: boolean;
	execute(this: IExecuteFunctions, itemIndex: number, run: C): ItemCall | Promise<ItemCall>;
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

function findOperation<C>(
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

export function listInWords(items: readonly string[]): string {
	return items.length <= 1
		? (items[0] ?? '')
		: `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

export interface NodeDefinition<O, C extends OperationRun<O>> {
	readonly resources: ReadonlyArray<ResourceDefinition<C>>;
	readOptions(ctx: IExecuteFunctions, itemIndex: number): O;
	startRun(basics: RunBasics<O>): C;
	pacing(options: O): RunItemsOptions;
	runWideOptions(options: O): Record<string, unknown>;
	gate?(ctx: IExecuteFunctions, run: C): CallGate | undefined;
}

export async function route<O, C extends OperationRun<O>>(
	ctx: IExecuteFunctions,
	node: NodeDefinition<O, C>,
): Promise<INodeExecutionData[][]> {
	const resource = ctx.getNodeParameter('resource', 0) as string;
	const operation = ctx.getNodeParameter('operation', 0) as string;
	const module = findOperation(node.resources, resource, operation);
	if (!module) {
		throw new NodeOperationError(
			ctx.getNode(),
			`The operation "${operation}" of "${resource}" is not known`,
		);
	}
	const itemCount = ctx.getInputData().length;
	const credentials = await readCredential(ctx);
	const client = new ApiClient(credentials, sharedTokenCache, retryPolicyFor(ctx));
	const signal = ctx.getExecutionCancelSignal();
	const run = node.startRun({
		ctx,
		credentials,
		client,
		signal,
		readOptions: (itemIndex) => node.readOptions(ctx, itemIndex),
	});
	if (run.optionsMapped) checkRunWideOptions(ctx, node, run, itemCount);
	const output = await runItems(
		ctx,
		itemCount,
		async (itemIndex) => await module.execute.call(ctx, itemIndex, run),
		{ ...node.pacing(run.runOptions), once: module.once, gate: node.gate?.(ctx, run) },
	);
	return [compactForTool(ctx, output)];
}

// With Retry On Fail and Stop, n8n reruns the node after any failure: transport retries would
// multiply with its tries. With Continue it retries only when the first item failed.
function retryPolicyFor(ctx: IExecuteFunctions): RetryPolicy {
	const node = ctx.getNode();
	return node.retryOnFail === true && !ctx.continueOnFail()
		? { ...DEFAULT_RETRY_POLICY, maxRetries: 0 }
		: DEFAULT_RETRY_POLICY;
}

/** Refused before any request rather than one item's value applied to the others. */
function checkRunWideOptions<O, C extends OperationRun<O>>(
	ctx: IExecuteFunctions,
	node: NodeDefinition<O, C>,
	run: C,
	itemCount: number,
): void {
	const first = node.runWideOptions(run.runOptions);
	for (let itemIndex = 1; itemIndex < itemCount; itemIndex++) {
		const own = node.runWideOptions(run.options(itemIndex));
		for (const [name, value] of Object.entries(first)) {
			if (own[name] === value) continue;
			throw new NodeOperationError(
				ctx.getNode(),
				`Option "${name}" is ${JSON.stringify(value)} for item 0 but ${JSON.stringify(own[name])} for item ${itemIndex}: it applies to the whole run`,
				{
					itemIndex,
					description: `Give "${name}" one value for all items (a fixed value, or an expression that gives every item the same), or split the items into separate runs.`,
				},
			);
		}
	}
}
