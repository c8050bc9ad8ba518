/**
 * How the Currency Rate Trigger reads a provider's answers across polls, through n8n-core's poll
 * machinery against a sandbox that answers what each test scripts: a rate written either way is
 * one number, and one that reads two ways is none; a currency a poll leaves out is a quiet gap
 * that keeps its reference; a reading orders of magnitude off is a move; currency names are
 * bounded in static data.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { sandboxCredential } from '../../harness/engine';
import { PollHarness } from '../../harness/pollEngine';
import { useSandbox } from '../../harness/useSandbox';

const sandbox = useSandbox();

const harness = (parameters: INodeParameters) =>
	new PollHarness({ parameters, credentials: sandboxCredential(sandbox.url) });

const events = (outcome: { execution?: { triggerItems: Array<{ json: IDataObject }> } }) =>
	(outcome.execution?.triggerItems ?? []).map((item) => item.json);

type Row = Record<string, unknown>;
/** The provider's next answer (one poll). */
function answerOnce(rows: Row[]): void {
	sandbox.addFaults([
		{
			kind: 'answer',
			result: { success: true, response: rows },
			match: { rpcMethod: 'getkurs' },
			times: 1,
		},
	]);
}
const row = (name: string, value: string | number, extra: Row = {}): Row => ({
	name,
	rate_buy: value,
	rate_sell: value,
	rate_avg: value,
	provider: 'xyz',
	...extra,
});

const watchAll = {
	provider: 'xyz',
	currencies: '',
	event: 'change',
	field: 'average',
	changePercent: 1,
};

describe('rates written as text', () => {
	it('one rate written with a decimal comma, then a point, is one number: no false move', async () => {
		const trigger = harness(watchAll);
		answerOnce([row('USD', '17.597,05'), row('ABC', '17.597')]);
		expect((await trigger.activate()).returned).toBeNull();
		answerOnce([row('USD', '17597.05'), row('ABC', '17.597')]);
		expect(events(await trigger.poll())).toEqual([]);
		answerOnce([row('USD', '17.597,05'), row('ABC', '18.100')]);
		expect(events(await trigger.poll())).toEqual([]);
		// A real move still fires.
		answerOnce([row('USD', '18.100,00'), row('ABC', '17.597')]);
		expect(events(await trigger.poll())).toEqual([
			expect.objectContaining({ currency: 'USD', previousValue: 17597.05, currentValue: 18100 }),
		]);
	});

	it('a rate that reads two ways ("17.597") is null, never guessed', async () => {
		const trigger = harness({ ...watchAll, options: { fireOnFirstPoll: true } });
		answerOnce([row('USD', '17597.05'), row('EUR', '17.597')]);
		const first = events(await trigger.activate());
		expect(first.find((event) => event.currency === 'EUR')).toMatchObject({
			currentValue: null,
			buy: null,
			sell: null,
			average: null,
		});
	});
});

describe('a poll that leaves a currency out', () => {
	it('with Currencies "USD, EUR", an answer without EUR is a quiet gap, not a failed poll', async () => {
		const trigger = harness({ ...watchAll, currencies: 'USD, EUR' });
		answerOnce([row('USD', 16000), row('EUR', 17600)]);
		await trigger.activate();
		answerOnce([row('USD', 16000)]);
		expect((await trigger.poll()).returned).toBeNull();
		answerOnce([row('USD', 16000), row('EUR', 18000)]);
		expect(events(await trigger.poll())).toEqual([
			expect.objectContaining({ currency: 'EUR', previousValue: 17600, currentValue: 18000 }),
		]);
	});

	it('a currency never seen since the settings were made still fails the poll, naming it', async () => {
		const trigger = harness({ ...watchAll, currencies: 'USD, EUR' });
		answerOnce([row('USD', 16000)]);
		await expect(trigger.activate()).rejects.toThrow(
			'Field "Currencies" holds "EUR", which provider "xyz" does not offer; it offers USD',
		);
	});

	it('keeps its reference: the move across the gap fires', async () => {
		const trigger = harness(watchAll);
		answerOnce([row('USD', 16000), row('EUR', 17600)]);
		await trigger.activate();
		answerOnce([row('EUR', 17600)]);
		expect(events(await trigger.poll())).toEqual([]);
		answerOnce([row('USD', 24000), row('EUR', 17600)]);
		expect(events(await trigger.poll())).toEqual([
			expect.objectContaining({
				event: 'moved',
				currency: 'USD',
				previousValue: 16000,
				currentValue: 24000,
				changePercent: 50,
			}),
		]);
	});
});

describe('a reading orders of magnitude off', () => {
	it('is a move like any other: the rates are read as the provider gives them, not second-guessed', async () => {
		const trigger = harness(watchAll);
		answerOnce([row('ABC', 16000)]);
		await trigger.activate();
		answerOnce([row('ABC', 16_000_000)]);
		expect(events(await trigger.poll())).toEqual([
			expect.objectContaining({ previousValue: 16000, currentValue: 16_000_000 }),
		]);
	});
});

describe('currency names in static data', () => {
	it('names that are no currency code (200 KB each) are not kept; the memory stays small', async () => {
		const trigger = harness({ ...watchAll, options: { fireOnFirstPoll: true } });
		const huge = Array.from({ length: 64 }, (_, n) =>
			row(`${String(n).padStart(3, '0')}${'X'.repeat(200_000)}`, 16000),
		);
		answerOnce([...huge, row('JPY 100', 10605), row('USD', 16000)]);
		const first = events(await trigger.activate());
		expect(first.map((event) => event.currency)).toEqual(['USD']);
		expect(JSON.stringify(trigger.liveStaticData()).length).toBeLessThan(2_000);
	});
});
