/**
 * The Options every sending bench gives the Messaging node: the bench's own (parallel, Skip
 * Repeats Within) and, when the node has a pacing option (a pause between messages, on by
 * default in newer versions), that option turned off: a bench measures the node's cost, not a
 * wait chosen to protect a number from spam bans.
 *
 * The pacing option is found in the node's own description (an option of Options whose name
 * starts with `delayBetween` and is not the request delay `delayMs`), and turned off by giving
 * it its default with every number set to 0, whatever its shape (a number, a min/max pair).
 */
import type { INodeParameters, INodeProperties, NodeParameterValueType } from 'n8n-workflow';

import { Messaging } from '../nodes/Messaging/Messaging.node';

function zeroed(value: unknown): NodeParameterValueType {
	if (typeof value === 'number') return 0;
	if (typeof value === 'string') return '0';
	if (Array.isArray(value)) return value.map(zeroed) as NodeParameterValueType;
	if (value && typeof value === 'object')
		return Object.fromEntries(
			Object.entries(value).map(([key, inner]) => [key, zeroed(inner)]),
		) as INodeParameters;
	return value as NodeParameterValueType;
}

/** The pacing option of the Messaging node's Options, if this version of the package has one. */
function pacingOption(): INodeProperties | undefined {
	const options = new Messaging().description.properties.find((p) => p.name === 'options');
	return (options?.options as INodeProperties[] | undefined)?.find(
		(option) => /^delayBetween/i.test(option.name) && option.name !== 'delayMs',
	);
}

const pacing = pacingOption();

/** Options for a sending bench: `options` plus the pacing turned off when the node has pacing. */
export function sendOptions(options: INodeParameters): INodeParameters {
	return pacing ? { ...options, [pacing.name]: zeroed(pacing.default) } : options;
}

/** How the bench set the pacing, for its header line. */
export function pacingNote(): string {
	return pacing
		? `pacing (${pacing.displayName}) set to ${JSON.stringify(zeroed(pacing.default))}`
		: 'the node has no pacing option';
}
