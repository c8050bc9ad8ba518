import {
	NodeOperationError,
	type IDisplayOptions,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	type INodePropertyOptions,
} from 'n8n-workflow';

import { readCredential } from '../credential';
import { optionsMapped, type OperationRun, type RunBasics } from './operationRun';
import { runItems, type CallGate, type RunItemsOptions } from './itemScheduler';
import { compactForTool } from '../aiTool';
import { operationDocumentationUrl } from '../documentationUrl';
import {
	ApiClient,
	DEFAULT_RETRY_POLICY,
	sharedTokenCache,
	type Endpoint,
	type RetryPolicy,
} from '../transport';

/**
 * A node's resources and operations: how they are declared (`ResourceDefinition` in
 * `<resource>.resource.ts`, `OperationModule` in `<operation>.operation.ts`), how the editor's
 * selectors and fields are built from them (`buildProperties`), and the one router that runs the
 * chosen operation for every item (`route`).
 */

/** The work of one item once its input is checked: the request(s) and the output. */
export type ItemCall = () => Promise<INodeExecutionData | INodeExecutionData[]>;

/**
 * One operation in one file (`<operation>.operation.ts`): its parameters (`description`, shown
 * only for its resource and operation), the endpoint it calls, and `execute`, which runs one item
 * in two phases: called for every item before any request, it only reads and checks the item's
 * parameters (throwing `inputError` on bad input) and returns the call that makes the request and
 * shapes the output; the scheduler makes those calls once every item is checked. So every item
 * is checked before the first request, and bad input is found before anything is sent. `C` is
 * what the node's router hands every operation for the run (an `OperationRun` or a node's
 * extension of it).
 */
export interface OperationModule<C> {
	readonly description: INodeProperties[];
	/**
	 * The request the operation makes: the documentation tables and the options' texts are derived
	 * from it. None for a step that makes no request (Message → Wait for Send Window).
	 */
	readonly endpoint?: Endpoint;
	/**
	 * No per-item parameters (Get Token, Get Status …): the operation runs once per run, whatever
	 * the number of input items, and its output item is paired with all of them.
	 */
	readonly once?: boolean;
	execute(this: IExecuteFunctions, itemIndex: number, run: C): ItemCall | Promise<ItemCall>;
}

/** An entry of a resource's operation selector, with the module that implements it. */
interface OperationEntry<C> extends INodePropertyOptions {
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
	return {
		show: { resource: [resource], operation: Array.isArray(operation) ? operation : [operation] },
	};
}

/** Adds `displayOptions` for one resource/operation to every property of an operation. */
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

/**
 * The resource selector, each resource's operation selector and every operation's fields. With
 * `docsFile` (the node's page in docs/), each operation's panel opens with a notice linking its own
 * section there: n8n's Docs link can lead to one place per node only.
 */
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

/** The module for a resource/operation pair, or undefined. */
function findOperation<C>(
	resources: ReadonlyArray<ResourceDefinition<C>>,
	resource: string,
	operation: string,
): OperationModule<C> | undefined {
	return resources
		.find((r) => r.option.value === resource)
		?.operations.find((o) => o.value === operation)?.module;
}

/**
 * The operations that send a given request field, as the editor names them
 * (`Message → Send Text`): for option descriptions such as the API Version's, so that they
 * stay true when an operation is added.
 */
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

/** `a`, `a and b`, `a, b and c`. */
export function listInWords(items: readonly string[]): string {
	return items.length <= 1
		? (items[0] ?? '')
		: `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/**
 * What a node tells the router: its resources, how its Options are read, what its operations
 * get for the run, and how many items run at once. `O` is the node's options, `C` its run.
 */
export interface NodeDefinition<O, C extends OperationRun<O>> {
	readonly resources: ReadonlyArray<ResourceDefinition<C>>;
	/** The node's Options for one item (the run reads them once when no option is mapped, else per item). */
	readOptions(ctx: IExecuteFunctions, itemIndex: number): O;
	/** The run object every operation receives; an `OperationRun`, or a node's extension of it. */
	startRun(basics: RunBasics<O>): C;
	/** How many items run at once and the minimum time between two starts, from the run's options. */
	pacing(options: O): RunItemsOptions;
	/**
	 * The options that apply to the whole run, by the name the editor shows (Parallel Requests …):
	 * when options are set by expressions, every item must give them the same value.
	 */
	runWideOptions(options: O): Record<string, unknown>;
	/** What the node does around the calls of a run (see `CallGate`), if anything. */
	gate?(ctx: IExecuteFunctions, run: C): CallGate | undefined;
}

/**
 * The one router of the package, for every node with resources and operations: finds the
 * operation, resolves what is the same for every item once (credential, client, options, the
 * node's run object), then runs the operation for every item through `runItems` (every item's
 * input checked first, bounded parallelism, input order, pairing, errors per item).
 */
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
	if (optionsMapped(ctx)) checkRunWideOptions(ctx, node, run, itemCount);
	const output = await runItems(
		ctx,
		itemCount,
		async (itemIndex) => await module.execute.call(ctx, itemIndex, run),
		{ ...node.pacing(run.runOptions), once: module.once, gate: node.gate?.(ctx, run) },
	);
	return [compactForTool(ctx, output)];
}

/**
 * How the transport retries, given n8n's Retry On Fail. With On Error → Stop, n8n runs the node
 * again after any failure, so the transport's own retries would multiply with n8n's tries
 * (3 × 4 requests for one failing read): it makes one attempt per try, and n8n's Max Tries and
 * Wait Between Tries are the retries. With On Error → Continue, n8n tries again only when the
 * first item failed, so the transport keeps its own retries.
 */
function retryPolicyFor(ctx: IExecuteFunctions): RetryPolicy {
	const node = ctx.getNode();
	return node.retryOnFail === true && !ctx.continueOnFail()
		? { ...DEFAULT_RETRY_POLICY, maxRetries: 0 }
		: DEFAULT_RETRY_POLICY;
}

/**
 * Options that apply to the whole run (Parallel Requests …) when the Options are mapped: every
 * item must give them the same value. A run where they differ is refused before any request,
 * naming the option and the items, rather than one item's value being applied to the others.
 */
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
