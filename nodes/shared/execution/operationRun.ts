import type { IExecuteFunctions, INode, NodeOperationError } from 'n8n-workflow';

import { inputError, shown } from '../errors';
import type { ApiClient, ApiCredentials } from '../transport';

/** What a node's execute starts its run with. */
export type RunBasics<O> = Pick<OperationRun<O>, 'ctx' | 'credentials' | 'client' | 'signal'> & {
	readonly readOptions: (itemIndex: number) => O;
};

/** A run as a helper takes it, typed by the settings it reads: no helper imports a node's run. */
export type RunContext<S> = OperationRun<S>;

// Built once per execution, so per-run work is done once. Operations read through `parameter()` and
// `options()`, never `getNodeParameter`: one place where reading changes, for every operation.
export class OperationRun<O = unknown> {
	readonly client: ApiClient;
	readonly credentials: ApiCredentials;
	/** n8n's cancel signal: a cancelled run stops waiting and retrying. */
	readonly signal?: AbortSignal;
	readonly runOptions: O;
	readonly ctx: IExecuteFunctions;
	private readonly readOptions: (itemIndex: number) => O;
	/** Some Option is an expression: items may have Options of their own. */
	readonly optionsMapped: boolean;
	/** Mapped Options, read once per item: n8n evaluates an expression each time it is read. */
	private readonly itemOptions = new Map<number, O>();

	constructor({ ctx, credentials, client, signal, readOptions }: RunBasics<O>) {
		this.ctx = ctx;
		this.credentials = credentials;
		this.client = client;
		this.signal = signal;
		this.readOptions = readOptions;
		this.optionsMapped = optionsMapped(ctx);
		this.runOptions = readOptions(0);
	}

	get node(): INode {
		return this.ctx.getNode();
	}

	/** Read once per run unless an option is mapped; then per item, so none gets another's value. */
	options(itemIndex: number): O {
		if (!this.optionsMapped || itemIndex === 0) return this.runOptions;
		let options = this.itemOptions.get(itemIndex);
		if (!options) this.itemOptions.set(itemIndex, (options = this.readOptions(itemIndex)));
		return options;
	}

	/** After every item was checked, before the first request: items the run as a whole refuses. */
	checkRun?(): Promise<Map<number, Error>>;

	/** At the end of the run, stopped or not. */
	finish?(): Promise<void>;

	/** What running the same input again does, for a stopped run's error. */
	rerunNote?(): string;

	/** Bad input in a field of an item: the error names the item, the field and the fix. */
	fail(itemIndex: number, field: string, problem: string, fix?: string): NodeOperationError {
		return inputError(this.node, itemIndex, field, problem, fix);
	}

	parameter(name: string, itemIndex: number, fallback: unknown): unknown {
		return this.ctx.getNodeParameter(name, itemIndex, fallback as never) as unknown;
	}
}

/** n8n marks an expression with a leading "=". */
function optionsMapped(ctx: IExecuteFunctions): boolean {
	const mapped = (value: unknown): boolean =>
		typeof value === 'string'
			? value.startsWith('=')
			: value !== null && typeof value === 'object' && Object.values(value).some(mapped);
	return mapped(ctx.getNode().parameters.options);
}

// A mapped field can hold any JSON type. Text fields take a number or boolean as its text and
// refuse objects (sent as "[object Object]" otherwise); code fields take only strings.

export function describeValue(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return `an array (${shown(value)})`;
	if (typeof value === 'object') return `an object (${shown(value)})`;
	if (typeof value === 'number') return `a number (${value})`;
	if (typeof value === 'boolean') return `a boolean (${value})`;
	return `${typeof value}`;
}

export function textParameter(
	run: RunContext<unknown>,
	itemIndex: number,
	name: string,
	field: string,
	fix?: string,
): string {
	return textValue(run, itemIndex, run.parameter(name, itemIndex, ''), field, fix);
}

export function textValue(
	run: RunContext<unknown>,
	itemIndex: number,
	value: unknown,
	field: string,
	fix?: string,
): string {
	if (value === undefined || value === null) return '';
	if (typeof value === 'string') return value;
	if (typeof value === 'number' || typeof value === 'boolean') return String(value);
	const problem = `is ${describeValue(value)}, not text`;
	throw run.fail(itemIndex, field, problem, fix ?? notTextFix(field));
}

function notTextFix(field: string): string {
	const name = field
		.split(' ')
		.map((word, i) => (i === 0 ? word.toLowerCase() : word.charAt(0).toUpperCase() + word.slice(1)))
		.join('');
	return `Map a field that holds text, or turn the value into text in the expression, e.g. {{ JSON.stringify($json.${name}) }}.`;
}

/** How a reader turns a bad field into its error: the field, what is wrong, the fix. */
export type FieldError = (field: string, problem: string, fix: string) => Error;

export interface NumberRule {
	field: string;
	min: number;
	max?: number;
	whole?: boolean;
}

/** Every number parameter and option is read so: out of range is refused, never bent into it. */
export function numberValue(
	value: unknown,
	fallback: number,
	{ field, min, max = Infinity, whole = false }: NumberRule,
	fail: FieldError,
): number {
	if (value === undefined || value === null || value === '') return fallback;
	const isText = typeof value === 'string' && value.trim() !== '';
	const n = typeof value === 'number' ? value : isText ? Number(value) : NaN;
	if (Number.isFinite(n) && n >= min && n <= max && (!whole || Number.isInteger(n))) return n;
	const kind = whole ? 'a whole number' : 'a number';
	const range = max === Infinity ? `of at least ${min}` : `from ${min} to ${max}`;
	const fix = `Enter ${kind} ${range}, or leave it out for the default (${fallback}).`;
	throw fail(field, `is ${shown(value)}, not ${kind} ${range}`, fix);
}
