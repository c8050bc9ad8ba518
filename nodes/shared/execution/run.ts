import type { IExecuteFunctions, INode } from 'n8n-workflow';

import { ParameterReader } from './parameterReader';
import type { ApiClient, ApiCredentials } from '../transport';

/** What the router resolves once per run before it builds the run object. */
export interface RunBasics<O> {
	readonly ctx: IExecuteFunctions;
	readonly credentials: ApiCredentials;
	readonly client: ApiClient;
	/** n8n's execution-cancel signal: a cancelled run stops waiting and retrying. */
	readonly signal?: AbortSignal;
	/** The node's Options for one item, as the node reads them (`readOptions` of its definition). */
	readonly readOptions: (itemIndex: number) => O;
	/** The run's parameter reader (the router makes one; a run without it makes its own). */
	readonly parameters?: ParameterReader;
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
	/** The Options of the run: item 0's, which are every item's when no option is mapped. */
	readonly runOptions: O;
	private readonly ctx: IExecuteFunctions;
	private readonly parameters: ParameterReader;
	private readonly readOptions: (itemIndex: number) => O;
	private readonly optionsConstant: boolean;
	private lastItemOptions: { itemIndex: number; options: O } | undefined;

	constructor({ ctx, credentials, client, signal, readOptions, parameters }: RunBasics<O>) {
		this.ctx = ctx;
		this.credentials = credentials;
		this.client = client;
		this.signal = signal;
		this.parameters = parameters ?? new ParameterReader(ctx);
		this.readOptions = readOptions;
		this.optionsConstant = this.parameters.isConstant('options');
		this.runOptions = readOptions(0);
	}

	/** The node being run (errors name it). */
	get node(): INode {
		return this.ctx.getNode();
	}

	/**
	 * The Options that apply to item `itemIndex`. The rule: Options without any expression are
	 * the same for every item and are read once per run; Options with a mapped value (e.g.
	 * Default Country `{{ $json.country }}`) are read for each item, so no item gets another
	 * item's value.
	 */
	options(itemIndex: number): O {
		if (this.optionsConstant || itemIndex === 0) return this.runOptions;
		if (this.lastItemOptions?.itemIndex !== itemIndex) {
			this.lastItemOptions = { itemIndex, options: this.readOptions(itemIndex) };
		}
		return this.lastItemOptions.options;
	}

	/**
	 * The value of parameter `name` for item `itemIndex` (`fallback` when it is not set), as n8n
	 * resolves it. The only way operations read a parameter: typed-in values are read once per
	 * run and plain `{{ $json.field }}` mappings straight from the item (`ParameterReader`);
	 * anything else is n8n's own `getNodeParameter`.
	 */
	parameter(name: string, itemIndex: number, fallback: unknown): unknown {
		return this.parameters.value(name, itemIndex, fallback);
	}
}
