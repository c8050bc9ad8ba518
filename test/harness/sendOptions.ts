/**
 * Pacing off, in one place, for every bench, the soak and the tests that turn it off. The Options
 * every sending bench gives the Messaging node: the bench's own (parallel, Skip
 * Repeats Within) and the pacing turned off (Delay Between Messages 0–0; the node pauses 2–6 s
 * between messages by default): a bench measures the node's cost, not a wait chosen to keep the account safe.
 */
import type { INodeParameters } from 'n8n-workflow';

const NO_PACING = { range: { minSeconds: 0, maxSeconds: 0 } };

/** Options for a sending bench: `options` plus Delay Between Messages 0–0. */
export function sendOptions(options: INodeParameters): INodeParameters {
	return { ...options, messageDelay: NO_PACING };
}

/** How the bench set the pacing, for its header line. */
export function pacingNote(): string {
	return `pacing off: Delay Between Messages ${JSON.stringify(NO_PACING)}`;
}
