import type { IExecuteFunctions, INode } from 'n8n-workflow';

import { inputError } from '../errors';
import type { ApiClient, ApiCredentials } from '../transport';

/**
 * What every operation gets for the run (`OperationRun`), and how it reads an item's parameters:
 * `run.parameter()` is n8n's `getNodeParameter`, then the rule of the field's kind
 * (`textParameter`, `codeValue`).
 */

/** What the router resolves once per run before it builds the run object. */
export interface RunBasics<O> {
	readonly ctx: IExecuteFunctions;
	readonly credentials: ApiCredentials;
	readonly client: ApiClient;
	/** n8n's execution-cancel signal: a cancelled run stops waiting and retrying. */
	readonly signal?: AbortSignal;
	/** The node's Options for one item, as the node reads them (`readOptions` of its definition). */
	readonly readOptions: (itemIndex: number) => O;
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
	private readonly readOptions: (itemIndex: number) => O;
	private readonly optionsConstant: boolean;
	private lastItemOptions: { itemIndex: number; options: O } | undefined;

	constructor({ ctx, credentials, client, signal, readOptions }: RunBasics<O>) {
		this.ctx = ctx;
		this.credentials = credentials;
		this.client = client;
		this.signal = signal;
		this.readOptions = readOptions;
		this.optionsConstant = !optionsMapped(ctx);
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

	/** The value of parameter `name` for item `itemIndex` (`fallback` when it is not set), as n8n resolves it. */
	parameter(name: string, itemIndex: number, fallback: unknown): unknown {
		return this.ctx.getNodeParameter(name, itemIndex, fallback as never) as unknown;
	}
}

/** Whether any Option is an expression (n8n marks one with a leading "="): then items may differ. */
export function optionsMapped(ctx: IExecuteFunctions): boolean {
	const mapped = (value: unknown): boolean =>
		typeof value === 'string'
			? value.startsWith('=')
			: value !== null && typeof value === 'object' && Object.values(value).some(mapped);
	return mapped(ctx.getNode().parameters.options);
}

/**
 * What each JSON type means in a parameter (a field mapped with `{{ $json.x }}` can hold any of
 * them). One rule per kind of field, documented per field in docs/<node>.md:
 *
 * - text fields (Text, Caption, File Name, …): a string as it is; a number or a boolean as its
 *   text (`42` → "42"); `null` and absent are empty; an object or an array is refused (it would
 *   otherwise be sent as "[object Object]");
 * - code fields (currency codes): a string; `null` and absent are empty; a number, boolean,
 *   object or array is refused, saying what it is.
 */

/** `a number (840)`, `an array`, `an object`, `null`: how an error names what it got. */
export function describeValue(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return `an array (${shorten(JSON.stringify(value))})`;
	if (typeof value === 'object') return `an object (${shorten(JSON.stringify(value) ?? '{}')})`;
	if (typeof value === 'number') return `a number (${value})`;
	if (typeof value === 'boolean') return `a boolean (${value})`;
	return `${typeof value}`;
}

function shorten(text: string): string {
	return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/**
 * A text parameter of one item as a string ("" when empty), by the rule for text fields above.
 * `fix` says what to map instead of an object.
 */
export function textParameter(
	run: OperationRun<unknown>,
	itemIndex: number,
	name: string,
	field: string,
	fix?: string,
): string {
	return textValue(run, itemIndex, run.parameter(name, itemIndex, ''), field, fix);
}

/** The text rule applied to a value already read (e.g. one field of a collection). */
export function textValue(
	run: OperationRun<unknown>,
	itemIndex: number,
	value: unknown,
	field: string,
	fix?: string,
): string {
	if (value === undefined || value === null) return '';
	if (typeof value === 'string') return value;
	if (typeof value === 'number' || typeof value === 'boolean') return String(value);
	throw inputError(
		run.node,
		itemIndex,
		field,
		`is ${describeValue(value)}, not text`,
		fix ??
			`Map a field that holds text, or turn the value into text in the expression, e.g. {{ JSON.stringify($json.${name(field)}) }}.`,
	);
}

/** `File Name` → `fileName`: how a field is usually called in the item. */
function name(field: string): string {
	return field
		.split(' ')
		.map((word, i) => (i === 0 ? word.toLowerCase() : word.charAt(0).toUpperCase() + word.slice(1)))
		.join('');
}

/**
 * A code parameter (a currency code) of one item, trimmed and upper case ("" when empty), by
 * the rule for code fields above.
 */
export function codeValue(
	run: OperationRun<unknown>,
	itemIndex: number,
	value: unknown,
	field: string,
	example: string,
): string {
	if (value === undefined || value === null) return '';
	if (typeof value === 'string') return value.trim().toUpperCase();
	throw inputError(
		run.node,
		itemIndex,
		field,
		`is ${describeValue(value)}, not a code`,
		Array.isArray(value)
			? `This field takes one code, e.g. ${example}.`
			: `Write the code as text, e.g. ${example}.`,
	);
}
