import {
	NodeOperationError,
	type IExecuteFunctions,
	type INode,
	type INodeExecutionData,
	type IPairedItemData,
	type JsonObject,
	type NodeApiError,
} from 'n8n-workflow';

import { compactForTool } from '../aiTool';
import { clock } from '../clock';
import { readCredential } from '../credential';
import { NotAttemptedError, itemList, shown, toNodeError } from '../errors';
import {
	ApiClient,
	DEFAULT_RETRY_POLICY,
	sharedTokenCache,
	type ApiError,
	type RetryPolicy,
} from '../transport';
import type { OperationRun } from './operationRun';
import { findOperation, type ItemCall, type NodeDefinition } from './router';

type ItemError = NodeApiError | NodeOperationError;

const CHECK_TURN_MS = 50;

/**
 * A node's execute, in order: read every item and check it (nothing is sent if one is wrong and
 * the node stops on errors); run the items, `parallel` at a time; then the output, one item per
 * input item with On Error → Continue, or the first error with what happened to every item.
 */
export async function executeNode<O, C extends OperationRun<O>>(
	ctx: IExecuteFunctions,
	node: NodeDefinition<O, C>,
): Promise<INodeExecutionData[][]> {
	const resource = ctx.getNodeParameter('resource', 0) as string;
	const operation = ctx.getNodeParameter('operation', 0) as string;
	const module = findOperation(node.resources, resource, operation);
	const unknown = `The operation "${operation}" of "${resource}" is not known`;
	if (!module) throw new NodeOperationError(ctx.getNode(), unknown);
	const inputCount = ctx.getInputData().length;
	const credentials = await readCredential(ctx);
	const run = node.startRun({
		ctx,
		credentials,
		client: new ApiClient(credentials, sharedTokenCache, retryPolicyFor(ctx)),
		signal: ctx.getExecutionCancelSignal(),
		readOptions: (itemIndex) => node.readOptions(ctx, itemIndex),
	});
	if (run.optionsMapped) checkRunWideOptions(ctx, node, run, inputCount);
	const { parallel, delayMs } = node.pacing(run.runOptions);
	const items = new ItemResults(ctx, module.once ? Math.min(inputCount, 1) : inputCount);

	try {
		const calls = await items.check(
			async (itemIndex) => await module.execute.call(ctx, itemIndex, run),
		);
		items.refuse(calls, (await run.checkRun?.()) ?? new Map());
		if (items.failures.length > 0) throw items.stop('input');
		await items.run(calls, parallel, delayMs);
	} finally {
		await run.finish?.();
	}
	if (items.failures.length > 0) throw items.stop('run', run.rerunNote?.());
	let output = items.output();
	if (module.once && inputCount > 1) {
		const every: IPairedItemData[] = Array.from({ length: inputCount }, (_, item) => ({ item }));
		output = output.map((item) => ({ ...item, pairedItem: every }));
	}
	if (module.finish) output = await module.finish.call(ctx, output);
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
			const message = `Option "${name}" is ${shown(value)} for item 0 but ${shown(own[name])} for item ${itemIndex}: it applies to the whole run`;
			const description = `Give "${name}" one value for all items (a fixed value, or an expression that gives every item the same), or split the items into separate runs.`;
			throw new NodeOperationError(ctx.getNode(), message, { itemIndex, description });
		}
	}
}

/** Each item's output or error. */
class ItemResults {
	private readonly node: INode;
	private readonly continueOnFail: boolean;
	private readonly results: Array<INodeExecutionData[] | undefined>;
	readonly failures: Array<{ itemIndex: number; error: ItemError }> = [];

	constructor(
		ctx: IExecuteFunctions,
		private readonly count: number,
	) {
		this.node = ctx.getNode();
		this.continueOnFail = ctx.continueOnFail();
		this.results = new Array(count);
	}

	private get stopped(): boolean {
		return !this.continueOnFail && this.failures.length > 0;
	}

	async check(
		execute: (itemIndex: number) => Promise<ItemCall>,
	): Promise<Array<ItemCall | undefined>> {
		const calls: Array<ItemCall | undefined> = new Array(this.count);
		let turnStart = performance.now();
		for (let itemIndex = 0; itemIndex < this.count; itemIndex++) {
			// n8n serves other executions and its editor meanwhile: a long check gives way now and then.
			if (performance.now() - turnStart > CHECK_TURN_MS) {
				await clock.pause();
				turnStart = performance.now();
			}
			try {
				calls[itemIndex] = await execute(itemIndex);
			} catch (error) {
				this.fail(itemIndex, toNodeError(this.node, error, { itemIndex }));
			}
		}
		return calls;
	}

	/** What the run as a whole refuses, after every item was checked: those items are never sent. */
	refuse(calls: Array<ItemCall | undefined>, refused: Map<number, Error>): void {
		for (const [itemIndex, error] of [...refused].sort(([a], [b]) => a - b)) {
			calls[itemIndex] = undefined;
			this.fail(itemIndex, toNodeError(this.node, error, { itemIndex }));
		}
	}

	async run(calls: Array<ItemCall | undefined>, parallel: number, delayMs: number): Promise<void> {
		const queue = calls.flatMap((call, itemIndex) => (call ? [itemIndex] : []));
		let nextStartAt = 0;
		const worker = async () => {
			for (let itemIndex = queue.shift(); itemIndex !== undefined; itemIndex = queue.shift()) {
				if (delayMs > 0) {
					const now = clock.now();
					const startAt = Math.max(now, nextStartAt);
					nextStartAt = startAt + delayMs;
					if (startAt > now) await clock.sleep(startAt - now);
				}
				// Another item failed while this one waited for its turn: it is never started.
				if (this.stopped) return;
				try {
					const output = await (calls[itemIndex] as ItemCall)();
					const items = (Array.isArray(output) ? output : [output]).map((item) => ({
						...item,
						pairedItem: item.pairedItem ?? { item: itemIndex },
					}));
					this.results[itemIndex] = items;
				} catch (error) {
					this.fail(itemIndex, toNodeError(this.node, error, { itemIndex }));
				}
				if (this.stopped) return;
			}
		};
		const workers = Math.max(1, Math.min(Math.floor(parallel) || 1, queue.length));
		await Promise.all(Array.from({ length: workers }, worker));
	}

	output(): INodeExecutionData[] {
		return this.results.flat().filter((item) => item !== undefined);
	}

	private fail(itemIndex: number, error: ItemError): void {
		if (this.continueOnFail)
			this.results[itemIndex] = [{ json: errorItemJson(error), pairedItem: { item: itemIndex } }];
		else this.failures.push({ itemIndex, error });
	}

	/** The first error, its description followed by what happened to every item. */
	stop(phase: 'input' | 'run', rerunNote?: string): ItemError {
		this.failures.sort((a, b) => a.itemIndex - b.itemIndex);
		const first = this.failures[0].error;
		first.description = [first.description, this.summary(phase, rerunNote)]
			.filter(Boolean)
			.join('\n\n');
		return first;
	}

	private summary(phase: 'input' | 'run', rerunNote?: string): string {
		const failed = this.failures.map((f) => f.itemIndex);
		const done: number[] = [];
		const notStarted: number[] = [];
		for (let i = 0; i < this.count; i++) {
			if (this.results[i]) done.push(i);
			else if (!failed.includes(i)) notStarted.push(i);
		}
		const lines = [`Failed: ${itemList(failed)}.`];
		if (phase === 'input')
			lines.push("Nothing was sent: every item's input is checked before the first request.");
		else {
			if (done.length) {
				const ids = done.flatMap((i) => this.results[i] ?? []).map((item) => item.json.id);
				const known = ids.filter((id) => typeof id === 'string');
				const idList = known.length
					? ` (ids: ${known.slice(0, 20).join(', ')}${known.length > 20 ? ', …' : ''})`
					: '';
				const repeats = rerunNote ? '' : '; running the same input again repeats them';
				lines.push(`Completed before the stop: ${itemList(done)}${idList}${repeats}.`);
			}
			if (notStarted.length) lines.push(`Not started: ${itemList(notStarted)}.`);
			if (rerunNote) lines.push(rerunNote);
		}
		lines.push(
			'Set Settings → On Error to "Continue" (or "Continue (using error output)") to get one output item per input item, errors included.',
		);
		return lines.join(' ');
	}
}

// n8n moves an item to the error output only when `json.error` is set and `json` has no keys but
// error, message and details (WorkflowExecute.handleNodeErrorOutput); its own `item.error` would
// get the whole json replaced, losing `deliveryUnknown`.
function errorItemJson(error: NodeApiError | NodeOperationError): JsonObject {
	const apiError = (error as { apiError?: ApiError }).apiError;
	const details: JsonObject = {};
	if (error.context.itemIndex !== undefined) details.item = error.context.itemIndex as number;
	// n8n fills an API error's description with its message when there is no hint: not repeated.
	if (error.description && !error.message.startsWith(error.description))
		details.description = error.description;
	const notAttempted = error instanceof NotAttemptedError;
	details.kind = apiError ? apiError.kind : notAttempted ? 'not-attempted' : 'input';
	if (notAttempted) Object.assign(details, { notAttempted: true }, error.itemDetails);
	if (apiError) {
		if (apiError.httpStatus !== undefined) details.httpStatus = apiError.httpStatus;
		if (apiError.serverMessage !== undefined) details.serverMessage = apiError.serverMessage;
	}
	// false for bad input and for every failure the gateway cannot have processed.
	details.deliveryUnknown = apiError?.deliveryUnknown ?? false;
	return { error: error.message, details };
}
