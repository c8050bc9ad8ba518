/**
 * How the Currency Rate Trigger reads a provider's answers across polls, through n8n-core's poll
 * machinery against a sandbox that answers what each test scripts: a row that changes how it
 * writes its numbers does not change how another row is read; a currency a poll leaves out keeps
 * its reference; a reading orders of magnitude off is not believed at once; currency names are
 * bounded in static data; a table quoting per 100 units.
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

describe('a row that changes its number format', () => {
	it('does not change how another row is read: no false move, on the way there or back', async () => {
		const trigger = harness(watchAll);
		// "17.597" reads 17.597 or 17,597; ABC has no plausible range to decide by, only evidence.
		answerOnce([row('USD', '17.597,05'), row('ABC', '17.597')]);
		expect((await trigger.activate()).returned).toBeNull();
		answerOnce([row('USD', '17597.05'), row('ABC', '17.597')]);
		expect(events(await trigger.poll())).toEqual([]);
		answerOnce([row('USD', '17.597,05'), row('ABC', '17.597')]);
		expect(events(await trigger.poll())).toEqual([]);
		// A real move of ABC still fires, read in the provider's format.
		answerOnce([row('USD', '17597.05'), row('ABC', '18.100')]);
		expect(events(await trigger.poll())).toEqual([
			expect.objectContaining({ currency: 'ABC', previousValue: 17597, currentValue: 18100 }),
		]);
	});

	it('a currency with a plausible range is read right even on a first poll whose other rows say otherwise', async () => {
		const trigger = harness({ ...watchAll, options: { fireOnFirstPoll: true } });
		answerOnce([row('USD', '17597.05'), row('EUR', '17.597')]);
		const first = events(await trigger.activate());
		expect(first.find((event) => event.currency === 'EUR')).toMatchObject({ currentValue: 17597 });
	});
});

describe('a poll that leaves a currency out', () => {
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
	it('fires nothing; three polls in a row make it the new baseline, still without an event', async () => {
		const trigger = harness(watchAll);
		answerOnce([row('ABC', 16000)]);
		await trigger.activate();
		for (let poll = 0; poll < 3; poll++) {
			answerOnce([row('ABC', 16_000_000)]);
			expect(events(await trigger.poll())).toEqual([]);
		}
		answerOnce([row('ABC', 16_400_000)]);
		expect(events(await trigger.poll())).toEqual([
			expect.objectContaining({ previousValue: 16_000_000, currentValue: 16_400_000 }),
		]);
	});

	it('a single misread poll between good ones changes nothing', async () => {
		const trigger = harness(watchAll);
		answerOnce([row('USD', 16000)]);
		await trigger.activate();
		answerOnce([row('USD', 16)]);
		expect(events(await trigger.poll())).toEqual([]);
		answerOnce([row('USD', 16100)]);
		expect(events(await trigger.poll())).toEqual([]);
		answerOnce([row('USD', 16300)]);
		expect(events(await trigger.poll())).toEqual([
			expect.objectContaining({ previousValue: 16000, currentValue: 16300 }),
		]);
	});
});

describe('currency names in static data', () => {
	it('names that are no currency code (200 KB each) are not kept; the memory stays small', async () => {
		const trigger = harness({ ...watchAll, options: { fireOnFirstPoll: true } });
		const huge = Array.from({ length: 64 }, (_, n) =>
			row(`${String(n).padStart(3, '0')}${'X'.repeat(200_000)}`, 16000),
		);
		answerOnce([...huge, row('USD', 16000)]);
		const first = events(await trigger.activate());
		expect(first.map((event) => event.currency)).toEqual(['USD']);
		expect(JSON.stringify(trigger.liveStaticData()).length).toBeLessThan(2_000);
	});
});

describe('a table quoting per 100 units', () => {
	it("the tax office's JPY (per 100 yen, unit not stated): events per 1 yen with unit 100", async () => {
		const trigger = harness({
			provider: 'kmk',
			currencies: 'JPY',
			event: 'threshold',
			field: 'average',
			threshold: 110,
			direction: 'above',
		});
		await trigger.activate();
		sandbox.moveRate({ provider: 'kmk', currency: 'JPY', percent: 5 });
		const [event] = events(await trigger.poll());
		expect(event).toMatchObject({ event: 'crossedAbove', currency: 'JPY', unit: 100 });
		expect(event.currentValue as number).toBeGreaterThan(110);
		expect(event.currentValue as number).toBeLessThan(115);
	});

	it('a unit the answer states is read (a unit field, or a name such as "JPY 100")', async () => {
		const trigger = harness({ ...watchAll, options: { fireOnFirstPoll: true } });
		answerOnce([
			row('JPY', 10605, { unit: 100 }),
			row('KRW 100', 1170),
			row('VND', '64,00', { satuan: '100' }),
		]);
		const first = events(await trigger.activate());
		expect(first.map((event) => [event.currency, event.currentValue, event.unit])).toEqual([
			['JPY', 106.05, 100],
			['KRW', 11.7, 100],
			['VND', 0.64, 100],
		]);
	});
});
