/**
 * The Currency Rate Trigger against a provider whose answers are as unhelpful as they can be,
 * through n8n-core's poll machinery: every row flipping its number format on every poll, rows
 * that read two ways, half the currencies missing from every other answer, 64 "currency names" of
 * 200 KB, 10,000 rows. Nothing false fires, nothing real is missed, static data stays small,
 * reading stays linear.
 */
import type { IDataObject } from 'n8n-workflow';

import { parseRateAnswer } from '../../nodes/shared/rates/rateTable';
import { sandboxCredential } from '../harness/engine';
import { expectLinearTime } from '../harness/hostile';
import { PollHarness } from '../harness/pollEngine';
import { useSandbox } from '../harness/useSandbox';

const sandbox = useSandbox();

const watchAll = {
	provider: 'xyz',
	currencies: '',
	event: 'change',
	field: 'average',
	changePercent: 1,
};
const events = (outcome: { execution?: { triggerItems: Array<{ json: IDataObject }> } }) =>
	(outcome.execution?.triggerItems ?? []).map((item) => item.json);

function answerOnce(rows: Array<Record<string, unknown>>): void {
	sandbox.addFaults([
		{
			kind: 'answer',
			result: { success: true, response: rows },
			match: { rpcMethod: 'getkurs' },
			times: 1,
		},
	]);
}
/** 26 currencies ABA…ABZ at 1x,yyy.50, written with a decimal comma or a point by turns, and
 * one that reads two ways (ZZZ "17.597"). */
function table(poll: number, omitHalf: boolean) {
	const written = (value: number) =>
		poll % 2 === 0
			? `${Math.floor(value / 1000)}.${String(Math.floor(value) % 1000).padStart(3, '0')},50`
			: `${Math.floor(value)}.50`;
	const others = Array.from({ length: 26 }, (_, n) => ({
		name: `AB${String.fromCharCode(65 + n)}`,
		rate_avg: written((10 + (n % 9)) * 1000 + 100 + n),
	})).filter((_, n) => !(omitHalf && poll % 2 === 1 && n % 2 === 0));
	return [
		{ name: 'USD', rate_avg: written(17597) },
		{ name: 'ZZZ', rate_avg: '17.597' },
		...others,
	];
}

describe('a provider that changes its format and leaves currencies out', () => {
	it('40 polls: no false event; the one real move fires once', async () => {
		const trigger = new PollHarness({
			parameters: watchAll,
			credentials: sandboxCredential(sandbox.url),
		});
		answerOnce(table(0, true));
		await trigger.activate();
		const fired: IDataObject[] = [];
		for (let poll = 1; poll < 40; poll++) {
			const rows = table(poll, true);
			// Poll 30 on: ABA really moves by 5 % (and is missing from every other answer).
			if (poll >= 30) rows.forEach((row) => row.name === 'ABA' && (row.rate_avg = '10605.5'));
			answerOnce(rows);
			fired.push(...events(await trigger.poll()));
		}
		expect(fired.map((event) => [event.currency, event.previousValue, event.currentValue])).toEqual(
			[['ABA', 10100.5, 10605.5]],
		);
	});
});

describe('bounded memory', () => {
	it('64 names of 200 KB and 10,000 rows: at most 64 currencies of at most 12 characters in static data', async () => {
		const trigger = new PollHarness({
			parameters: { ...watchAll, options: { fireOnFirstPoll: true } },
			credentials: sandboxCredential(sandbox.url),
		});
		const huge = Array.from({ length: 64 }, (_, n) => ({
			name: `C${n}${'Y'.repeat(200_000)}`,
			rate_avg: 1,
		}));
		const many = Array.from({ length: 10_000 }, (_, n) => ({ name: `K${n}`, rate_avg: 1 + n }));
		answerOnce([...huge, ...many]);
		await trigger.activate();
		const stored = JSON.stringify(trigger.liveStaticData());
		expect(stored.length).toBeLessThan(64 * 200);
		const memory = (trigger.liveStaticData()['node:Currency Rate Trigger'] as IDataObject)
			.rateWatch as { rates: IDataObject };
		expect(Object.keys(memory.rates)).toHaveLength(64);
		expect(Object.keys(memory.rates).every((code) => code.length <= 12)).toBe(true);
	});

	it('reading a table is linear in its size (rows of names and numbers that read two ways)', () => {
		expectLinearTime('rates: ambiguous numbers, long names', {
			input: (bytes) => ({
				response: Array.from({ length: Math.floor(bytes / 64) }, (_, n) => ({
					name: n % 2 ? `N${n % 150}` : 'Z'.repeat(40),
					rate_buy: '17.597',
					rate_sell: '17.597,05',
					rate_avg: '17597.05',
				})),
			}),
			run: (answer) => parseRateAnswer('x', answer, 0),
		});
	});
});
