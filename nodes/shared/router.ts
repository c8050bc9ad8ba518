import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import { readCredential } from './credential';
import { findOperation, type ResourceDefinition } from './operation';
import { ParameterReader } from './parameterReader';
import type { OperationRun, RunBasics } from './run';
import { runItems, type RunItemsOptions } from './runItems';
import { compactForTool } from './tool';
import { ApiClient } from './transport';

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
}

/**
 * The one router of the package, for every node with resources and operations: finds the
 * operation, resolves what is the same for every item once (credential, client, options, the
 * node's run object), then runs the operation for every item through `runItems` (bounded
 * parallelism, input order, pairing, errors per item).
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
	const credentials = await readCredential(ctx);
	const client = new ApiClient(credentials);
	const signal = ctx.getExecutionCancelSignal();
	const parameters = new ParameterReader(ctx);
	const run = node.startRun({ ctx, credentials, client, signal, parameters, readOptions: (itemIndex) => node.readOptions(ctx, itemIndex) });
	const output = await runItems(
		ctx,
		ctx.getInputData().length,
		async (itemIndex) => await module.execute.call(ctx, itemIndex, run),
		node.pacing(run.runOptions),
	);
	return [compactForTool(ctx, output)];
}
