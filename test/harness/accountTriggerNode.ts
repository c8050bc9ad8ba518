/**
 * Running the Messaging Account Trigger in tests: a `PollHarness` (n8n-core's real PollContext,
 * n8n's saving rules) on the sandbox's first account, and readers for what a poll returned.
 */
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import type { FaultRule, Sandbox } from '../../sandbox/types';
import { sandboxCredential } from './engine';
import { ACCOUNT_TRIGGER_TYPE, PollHarness, type PollOutcome } from './pollEngine';

/** Where the trigger keeps its memory in the node's static data. */
const MEMORY_PATH = ['node:Messaging Account Trigger', 'accountHealth'] as const;

export function accountTrigger(
	sandbox: Sandbox,
	parameters: INodeParameters,
	staticData?: IDataObject,
): PollHarness {
	return new PollHarness({
		triggerType: ACCOUNT_TRIGGER_TYPE,
		parameters,
		credentials: sandboxCredential(sandbox.url),
		staticData,
	});
}

/** The items a poll returned (none when it returned null or an empty result). */
export function itemsOf(outcome: PollOutcome): INodeExecutionData[] {
	return outcome.returned?.[0] ?? [];
}

/** The `event` of each item a poll returned. */
export function eventsOf(outcome: PollOutcome): string[] {
	return itemsOf(outcome).map((item) => String(item.json.event));
}

/** What a poll asked n8n to do: start an execution with items, save only (an empty result), or nothing. */
export function verdictOf(outcome: PollOutcome): 'events' | 'save' | 'nothing' {
	if (outcome.returned === null) return 'nothing';
	return itemsOf(outcome).length > 0 ? 'events' : 'save';
}

/** The trigger's memory as n8n saved it (undefined when never saved). */
export function savedMemory(trigger: PollHarness): IDataObject | undefined {
	const node = trigger.staticData()[MEMORY_PATH[0]] as IDataObject | undefined;
	return node?.[MEMORY_PATH[1]] as IDataObject | undefined;
}

/** The error a poll (or an activation) failed with; fails the test when it did not fail. */
export async function failureOf(
	poll: Promise<unknown>,
): Promise<Error & { description?: string | null }> {
	try {
		await poll;
	} catch (error) {
		return error as Error & { description?: string | null };
	}
	throw new Error('The poll did not fail');
}

/**
 * The gateway is down behind its proxy: every request gets a 503 page, retries included (the page
 * asks for them at once, so that a test does not wait through the transport's backoff).
 */
export const GATEWAY_DOWN: FaultRule[] = [
	{ kind: 'html503', probability: 1, retryAfterSeconds: 0 },
];

/**
 * A clock the test sets (`jest.setSystemTime`): only `Date` is faked; timers, sockets and the
 * sandbox keep running. Undo with `jest.useRealTimers()`.
 */
export function fakeDateOnly(now: number | Date): void {
	jest.useFakeTimers({
		now,
		doNotFake: [
			'hrtime',
			'nextTick',
			'performance',
			'queueMicrotask',
			'requestAnimationFrame',
			'cancelAnimationFrame',
			'requestIdleCallback',
			'cancelIdleCallback',
			'setImmediate',
			'clearImmediate',
			'setInterval',
			'clearInterval',
			'setTimeout',
			'clearTimeout',
		],
	});
}
