/**
 * Messaging Account Trigger when polls fail, against the sandbox with its fault rules: a failed
 * poll is not an event and changes no memory; without "Gateway Unreachable" each failed poll is a
 * failed execution whose error says how long polls have been failing; with it, the trigger stays
 * quiet until N polls in a row got no answer, fires once, and fires again only after the gateway
 * answered in between.
 */
import {
	accountTrigger,
	GATEWAY_DOWN,
	failureOf,
	eventsOf,
	itemsOf,
	savedMemory,
	verdictOf,
} from '../../harness/accountTriggerNode';
import { useSandbox } from '../../harness/useSandbox';

const sandbox = useSandbox();

describe('Messaging Account Trigger: failed polls and Gateway Unreachable', () => {
	it('fires once after N polls without an answer, quietly before, and again only after an answer', async () => {
		const trigger = accountTrigger(sandbox, {
			events: ['disconnected', 'gatewayUnreachable'],
			failedPolls: 2,
		});
		await trigger.activate();
		const before = savedMemory(trigger);

		sandbox.addFaults(GATEWAY_DOWN);
		expect((await trigger.poll()).returned).toBeNull();
		const unreachable = await trigger.poll();
		expect(itemsOf(unreachable).map((item) => item.json)).toEqual([
			{
				event: 'gatewayUnreachable',
				failedPolls: 2,
				since: expect.any(String),
				previousSince: (before?.reach as { since: string }).since,
				error: expect.stringMatching(
					/^Get Status \(GET \/api\/wa\/2\.0\/get method=status\) failed: .*503/,
				),
				checkedAt: expect.any(String),
			},
		]);
		expect(Date.parse(itemsOf(unreachable)[0].json.since as string)).toBeLessThan(
			Date.parse(itemsOf(unreachable)[0].json.checkedAt as string),
		);
		expect((await trigger.poll()).returned).toBeNull();
		// The session's memory did not move: a failed poll is not a disconnection.
		expect(savedMemory(trigger)?.session).toEqual(before?.session);

		sandbox.clearFaults();
		expect(verdictOf(await trigger.poll())).toBe('save');
		sandbox.addFaults(GATEWAY_DOWN);
		expect((await trigger.poll()).returned).toBeNull();
		expect(eventsOf(await trigger.poll())).toEqual(['gatewayUnreachable']);
	});

	it('a change during an outage fires once the gateway answers again', async () => {
		const trigger = accountTrigger(sandbox, { events: ['disconnected'] });
		await trigger.activate();
		sandbox.addFaults(GATEWAY_DOWN);
		await expect(trigger.poll()).rejects.toThrow(/503/);
		sandbox.logout();
		await expect(trigger.poll()).rejects.toThrow(/503/);
		sandbox.clearFaults();
		expect(eventsOf(await trigger.poll())).toEqual(['disconnected']);
	});

	it('without "Gateway Unreachable", each failed poll fails and says how long polls have been failing', async () => {
		const trigger = accountTrigger(sandbox, { events: ['disconnected'] });
		await trigger.activate();
		sandbox.addFaults(GATEWAY_DOWN);
		const first = await failureOf(trigger.poll());
		expect(first.message).toMatch(/^Could not read the account's health: Get Status .* failed/);
		expect(first.description ?? '').not.toMatch(/in a row/);
		const second = await failureOf(trigger.poll());
		expect(second.description).toMatch(
			/The gateway has not answered 2 polls in a row \(since .*\)\. Pick "Gateway Unreachable" in Events to Watch/,
		);
		// n8n restarts during the outage: its start's poll is quiet (there is a memory), the next fails.
		expect((await trigger.activate()).returned).toBeNull();
		expect((await failureOf(trigger.poll())).message).toMatch(/503/);
	});

	it('an answer that refuses (a wrong secret) is not "unreachable": it fails the poll every time', async () => {
		const trigger = accountTrigger(sandbox, { events: ['gatewayUnreachable'], failedPolls: 1 });
		await trigger.activate();
		sandbox.addFaults([
			{
				kind: 'rpcError',
				probability: 1,
				match: { rpcMethod: 'status' },
				message: 'Access denied',
			},
		]);
		await expect(trigger.poll()).rejects.toThrow(/Access denied/);
		await expect(trigger.poll()).rejects.toThrow(/Access denied/);
	});

	it('activation fails when the first poll gets no answer (nothing to compare with yet)', async () => {
		sandbox.addFaults(GATEWAY_DOWN);
		const trigger = accountTrigger(sandbox, { events: ['disconnected', 'gatewayUnreachable'] });
		await expect(trigger.activate()).rejects.toThrow(/503/);
		expect(trigger.staticData()).toEqual({});
	});
});
