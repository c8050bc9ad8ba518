import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import { readCredential } from '../credential';
import { findOperation, type ResourceDefinition } from './operation';
import { ParameterReader } from './parameterReader';
import type { OperationRun, RunBasics } from './run';
import { runItems, type RunItemsOptions } from './itemScheduler';
import { compactForTool } from '../aiTool';
import { ApiClient, DEFAULT_RETRY_POLICY, sharedTokenCache, type RetryPolicy } from '../transport';

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
		throw new NodeOperationError(ctx.getNode(), `The operation "${operation}" of "${resource}" is not known`);
	}
	const itemCount = ctx.getInputData().length;
	const credentials = await readCredential(ctx);
	const client = new ApiClient(credentials, sharedTokenCache, retryPolicyFor(ctx));
	const signal = ctx.getExecutionCancelSignal();
	const parameters = new ParameterReader(ctx);
	const run = node.startRun({ ctx, credentials, client, signal, parameters, readOptions: (itemIndex) => node.readOptions(ctx, itemIndex) });
	if (!parameters.isConstant('options')) checkRunWideOptions(ctx, node, run, itemCount);
	const output = await runItems(
		ctx,
		itemCount,
		async (itemIndex) => await module.prepare.call(ctx, itemIndex, run),
		{ ...node.pacing(run.runOptions), once: module.once },
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
	return node.retryOnFail === true && !ctx.continueOnFail() ? { ...DEFAULT_RETRY_POLICY, maxRetries: 0 } : DEFAULT_RETRY_POLICY;
}

/**
 * Options that apply to the whole run (Parallel Requests …) when the Options are mapped: every
 * item must give them the same value. A run where they differ is refused before any request,
 * naming the option and the items, rather than one item's value being applied to the others.
 */
function checkRunWideOptions<O, C extends OperationRun<O>>(ctx: IExecuteFunctions, node: NodeDefinition<O, C>, run: C, itemCount: number): void {
	const first = node.runWideOptions(run.runOptions);
	for (let itemIndex = 1; itemIndex < itemCount; itemIndex++) {
		const own = node.runWideOptions(run.options(itemIndex));
		for (const [name, value] of Object.entries(first)) {
			if (own[name] === value) continue;
			throw new NodeOperationError(
				ctx.getNode(),
				`Option "${name}" is ${JSON.stringify(value)} for item 0 but ${JSON.stringify(own[name])} for item ${itemIndex}: it applies to the whole run`,
				{ itemIndex, description: `Give "${name}" one value for all items (a fixed value, or an expression that gives every item the same), or split the items into separate runs.` },
			);
		}
	}
}
