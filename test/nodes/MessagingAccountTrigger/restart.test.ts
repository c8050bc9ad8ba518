/**
 * Messaging Account Trigger across n8n restarts. n8n saves a poll's static data only when the
 * poll returns something (and once after activation), and a restart, reactivation or workflow
 * update starts from what it saved. The harness plays that exactly: `activate()` again is n8n
 * starting anew from the saved static data (a fresh process memory), with the first poll n8n's
 * start runs.
 *
 * What holds, and is tested here: a restart never fires a false change and never misses a real
 * one; the events of any sequence of account states are the same with restarts between any polls
 * as without (a property over random sequences). The one thing a restart loses is the count of
 * failed polls in a row: "Gateway Unreachable" then fires N polls after the restart, never early.
 */
import fc from 'fast-check';
import type { IDataObject } from 'n8n-workflow';

import { sharedTokenCache } from '../../../nodes/shared/transport';
import {
	accountTrigger,
	GATEWAY_DOWN,
	fakeDateOnly,
	eventsOf,
	itemsOf,
	savedMemory,
	verdictOf,
} from '../../harness/accountTriggerNode';
import { sandboxCredential } from '../../harness/engine';
import { ACCOUNT_TRIGGER_TYPE, PollHarness, type PollOutcome } from '../../harness/pollEngine';
import { useSandbox } from '../../harness/useSandbox';

const sandbox = useSandbox();

describe('Messaging Account Trigger across restarts', () => {
	it('never misses a disconnection that happened while n8n was down, with only "Disconnected" picked', async () => {
		const trigger = accountTrigger(sandbox, { events: ['disconnected'] });
		await trigger.activate();
		sandbox.logout();
		expect(eventsOf(await trigger.poll())).toEqual(['disconnected']);
		// Connected again: not an event here, but a change the memory must keep: saved (an empty result).
		sandbox.scan();
		expect(verdictOf(await trigger.poll())).toBe('save');
		expect(savedMemory(trigger)?.session).toMatchObject({ connected: true });

		// n8n stops for half an hour; the phone is logged out meanwhile; n8n starts again.
		fakeDateOnly(Date.now() + 30 * 60_000);
		sandbox.logout();
		const start = await trigger.activate();
		jest.useRealTimers();
		expect(itemsOf(start).map((item) => item.json)).toEqual([
			expect.objectContaining({ event: 'disconnected', previousStatus: 'authenticated' }),
		]);
	});

	it('never fires a false change: with only "Connected Again" picked, a restart during a disconnection fires once, on the reconnection', async () => {
		const trigger = accountTrigger(sandbox, { events: ['connected'] });
		await trigger.activate();
		sandbox.logout();
		expect(verdictOf(await trigger.poll())).toBe('save');
		expect(verdictOf(await trigger.activate())).toBe('nothing');
		expect((await trigger.poll()).returned).toBeNull();
		sandbox.scan();
		expect(eventsOf(await trigger.poll())).toEqual(['connected']);
		expect(verdictOf(await trigger.activate())).toBe('nothing');
	});

	it('never repeats an event after a restart', async () => {
		const trigger = accountTrigger(sandbox, {
			events: ['disconnected', 'qrCodeNeeded', 'webhookChanged', 'usageLimit'],
			accountNumber: '+62 812-8877-6713',
		});
		sandbox.setUsage({ limit: 100, used: 0 });
		await trigger.activate();
		sandbox.logout(undefined, { showQr: true });
		sandbox.setWebhook(undefined, 'https://crm.example.org/hooks/wa');
		sandbox.setUsage({ used: 95 });
		expect(eventsOf(await trigger.poll())).toEqual([
			'disconnected',
			'qrCodeNeeded',
			'webhookChanged',
			'usageLow',
		]);
		for (let restart = 0; restart < 3; restart++) {
			expect(verdictOf(await trigger.activate())).toBe('nothing');
			expect((await trigger.poll()).returned).toBeNull();
		}
	});

	it('keeps the QR bound across restarts: the count of a disconnection goes on', async () => {
		const trigger = accountTrigger(sandbox, {
			events: ['qrCodeNeeded'],
			options: { qrCodesPerDisconnection: 2, minutesBetweenQrCodes: 0 },
		});
		await trigger.activate();
		sandbox.logout(undefined, { showQr: true });
		expect(itemsOf(await trigger.poll())[0].json.qrNumber).toBe(1);
		expect(verdictOf(await trigger.activate())).toBe('nothing');
		sandbox.newQr();
		expect(itemsOf(await trigger.activate())[0].json.qrNumber).toBe(2);
		sandbox.newQr();
		expect(verdictOf(await trigger.activate())).toBe('nothing');
		expect((await trigger.poll()).returned).toBeNull();
	});

	it('a usage count that went back up is remembered across a restart, so the next crossing fires', async () => {
		sandbox.setUsage({ limit: 100, used: 95 });
		const trigger = accountTrigger(sandbox, { events: ['usageLimit'] });
		expect(eventsOf(await trigger.activate())).toEqual(['usageLow']);
		sandbox.setUsage({ used: 0 });
		expect(verdictOf(await trigger.poll())).toBe('save');
		sandbox.setUsage({ used: 97 });
		expect(eventsOf(await trigger.activate())).toEqual(['usageLow']);
	});

	it('a change n8n saw while polls were failing is saved by the first poll that gets an answer', async () => {
		const trigger = accountTrigger(sandbox, {
			events: ['connected', 'gatewayUnreachable'],
			failedPolls: 5,
		});
		await trigger.activate();
		sandbox.addFaults(GATEWAY_DOWN);
		expect((await trigger.poll()).returned).toBeNull();
		sandbox.clearFaults();
		sandbox.logout();
		// The gateway answers: reachable again is no change (it never fired), the disconnection is one.
		expect(verdictOf(await trigger.poll())).toBe('save');
		sandbox.scan();
		expect(eventsOf(await trigger.activate())).toEqual(['connected']);
	});

	it('"Gateway Unreachable" counts failed polls in the running n8n only: after a restart it fires N polls later, never early', async () => {
		const trigger = accountTrigger(sandbox, { events: ['gatewayUnreachable'], failedPolls: 2 });
		await trigger.activate();
		sandbox.addFaults(GATEWAY_DOWN);
		expect((await trigger.poll()).returned).toBeNull();
		// Restart: the start's own poll fails too; nothing is thrown (there is a memory to keep).
		expect((await trigger.activate()).returned).toBeNull();
		expect(eventsOf(await trigger.poll())).toEqual(['gatewayUnreachable']);
		// Fired and saved: a restart during the same outage does not fire it again.
		expect((await trigger.activate()).returned).toBeNull();
		expect((await trigger.poll()).returned).toBeNull();
		expect((await trigger.poll()).returned).toBeNull();
	});

	it('starts over, without firing changes, when the credential points at another account', async () => {
		await sandbox.restart({
			accounts: [
				{ clientId: 'demo-client', clientSecret: 'demo-secret', status: 'authenticated' },
				{ clientId: 'other-client', clientSecret: 'other-secret', status: 'authenticated' },
			],
		});
		const trigger = accountTrigger(sandbox, { events: ['disconnected', 'connected'] });
		await trigger.activate();
		sandbox.logout();
		expect(eventsOf(await trigger.poll())).toEqual(['disconnected']);
		// The same workflow, its credential now another client of the gateway (connected).
		const other = new PollHarness({
			triggerType: ACCOUNT_TRIGGER_TYPE,
			parameters: { events: ['disconnected', 'connected'] },
			credentials: sandboxCredential(sandbox.url, {
				clientId: 'other-client',
				clientSecret: 'other-secret',
			}),
			staticData: trigger.staticData(),
		});
		sandbox.scan();
		expect(verdictOf(await other.activate())).toBe('nothing');
		expect((savedMemory(other) as IDataObject).account).not.toBe(
			(savedMemory(trigger) as IDataObject).account,
		);
		await sandbox.restart();
	});
});

// ---------------------------------------------------------------------------------------------
// The property: restarts change nothing

type Action =
	| { do: 'logout' | 'logoutShowingQr' | 'newQr' | 'scan' | 'nothing' }
	| { do: 'webhook'; url: string | undefined }
	| { do: 'usage'; used: number };

const WEBHOOKS = [
	undefined,
	'https://n8n.example.com/webhook/a?token=1',
	'https://n8n.example.com/webhook/b?token=1',
	'https://crm.example.org/hooks/wa',
];

const actionArbitrary: fc.Arbitrary<Action> = fc.oneof(
	fc.constantFrom<Action>(
		{ do: 'logout' },
		{ do: 'logoutShowingQr' },
		{ do: 'newQr' },
		{ do: 'newQr' },
		{ do: 'scan' },
		{ do: 'scan' },
		{ do: 'nothing' },
	),
	fc.constantFrom(...WEBHOOKS).map((url): Action => ({ do: 'webhook', url })),
	fc.constantFrom(0, 50, 89, 91, 95, 100).map((used): Action => ({ do: 'usage', used })),
);

const EVERY_EVENT = {
	events: ['disconnected', 'connected', 'qrCodeNeeded', 'webhookChanged', 'usageLimit'],
	accountNumber: '+62 812-8877-6713',
	options: { qrCodesPerDisconnection: 2, minutesBetweenQrCodes: 5 },
};
const START = Date.parse('2026-11-24T08:00:00Z');

function apply(action: Action): void {
	const account = sandbox.accounts()[0];
	if (action.do === 'logout') sandbox.logout();
	if (action.do === 'logoutShowingQr') sandbox.logout(undefined, { showQr: true });
	if (action.do === 'newQr' && account.status !== 'authenticated') sandbox.newQr();
	if (action.do === 'scan') sandbox.scan();
	if (action.do === 'webhook') sandbox.setWebhook(undefined, action.url);
	if (action.do === 'usage') sandbox.setUsage({ used: action.used });
}

/**
 * The events of one run: the account goes through `steps`, one poll after each (3 minutes
 * apart); where `restartAt` says so, n8n restarts before that poll (the start's poll replaces it).
 * Everything is compared but `previousStatus`: the status word before a change is kept in memory
 * only, so after a restart it may name an earlier word of the same state.
 */
async function eventsOfRun(steps: Action[], restartAt: boolean[]): Promise<unknown[]> {
	sandbox.reset();
	sharedTokenCache.clear();
	sandbox.setUsage({ limit: 100, used: 0 });
	jest.setSystemTime(START);
	const trigger = accountTrigger(sandbox, EVERY_EVENT);
	const seen: unknown[] = [];
	const record = (when: number, outcome: PollOutcome) => {
		for (const { json } of itemsOf(outcome)) {
			const { previousStatus: _previousStatus, ...rest } = json;
			seen.push({ when, ...rest });
		}
	};
	record(-1, await trigger.activate());
	for (const [index, action] of steps.entries()) {
		apply(action);
		jest.setSystemTime(START + (index + 1) * 3 * 60_000);
		record(index, restartAt[index] ? await trigger.activate() : await trigger.poll());
	}
	return seen;
}

describe('Messaging Account Trigger: restarts between any two polls change no event', () => {
	beforeAll(() => {
		fakeDateOnly(START);
	});
	afterAll(() => jest.useRealTimers());

	it('for random sequences of logouts, QR codes, scans, webhooks and usage counts', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc
					.array(actionArbitrary, { minLength: 4, maxLength: 14 })
					.chain((steps) =>
						fc.tuple(
							fc.constant(steps),
							fc.array(fc.boolean(), { minLength: steps.length, maxLength: steps.length }),
						),
					),
				async ([steps, restartAt]) => {
					const straight = await eventsOfRun(steps, []);
					const restarted = await eventsOfRun(steps, restartAt);
					expect(restarted).toEqual(straight);
				},
			),
			{ numRuns: 20, seed: 27 },
		);
	}, 120_000);
});
