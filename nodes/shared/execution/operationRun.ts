import {
	deepCopy,
	type IExecuteFunctions,
	type INode,
	type INodeExecutionData,
	type INodeParameters,
} from 'n8n-workflow';

import { inputError } from '../errors';
import type { ApiClient, ApiCredentials } from '../transport';

/**
 * What every operation gets for the run (`OperationRun`), and how it reads an item's parameters:
 * `run.parameter()` through the `ParameterReader` (typed-in values once per run, plain `$json`
 * paths from the item, anything else through n8n), then the rule of the field's kind
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

/**
 * Reads a node's parameters for its items, with n8n's results, faster where that is safe.
 *
 * n8n evaluates a parameter for every item it is read for, and in n8n 2.x an expression is
 * evaluated in an isolate: two `{{ $json.x }}` mappings cost more per item than the node's own
 * work. Most mappings are nothing but a path into the item (`={{ $json.phone }}`,
 * `={{ $json["Phone Number"] }}`, `={{ $json.customer.phone }}`, `={{ $json.lines[0] }}`), and
 * most other parameters are typed in. So, per parameter, decided once per run from the raw
 * parameter (`getNode().parameters`, not evaluated):
 *
 * - **constant** (no expression anywhere in it, collections included): n8n's value, read once
 *   per run and handed out for every item (objects as copies);
 * - **a plain `$json` path** (the whole value is one `{{ }}` holding only `$json` and steps of
 *   `.name`, `["key"]`, `['key']` or `[index]`): the value is read from the item directly,
 *   when every step lands on an own data property of a plain object or an array and the value
 *   is a string, a finite number (not -0), a boolean or null;
 * - **anything else**, and every case the direct read does not take (a missing field, an
 *   object value, a step through a string or `null`, a name n8n's sandbox refuses): n8n's own
 *   `getNodeParameter`, so its results and its errors stay exactly n8n's.
 *
 * `$json` is the item at the same index of the node's first input, as n8n's expressions see it
 * in an execute run. Equivalence with n8n's evaluation is checked by property tests through
 * n8n's engine (test/parameterReader.properties.test.ts).
 */
export class ParameterReader {
	private readonly ctx: IExecuteFunctions;
	private readonly parameters: INodeParameters;
	private items: INodeExecutionData[] | undefined;
	private readonly plans = new Map<string, Plan>();

	constructor(ctx: IExecuteFunctions) {
		this.ctx = ctx;
		// getNode() deep-copies the node: once per run, never per item.
		this.parameters = ctx.getNode().parameters;
	}

	/** The value of parameter `name` for item `itemIndex`, as `getNodeParameter(name, itemIndex, fallback)` gives it. */
	value(name: string, itemIndex: number, fallback: unknown): unknown {
		const plan = this.planFor(name);
		if (plan.kind === 'jsonPath') {
			const json = this.inputItems()[itemIndex]?.json;
			const found = json === undefined ? undefined : readJsonPath(json, plan.steps);
			if (found !== undefined) return found.value;
		} else if (plan.kind === 'constant') {
			if (!('value' in plan)) {
				plan.value = this.ctx.getNodeParameter(name, itemIndex, fallback as never) as unknown;
			}
			return copyOf(plan.value);
		}
		return this.ctx.getNodeParameter(name, itemIndex, fallback as never) as unknown;
	}

	/**
	 * Whether parameter `name` has the same value for every item of the run (no expression in
	 * it): what is read once per run may be read from any item.
	 */
	isConstant(name: string): boolean {
		return this.planFor(name).kind === 'constant';
	}

	private planFor(name: string): Plan {
		let plan = this.plans.get(name);
		if (!plan) {
			plan = makePlan(rawParameter(this.parameters, name));
			this.plans.set(name, plan);
		}
		return plan;
	}

	private inputItems(): INodeExecutionData[] {
		this.items ??= this.ctx.getInputData();
		return this.items;
	}
}

type Step = string | number;
type Plan =
	{ kind: 'constant'; value?: unknown } | { kind: 'jsonPath'; steps: Step[] } | { kind: 'n8n' };

/** `name` or `options.name` in the node's raw parameters; undefined when absent (n8n then uses the fallback). */
function rawParameter(parameters: INodeParameters, name: string): unknown {
	if (name.includes('[')) return undefined;
	let current: unknown = parameters;
	for (const part of name.split('.')) {
		if (!isPlainObject(current) || !Object.prototype.hasOwnProperty.call(current, part))
			return undefined;
		current = current[part];
	}
	return current;
}

function makePlan(raw: unknown): Plan {
	// Absent: n8n's fallback handling (and its "Could not get parameter" error) decide.
	if (raw === undefined) return { kind: 'n8n' };
	if (!containsExpression(raw)) return { kind: 'constant' };
	const steps = typeof raw === 'string' ? plainJsonPath(raw) : undefined;
	return steps ? { kind: 'jsonPath', steps } : { kind: 'n8n' };
}

/** n8n treats a string starting with "=" as an expression, at any depth of a collection. */
function containsExpression(value: unknown, depth = 0): boolean {
	if (typeof value === 'string') return value.startsWith('=');
	if (depth > 32) return true;
	if (Array.isArray(value)) return value.some((entry) => containsExpression(entry, depth + 1));
	if (value !== null && typeof value === 'object')
		return Object.values(value).some((entry) => containsExpression(entry, depth + 1));
	return false;
}

/** Longest mapping the direct read considers; longer ones go to n8n. */
const MAX_MAPPING_LENGTH = 1000;

/**
 * The whole parameter is `={{ $json<steps> }}`. Each step starts with "." or "[" and its kind is
 * known from its first two characters, so the match is linear. Keys in brackets hold no
 * backslash (escapes), no braces (n8n splits templates at `}}`) and no line break.
 */
const PLAIN_JSON_PATH =
	/^=\{\{\s*\$json((?:\.[A-Za-z_$][\w$]*|\[(?:0|[1-9]\d{0,8})\]|\["[^"\\{}\r\n\u2028\u2029]*"\]|\['[^'\\{}\r\n\u2028\u2029]*'\])+)\s*\}\}$/;
const STEP = /\.([A-Za-z_$][\w$]*)|\[(\d+)\]|\["([^"]*)"\]|\['([^']*)'\]/g;

/** The steps of a plain `$json` mapping, or undefined if the value is any other expression. */
export function plainJsonPath(raw: string): Step[] | undefined {
	if (raw.length > MAX_MAPPING_LENGTH) return undefined;
	const match = PLAIN_JSON_PATH.exec(raw);
	if (!match) return undefined;
	const steps: Step[] = [];
	for (const [, name, index, doubleQuoted, singleQuoted] of match[1].matchAll(STEP)) {
		const step = index !== undefined ? Number(index) : (name ?? doubleQuoted ?? singleQuoted);
		if (typeof step === 'string' && (LEFT_TO_N8N.has(step) || !isPlainText(step))) return undefined;
		steps.push(step);
	}
	return steps;
}

/**
 * Property names n8n's expression sandbox refuses (n8n-workflow's `isSafeObjectProperty`, 2.41):
 * a mapping naming one goes to n8n, which reports it as n8n does.
 */
const UNSAFE_PROPERTIES = new Set([
	'__proto__',
	'prototype',
	'constructor',
	'getPrototypeOf',
	'setPrototypeOf',
	'getOwnPropertyDescriptor',
	'getOwnPropertyDescriptors',
	'defineProperty',
	'defineProperties',
	'mainModule',
	'binding',
	'_linkedBinding',
	'_load',
	'prepareStackTrace',
	'__lookupGetter__',
	'__lookupSetter__',
	'__defineGetter__',
	'__defineSetter__',
	'caller',
	'callee',
	'arguments',
	'getBuiltinModule',
	'dlopen',
	'execve',
	'loadEnvFile',
]);

/**
 * The names a direct read leaves to n8n: those its sandbox refuses, and the names of
 * `Object.prototype`'s members (`valueOf`, `toString`, `hasOwnProperty` …). For an item with its
 * own field of such a name, n8n's quickjs engine (2.41) reads the inherited function and fails
 * ("could not be cloned") where the legacy engine gives the field: engines disagree, so n8n gives
 * whatever the running n8n gives.
 */
const LEFT_TO_N8N: ReadonlySet<string> = new Set([
	...UNSAFE_PROPERTIES,
	...Object.getOwnPropertyNames(Object.prototype),
]);

/**
 * Text every engine of n8n reads as JavaScript does: no NUL (n8n's quickjs engine ends a string
 * there: "a\u0000b" is "a") and well-formed UTF-16 (no lone surrogate, which engines carry over
 * differently). Other text is left to n8n, whose result then is the running engine's.
 */
function isPlainText(text: string): boolean {
	return (
		!text.includes('\u0000') && (text as unknown as { isWellFormed(): boolean }).isWellFormed()
	);
}

/**
 * Follows the steps through plain objects and arrays. `{ value }` when every step lands on an
 * own data property and the value is one the direct read gives exactly as n8n does; undefined
 * for everything else (n8n then evaluates the expression).
 */
function readJsonPath(json: unknown, steps: Step[]): { value: unknown } | undefined {
	let current: unknown = json;
	for (const step of steps) {
		if (Array.isArray(current)) {
			if (typeof step !== 'number' || step >= current.length) return undefined;
		} else if (!isPlainObject(current)) {
			return undefined;
		}
		const key = String(step);
		const descriptor = Object.getOwnPropertyDescriptor(current, key);
		if (!descriptor || !('value' in descriptor)) return undefined;
		current = descriptor.value;
	}
	return isDirectValue(current) ? { value: current } : undefined;
}

function isDirectValue(value: unknown): boolean {
	return (
		(typeof value === 'string' && isPlainText(value)) ||
		typeof value === 'boolean' ||
		value === null ||
		(typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0))
	);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
	if (value === null || typeof value !== 'object') return false;
	const proto = Object.getPrototypeOf(value) as unknown;
	return proto === Object.prototype || proto === null;
}

/** Constants are shared by all items: objects are handed out as copies, so no item changes another's. */
function copyOf(value: unknown): unknown {
	return value !== null && typeof value === 'object' ? deepCopy(value) : value;
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
