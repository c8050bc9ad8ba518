import { inputError } from '../errors';
import type { OperationRun } from './run';

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
export function textParameter(run: OperationRun<unknown>, itemIndex: number, name: string, field: string, fix?: string): string {
	return textValue(run, itemIndex, run.parameter(name, itemIndex, ''), field, fix);
}

/** The text rule applied to a value already read (e.g. one field of a collection). */
export function textValue(run: OperationRun<unknown>, itemIndex: number, value: unknown, field: string, fix?: string): string {
	if (value === undefined || value === null) return '';
	if (typeof value === 'string') return value;
	if (typeof value === 'number' || typeof value === 'boolean') return String(value);
	throw inputError(
		run.node,
		itemIndex,
		field,
		`is ${describeValue(value)}, not text`,
		fix ?? `Map a field that holds text, or turn the value into text in the expression, e.g. {{ JSON.stringify($json.${name(field)}) }}.`,
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
export function codeValue(run: OperationRun<unknown>, itemIndex: number, value: unknown, field: string, example: string): string {
	if (value === undefined || value === null) return '';
	if (typeof value === 'string') return value.trim().toUpperCase();
	throw inputError(
		run.node,
		itemIndex,
		field,
		`is ${describeValue(value)}, not a code`,
		Array.isArray(value) ? `This field takes one code, e.g. ${example}.` : `Write the code as text, e.g. ${example}.`,
	);
}
