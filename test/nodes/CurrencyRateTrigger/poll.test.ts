/**
 * Currency Rate Trigger through n8n-core's poll machinery (test/harness/pollEngine.ts) against the sandbox,
 * whose rates the tests move through its control API: a sequence of polls fires exactly when it
 * should, never twice for the same move, with one rates request per poll.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { sandboxCredential } from '../../harness/engine';
import { PollHarness } from '../../harness/pollEngine';
import { RATES_PATH, requestsTo, sandboxQuote } from '../../harness/currencyRateNode';
import { useSandbox } from '../../harness/useSandbox';

const sandbox = useSandbox();

function harness(parameters: INodeParameters, staticData?: IDataObject): PollHarness {
	return new PollHarness({ parameters, credentials: sandboxCredential(sandbox.url), staticData });
}

const items = (outcome: { execution?: { triggerItems: Array<{ json: IDataObject }> } }) =>
	(outcome.execution?.triggerItems ?? []).map((item) => item.json);

describe('Currency Rate Trigger: moves by more than a percentage', () => {
	const parameters = {
		provider: 'bca',
		currencies: 'USD, EUR',
		event: 'change',
		field: 'average',
		changePercent: 0.5,
	};

	it('sets the baseline on the first poll, then fires once per move above the percentage', async () => {
		const usd = sandboxQuote('bca', 'USD');
		const trigger = harness(parameters);

		const first = await trigger.activate();
		expect(first.returned).toBeNull();
		expect(trigger.executions).toHaveLength(0);

		expect((await trigger.poll()).returned).toBeNull();

		// +0.3 %: not more than 0.5 % from the baseline.
		sandbox.moveRate({ provider: 'bca', currency: 'USD', percent: 0.3 });
		expect((await trigger.poll()).returned).toBeNull();

		// another +0.3 %: 0.6 % from the baseline, which stays the reference until an event.
		const moved = sandbox.moveRate({ provider: 'bca', currency: 'USD', percent: 0.3 });
		const fired = await trigger.poll();
		expect(items(fired)).toEqual([
			{
				provider: 'bca',
				currency: 'USD',
				baseCurrency: 'IDR',
				event: 'moved',
				field: 'average',
				previousValue: usd.average,
				currentValue: Number(moved.rate_avg),
				change: expect.any(Number),
				changePercent: expect.any(Number),
				previousSeenAt: expect.any(String),
				currentSeenAt: expect.any(String),
				buy: Number(moved.rate_buy),
				sell: Number(moved.rate_sell),
				average: Number(moved.rate_avg),
			},
		]);
		const [event] = items(fired);
		expect(event.changePercent).toBeCloseTo(
			((Number(moved.rate_avg) - usd.average) / usd.average) * 100,
			3,
		);
		expect(event.changePercent as number).toBeGreaterThan(0.5);
		expect(Date.parse(event.previousSeenAt as string)).toBeLessThan(
			Date.parse(event.currentSeenAt as string),
		);
		// The next node got the same items.
		expect(fired.execution?.receivedItems.map((item) => item.json)).toEqual(items(fired));

		// The same move never fires twice.
		expect((await trigger.poll()).returned).toBeNull();
		expect((await trigger.poll()).returned).toBeNull();

		// A move down by more than 0.5 % from the last event fires again, with that event as reference.
		const down = sandbox.moveRate({ provider: 'bca', currency: 'USD', percent: -0.6 });
		const again = await trigger.poll();
		expect(items(again)).toMatchObject([
			{
				currency: 'USD',
				event: 'moved',
				previousValue: Number(moved.rate_avg),
				currentValue: Number(down.rate_avg),
			},
		]);
		expect(items(again)[0].changePercent as number).toBeLessThan(-0.5);

		expect(trigger.executions).toHaveLength(2);
	});

	it('makes one rates request per poll and reuses one token', async () => {
		const trigger = harness(parameters);
		await trigger.activate();
		for (let tick = 0; tick < 4; tick += 1) await trigger.poll();
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(5);
		expect(sandbox.stats().tokensIssued.rate).toBe(1);
	});

	it('fires on the first poll only when asked, with the current rates', async () => {
		const trigger = harness({ ...parameters, options: { fireOnFirstPoll: true } });
		const first = await trigger.activate();
		expect(
			items(first).map((item) => [
				item.currency,
				item.event,
				item.currentValue,
				item.previousValue,
			]),
		).toEqual([
			['USD', 'sample', sandboxQuote('bca', 'USD').average, null],
			['EUR', 'sample', sandboxQuote('bca', 'EUR').average, null],
		]);
		expect((await trigger.poll()).returned).toBeNull();
	});

	it('keeps its reference across an n8n restart once it has fired (saved static data), and never fires twice', async () => {
		const trigger = harness(parameters);
		await trigger.activate();
		sandbox.moveRate({ provider: 'bca', currency: 'EUR', percent: 1 });
		expect(items(await trigger.poll()).map((item) => item.currency)).toEqual(['EUR']);

		trigger.restart();
		expect((await trigger.poll()).returned).toBeNull();
		sandbox.moveRate({ provider: 'bca', currency: 'EUR', percent: 1 });
		expect(items(await trigger.poll()).map((item) => item.currency)).toEqual(['EUR']);
	});

	it('starts from a new baseline when the settings change', async () => {
		const trigger = harness(parameters);
		await trigger.activate();
		trigger.setParameters({ ...parameters, changePercent: 0.1 });
		sandbox.moveRate({ provider: 'bca', currency: 'USD', percent: 0.2 });
		// The memory belongs to 0.5 %: the first poll with 0.1 % is a baseline, not a comparison.
		expect((await trigger.poll()).returned).toBeNull();
		sandbox.moveRate({ provider: 'bca', currency: 'USD', percent: 0.2 });
		expect(items(await trigger.poll()).map((item) => item.currency)).toEqual(['USD']);
	});

	it('keeps a small memory in static data: the watched currencies only, no secret or token', async () => {
		const trigger = harness({ ...parameters, currencies: '' });
		await trigger.activate();
		sandbox.moveRate({ provider: 'bca', currency: 'SGD', percent: 2 });
		await trigger.poll();
		const saved = JSON.stringify(trigger.staticData());
		const memory = (trigger.staticData()['node:Currency Rate Trigger'] as IDataObject)
			.rateWatch as { rates: IDataObject };
		expect(Object.keys(memory.rates).sort()).toEqual(
			['USD', 'EUR', 'SGD', 'JPY', 'GBP', 'AUD', 'CNY', 'MYR', 'HKD', 'CHF', 'SAR'].sort(),
		);
		expect(saved.length).toBeLessThan(3000);
		expect(saved).not.toContain('demo-secret');
		const tokens = sandbox
			.requests()
			.map((request) => request.authorization?.replace(/^Bearer /, ''))
			.filter(Boolean) as string[];
		for (const token of tokens) expect(saved).not.toContain(token);
	});
});

describe('Currency Rate Trigger: crosses a threshold', () => {
	it('fires when the rate goes above the level, once per crossing, and not on the way back down', async () => {
		const usd = sandboxQuote('bca', 'USD');
		const trigger = harness({
			provider: 'bca',
			currencies: 'USD',
			event: 'threshold',
			field: 'sell',
			threshold: usd.sell + 100,
			direction: 'above',
		});
		expect((await trigger.activate()).returned).toBeNull();

		sandbox.moveRate({ provider: 'bca', currency: 'USD', sell: usd.sell + 150 });
		const up = await trigger.poll();
		expect(items(up)).toMatchObject([
			{
				currency: 'USD',
				event: 'crossedAbove',
				field: 'sell',
				threshold: usd.sell + 100,
				previousValue: usd.sell,
				currentValue: usd.sell + 150,
			},
		]);
		sandbox.moveRate({ provider: 'bca', currency: 'USD', sell: usd.sell + 180 });
		expect((await trigger.poll()).returned).toBeNull();

		// Back below: no event, but an empty result so that n8n saves the side (next test).
		sandbox.moveRate({ provider: 'bca', currency: 'USD', sell: usd.sell });
		expect((await trigger.poll()).returned).toEqual([[]]);
		sandbox.moveRate({ provider: 'bca', currency: 'USD', sell: usd.sell + 101 });
		expect(items(await trigger.poll())).toMatchObject([
			{ event: 'crossedAbove', previousValue: usd.sell, currentValue: usd.sell + 101 },
		]);
	});

	it('keeps a crossing back it did not fire for across an n8n restart, so the next crossing fires', async () => {
		const usd = sandboxQuote('bca', 'USD');
		const trigger = harness({
			provider: 'bca',
			currencies: 'USD',
			event: 'threshold',
			field: 'sell',
			threshold: usd.sell + 100,
			direction: 'above',
		});
		await trigger.activate();
		sandbox.moveRate({ provider: 'bca', currency: 'USD', sell: usd.sell + 150 });
		expect(items(await trigger.poll()).map((item) => item.event)).toEqual(['crossedAbove']);
		sandbox.moveRate({ provider: 'bca', currency: 'USD', sell: usd.sell });
		const down = await trigger.poll();
		expect(down.returned).toEqual([[]]);
		expect(items(down)).toEqual([]);
		// Still below: the side is saved, nothing to save again.
		expect((await trigger.poll()).returned).toBeNull();

		// n8n restarts (activation runs the first poll, then saves); the rate goes above again.
		expect((await trigger.activate()).returned).toBeNull();
		sandbox.moveRate({ provider: 'bca', currency: 'USD', sell: usd.sell + 120 });
		expect(items(await trigger.poll())).toMatchObject([
			{ event: 'crossedAbove', previousValue: usd.sell, currentValue: usd.sell + 120 },
		]);
	});

	it('with "Either Way" fires both crossings', async () => {
		const usd = sandboxQuote('bca', 'USD');
		const trigger = harness({
			provider: 'bca',
			currencies: 'USD',
			event: 'threshold',
			field: 'average',
			threshold: usd.average - 50,
			direction: 'either',
		});
		await trigger.activate();
		sandbox.moveRate({ provider: 'bca', currency: 'USD', average: usd.average - 60 });
		expect(items(await trigger.poll()).map((item) => item.event)).toEqual(['crossedBelow']);
		sandbox.moveRate({ provider: 'bca', currency: 'USD', average: usd.average });
		expect(items(await trigger.poll()).map((item) => item.event)).toEqual(['crossedAbove']);
	});

	it('says which field is missing when no threshold is set', async () => {
		const trigger = harness({
			provider: 'bca',
			currencies: 'USD',
			event: 'threshold',
			field: 'average',
		});
		await expect(trigger.activate()).rejects.toThrow('Field "Threshold" is not set');
	});
});

describe('Currency Rate Trigger: numbers out of range', () => {
	it.each([
		[
			{ event: 'change', changePercent: -1 },
			'Field "Change (%)" is -1, not a number of at least 0',
		],
		[
			{ event: 'threshold', threshold: '={{ "high" }}' },
			'Field "Threshold" is "high", not a number of at least 0',
		],
	])(
		'%j is refused at activation, naming the field, the value and the range, before any request',
		async (parameters, message) => {
			const trigger = harness({ provider: 'bca', currencies: 'USD', ...parameters });
			await expect(trigger.activate()).rejects.toThrow(message);
			expect(sandbox.requests()).toHaveLength(0);
		},
	);
});

describe('Currency Rate Trigger: every new publication', () => {
	it('fires for each currency whose buy, sell or average changed', async () => {
		const trigger = harness({ provider: 'cimb', currencies: '', event: 'publication' });
		await trigger.activate();
		expect((await trigger.poll()).returned).toBeNull();
		const eur = sandboxQuote('cimb', 'EUR');
		sandbox.moveRate({ provider: 'cimb', currency: 'EUR', buy: eur.buy + 1 });
		sandbox.moveRate({ provider: 'cimb', currency: 'JPY', percent: -1 });
		const fired = await trigger.poll();
		expect(items(fired).map((item) => [item.currency, item.event])).toEqual([
			['EUR', 'published'],
			['JPY', 'published'],
		]);
		expect(items(fired)[0]).toMatchObject({
			buy: eur.buy + 1,
			sell: eur.sell,
			previousSeenAt: expect.any(String),
		});
		expect((await trigger.poll()).returned).toBeNull();
	});
});

describe('Currency Rate Trigger: Fetch Test Event (manual run)', () => {
	it('shows the current rates as sample items and leaves the active baseline alone', async () => {
		const trigger = harness({
			provider: 'bni',
			currencies: 'usd,sgd',
			event: 'change',
			field: 'buy',
			changePercent: 1,
		});
		const test = await trigger.fetchTestEvent();
		expect(test.error).toBeUndefined();
		expect(test.triggerItems.map((item) => item.json)).toMatchObject([
			{
				provider: 'bni',
				currency: 'USD',
				event: 'sample',
				field: 'buy',
				currentValue: sandboxQuote('bni', 'USD').buy,
				previousValue: null,
			},
			{
				provider: 'bni',
				currency: 'SGD',
				event: 'sample',
				field: 'buy',
				currentValue: sandboxQuote('bni', 'SGD').buy,
				previousValue: null,
			},
		]);
		expect(test.receivedItems).toHaveLength(2);
		expect(trigger.staticData()).toEqual({});
		expect(requestsTo(sandbox, RATES_PATH)).toHaveLength(1);
	});

	it('names the field and what the provider offers when a currency is unknown', async () => {
		const trigger = harness({ provider: 'bri', currencies: 'USD, XYZ', event: 'publication' });
		await expect(trigger.activate()).rejects.toThrow(
			/Field "Currencies" holds "XYZ", which provider "bri" does not offer; it offers USD, EUR/,
		);
	});
});
