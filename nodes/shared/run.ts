import type { IExecuteFunctions, INode } from 'n8n-workflow';

import type { ApiClient, ApiCredentials } from './transport';

/** What the router resolves once per run before it builds the run object. */
export interface RunBasics<O> {
	readonly ctx: IExecuteFunctions;
	readonly credentials: ApiCredentials;
	readonly client: ApiClient;
	/** n8n's execution-cancel signal: a cancelled run stops waiting and retrying. */
	readonly signal?: AbortSignal;
	/** The node's Options, read once per run (from the first item). */
	readonly options: O;
}

/**
 * What every operation gets besides n8n's `this`: the run. The router builds it once per
 * execution of the node, before the first item, and every item of the run shares it. Per-run
 * work (the credential, the client, the options; for Currency Rate the rate book) is done once
 * here instead of once per item.
 *
 * Operations read their parameters through `parameter()` and their options through `options()`,
 * never through `getNodeParameter` directly: both are the one place where reading changes, for
 * every operation at once.
 */
export class OperationRun<O = unknown> {
	readonly client: ApiClient;
	readonly credentials: ApiCredentials;
	readonly signal?: AbortSignal;
	private readonly ctx: IExecuteFunctions;
	private readonly runOptions: O;

	constructor({ ctx, credentials, client, signal, options }: RunBasics<O>) {
		this.ctx = ctx;
		this.credentials = credentials;
		this.client = client;
		this.signal = signal;
		this.runOptions = options;
	}

	/** The node being run (errors name it). */
	get node(): INode {
		return this.ctx.getNode();
	}

	/**
	 * The Options that apply to item `itemIndex`. They are the run's options, read once from the
	 * first item, as n8n's own nodes do; operations still name their item, so that options set by
	 * an expression can be read per item here without changing any operation.
	 */
	options(_itemIndex: number): O {
		return this.runOptions;
	}

	/**
	 * The value of parameter `name` for item `itemIndex` (`fallback` when it is not set), as n8n
	 * resolves it. The only way operations read a parameter: a faster reader for plain
	 * `{{ $json.field }}` mappings, or any other change to how items are read, goes here.
	 */
	parameter(name: string, itemIndex: number, fallback: unknown): unknown {
		return this.ctx.getNodeParameter(name, itemIndex, fallback) as unknown;
	}
}
