/**
 * `useTrigger()`: a Messaging Trigger behind the trigger harness (test/harness/triggerEngine.ts), against
 * the file's sandbox, with the two moves every trigger test makes: (re)activate with some
 * parameters, and have the sandbox deliver a message and wait for what it started.
 */
import { sandboxCredential } from './engine';
import { TriggerHarness, type TriggerExecution, type TriggerHarnessOptions } from './triggerEngine';
import type { IncomingMessage, IncomingResult } from '../../sandbox/types';
import type { UsedSandbox } from './useSandbox';

export const TRIGGER_ACCOUNT = '6281288776713';
export const TRIGGER_CUSTOMER = '6281300000002';
const TRIGGER_BASE_PARAMETERS = { accountNumber: '+62 812-8877-6713' };

interface Delivered {
	answer: IncomingResult;
	json: Record<string, unknown>;
	executions: TriggerExecution[];
}

export interface UsedTrigger {
	readonly harness: TriggerHarness;
	/** Fresh sandbox state and harness records; the trigger (re)activated with these parameters. */
	activate(parameters?: Record<string, unknown>): Promise<void>;
	/** The sandbox posts like the gateway; waits for the execution it may have started. */
	deliver(message: IncomingMessage): Promise<Delivered>;
}

export function useTrigger(
	sandbox: UsedSandbox,
	options: Partial<TriggerHarnessOptions> = {},
): UsedTrigger {
	let harness: TriggerHarness | undefined;
	beforeAll(async () => {
		harness = await TriggerHarness.start({
			parameters: TRIGGER_BASE_PARAMETERS,
			credentials: sandboxCredential(sandbox.url),
			...options,
		});
	});
	afterAll(async () => {
		await harness?.close();
	});
	const used: UsedTrigger = {
		get harness() {
			if (!harness) throw new Error('useTrigger: the harness starts in beforeAll');
			return harness;
		},
		async activate(parameters = {}) {
			const trigger = used.harness;
			await trigger.settled();
			if (trigger.isActive) await trigger.deactivate();
			trigger.executions.length = 0;
			trigger.calls.length = 0;
			sandbox.reset();
			trigger.setParameters({ ...TRIGGER_BASE_PARAMETERS, ...parameters });
			await trigger.activate();
		},
		async deliver(message) {
			const trigger = used.harness;
			const before = trigger.executions.length;
			const answer = await sandbox.deliverIncoming(message);
			await trigger.settled();
			let json: Record<string, unknown> = {};
			try {
				json = JSON.parse(answer.body) as Record<string, unknown>;
			} catch {
				// Not JSON: the test reads answer.body.
			}
			return { answer, json, executions: trigger.executions.slice(before) };
		},
	};
	return used;
}

/**
 * `startTrigger(parameters, options)` for tests that start several triggers (one per test, or two
 * workflows at once): each is closed after the test that started it.
 */
export function useTriggerHarnesses(
	sandbox: UsedSandbox,
	defaults: Partial<TriggerHarnessOptions> = {},
): (
	parameters?: Record<string, unknown>,
	options?: Partial<TriggerHarnessOptions>,
) => Promise<TriggerHarness> {
	const started: TriggerHarness[] = [];
	afterEach(async () => {
		await Promise.all(started.splice(0).map(async (harness) => await harness.close()));
	});
	return async (parameters = {}, options = {}) => {
		const harness = await TriggerHarness.start({
			credentials: sandboxCredential(sandbox.url),
			...defaults,
			...options,
			parameters: { ...TRIGGER_BASE_PARAMETERS, ...defaults.parameters, ...parameters },
		});
		started.push(harness);
		return harness;
	};
}
