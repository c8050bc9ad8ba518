/**
 * Messaging Account Trigger, Usage Limit Running Out, against the sandbox whose usage counter the
 * tests set through its control API: once per crossing (below a percentage, below a number, or
 * blocked), never every poll; going back up is saved so that the next crossing fires again.
 */
import {
	accountTrigger,
	eventsOf,
	itemsOf,
	savedMemory,
	verdictOf,
} from '../../harness/accountTriggerNode';
import { useSandbox } from '../../harness/useSandbox';

const sandbox = useSandbox();

describe('Messaging Account Trigger: Usage Limit Running Out', () => {
	it('fires once when less than 10 % is left, once when blocked, and again after the count went back up', async () => {
		sandbox.setUsage({ limit: 200, used: 100 });
		const trigger = accountTrigger(sandbox, { events: ['usageLimit'] });
		expect(verdictOf(await trigger.activate())).toBe('nothing');

		sandbox.setUsage({ used: 185 });
		const low = await trigger.poll();
		expect(itemsOf(low).map((item) => item.json)).toEqual([
			{
				event: 'usageLow',
				blocked: false,
				remaining: 15,
				limit: 200,
				used: 185,
				percentLeft: 7.5,
				threshold: 'below 10% left',
				level: 'low',
				previousLevel: 'ok',
				since: expect.any(String),
				previousSince: expect.any(String),
				checkedAt: expect.any(String),
			},
		]);
		sandbox.setUsage({ used: 190 });
		expect((await trigger.poll()).returned).toBeNull();

		sandbox.setUsage({ used: 200 });
		const blocked = itemsOf(await trigger.poll());
		expect(blocked.map((item) => item.json)).toEqual([
			expect.objectContaining({
				event: 'usageBlocked',
				blocked: true,
				remaining: 0,
				level: 'blocked',
				previousLevel: 'low',
			}),
		]);
		expect((await trigger.poll()).returned).toBeNull();

		// A new month: the count starts again. No event, but saved (an empty result).
		sandbox.setUsage({ used: 0 });
		expect(verdictOf(await trigger.poll())).toBe('save');
		expect(savedMemory(trigger)?.usage).toMatchObject({ level: 'ok' });
		sandbox.setUsage({ used: 181 });
		expect(eventsOf(await trigger.poll())).toEqual(['usageLow']);
	});

	it('with a number: fires when fewer than that many messages are left', async () => {
		sandbox.setUsage({ limit: 1000, used: 0 });
		const trigger = accountTrigger(sandbox, {
			events: ['usageLimit'],
			usageRule: 'count',
			usageCount: 50,
		});
		await trigger.activate();
		sandbox.setUsage({ used: 950 });
		expect((await trigger.poll()).returned).toBeNull();
		sandbox.setUsage({ used: 951 });
		expect(itemsOf(await trigger.poll())[0].json).toMatchObject({
			event: 'usageLow',
			remaining: 49,
			threshold: 'below 50 left',
		});
	});

	it('"Sending Is Blocked" fires only when blocked', async () => {
		sandbox.setUsage({ limit: 10, used: 0 });
		const trigger = accountTrigger(sandbox, { events: ['usageLimit'], usageRule: 'blocked' });
		await trigger.activate();
		sandbox.setUsage({ used: 9 });
		expect((await trigger.poll()).returned).toBeNull();
		sandbox.setUsage({ used: 10 });
		expect(eventsOf(await trigger.poll())).toEqual(['usageBlocked']);
	});

	it('reports a low count already there at activation; another threshold starts over', async () => {
		sandbox.setUsage({ limit: 100, used: 95 });
		const trigger = accountTrigger(sandbox, { events: ['usageLimit'] });
		expect(itemsOf(await trigger.activate())[0].json).toMatchObject({
			event: 'usageLow',
			previousLevel: null,
		});
		expect((await trigger.poll()).returned).toBeNull();
		// 3 % instead of 10 %: 5 % left is fine under the new rule, and the next crossing counts.
		trigger.setParameters({ events: ['usageLimit'], usagePercent: 3 });
		expect(verdictOf(await trigger.activate())).toBe('nothing');
		sandbox.setUsage({ used: 98 });
		expect(itemsOf(await trigger.poll())[0].json).toMatchObject({
			event: 'usageLow',
			threshold: 'below 3% left',
		});
	});
});
