/**
 * Keeping the account safe (the pacer in nodes/Messaging/helpers/sending.ts, sendWindow.ts and
 * Message → Wait for Send Window) through n8n's real engine, on a virtual clock: the nodes' waits
 * move it on (test/harness/virtualTime.ts) and the sandbox stamps its ledger with it, so the
 * ledger's times prove each limit without a wall-clock assertion.
 */
import type { IConnections, IDataObject, INode, INodeParameters } from 'n8n-workflow';

import { clock } from '../../../../nodes/shared/clock';
import {
	PACKAGE,
	runWorkflow,
	sandboxCredential,
	singleNodeWorkflow,
	type EngineRun,
	type WorkflowJson,
} from '../../../harness/engine';
import { mappedSendText, orderItems, runMessaging } from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';
import { useVirtualTime } from '../../../harness/virtualTime';
import { WaitingHarness } from '../../../harness/waitingEngine';
import { MemoryTable } from '../../../../nodes/shared/store';

const sandbox = useSandbox({ now: () => clock.now() });
const time = useVirtualTime();
beforeEach(() => MemoryTable.forgetAll());

const NO_DELAY = { messageDelay: { range: { minSeconds: 0, maxSeconds: 0 } } };
const MINUTE = 60_000;

/** The ledger's send times (ms), in order. */
const sendTimes = () => sandbox.ledger().map((entry) => Date.parse(entry.at));
/** The execution hints of the node's run (n8n shows them above the output). */
const hintsOf = (run: EngineRun) => run.run.data.resultData.runData.Node[0].hints ?? [];
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]);
/** The most sends in any window of `periodMs` (a send at t counts in (t - period, t]). */
const mostInAnyWindow = (times: number[], periodMs: number) =>
	Math.max(...times.map((t) => times.filter((s) => s > t - periodMs && s <= t).length));

describe('Delay Between Messages', () => {
	it('waits 2–6 s by default, drawn anew for each message, and not before the first', async () => {
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(12));
		expect(run.error).toBeUndefined();
		const between = gaps(sendTimes());
		expect(between).toHaveLength(11);
		for (const gap of between) {
			expect(gap).toBeGreaterThanOrEqual(2000);
			expect(gap).toBeLessThanOrEqual(6000);
		}
		// Not machine-regular: 11 draws from 4,000 ms are not all one value.
		expect(new Set(between).size).toBeGreaterThan(5);
		const out = run.output('Node').map((item) => item.json);
		expect(out[0]).toMatchObject({ sent: true, waitedMs: 0, sentAt: sandbox.ledger()[0].at });
		expect(out.slice(1).map((item) => item.waitedMs)).toEqual(between);
	});

	it('a range of its own (0.5–1 s); 0 and 0: no pause', async () => {
		await runMessaging(
			sandbox,
			mappedSendText({ messageDelay: { range: { minSeconds: 0.5, maxSeconds: 1 } } }),
			orderItems(6),
		);
		for (const gap of gaps(sendTimes())) {
			expect(gap).toBeGreaterThanOrEqual(500);
			expect(gap).toBeLessThanOrEqual(1000);
		}
		sandbox.reset();
		const none = await runMessaging(
			sandbox,
			mappedSendText({ messageDelay: { range: { minSeconds: 0, maxSeconds: 0 } } }),
			orderItems(4, 10),
		);
		expect(gaps(sendTimes())).toEqual([0, 0, 0]);
		expect(none.output('Node').map((item) => item.json.waitedMs)).toEqual([0, 0, 0, 0]);
	});

	it('does not pace other operations (Number → Check)', async () => {
		await runMessaging(
			sandbox,
			{ resource: 'number', operation: 'check', phone: '={{ $json.phone }}' },
			orderItems(3),
		);
		expect(time.sleeps()).toEqual([]);
	});
});

describe('Account Cap', () => {
	const capped = (messages: number, extra: IDataObject = {}) =>
		mappedSendText({ ...NO_DELAY, accountCap: { cap: { messages, per: 'minute' } }, ...extra });

	it('holds across two workflows sharing the credential: never more than 5 in any minute, every message once', async () => {
		const runs = await Promise.all([
			runMessaging(sandbox, capped(5), orderItems(8)),
			runWorkflow(
				singleNodeWorkflow('messaging', capped(5), orderItems(8, 100)),
				sandboxCredential(sandbox.url),
				{ workflowId: 'another-workflow' },
			),
		]);
		for (const run of runs) expect(run.error).toBeUndefined();
		const times = sendTimes();
		expect(times).toHaveLength(16);
		expect(mostInAnyWindow(times, MINUTE)).toBe(5);
		const texts = sandbox.ledger().map((entry) => entry.text);
		expect(new Set(texts).size).toBe(16);
		// 16 messages at 5 a minute: the last goes out in the fourth minute.
		expect(times[15] - times[0]).toBeGreaterThanOrEqual(3 * MINUTE);
		const waited = runs.flatMap((run) => run.output('Node').map((item) => item.json.waitedMs));
		expect(waited.filter((ms) => (ms as number) >= MINUTE / 2).length).toBeGreaterThan(0);
		// The execution hint says the cap held the run.
		expect(hintsOf(runs[0])).toEqual([
			expect.objectContaining({
				message: expect.stringMatching(/^This run waited \d+ (s|min) for the Account Cap\.$/),
				type: 'info',
			}),
		]);
	});

	it('holds for one account reached under two Base URL spellings (127.0.0.1 and localhost)', async () => {
		const other = sandbox.url.replace('127.0.0.1', 'localhost');
		expect(other).not.toBe(sandbox.url);
		await Promise.all([
			runMessaging(sandbox, capped(5), orderItems(6)),
			runWorkflow(
				singleNodeWorkflow('messaging', capped(5), orderItems(6, 100)),
				sandboxCredential(other),
				{ workflowId: 'another-workflow' },
			),
		]);
		const times = sendTimes();
		expect(times).toHaveLength(12);
		expect(mostInAnyWindow(times, MINUTE)).toBe(5);
	});

	it('the same items twice at once, waiting for the cap: each message once (Skip Repeats Within holds across the wait)', async () => {
		const runs = await Promise.all([
			runMessaging(sandbox, capped(2), orderItems(6)),
			runWorkflow(
				singleNodeWorkflow('messaging', capped(2), orderItems(6)),
				sandboxCredential(sandbox.url),
				{ workflowId: 'test-workflow' },
			),
		]);
		const out = runs.flatMap((run) => run.output('Node').map((item) => item.json));
		expect(out.filter((item) => item.sent === true)).toHaveLength(6);
		expect(out.filter((item) => item.skipped === true)).toHaveLength(6);
		expect(
			sandbox
				.ledger()
				.map((entry) => entry.text)
				.sort(),
		).toEqual(
			orderItems(6)
				.map((item) => item.text)
				.sort(),
		);
		expect(mostInAnyWindow(sendTimes(), MINUTE)).toBe(2);
	});

	it('beyond Max Wait: the rest come out not attempted, their claims given back, and a later run sends them once', async () => {
		const run = await runMessaging(sandbox, capped(3, { maxWaitMinutes: 0 }), orderItems(5), {
			onError: 'continueRegularOutput',
		});
		const out = run.output('Node').map((item) => item.json);
		expect(out.map((item) => item.sent === true)).toEqual([true, true, true, false, false]);
		expect(out[3]).toMatchObject({
			error: expect.stringMatching(/^Not sent: the account sent 3 messages in the last minute/),
			details: { notAttempted: true, deliveryUnknown: false, capFreesAt: expect.any(String) },
		});
		expect(sandbox.ledger()).toHaveLength(3);
		time.set(time.now() + MINUTE);
		await runMessaging(sandbox, capped(3, { maxWaitMinutes: 0 }), orderItems(5));
		expect(sandbox.ledger().map((entry) => entry.text)).toEqual(
			orderItems(5).map((item) => item.text),
		);
	});
});

describe('Send Only Between', () => {
	// Monday 2026-11-23, 08:59:50 UTC.
	const BEFORE_NINE = Date.parse('2026-11-23T08:59:50Z');
	const nineToFive = (extra: IDataObject = {}) =>
		mappedSendText({
			sendWindow: {
				window: { start: '09:00', end: '17:00', days: ['mon', 'tue'], timeZone: 'UTC' },
			},
			...extra,
		});

	it('a window that opens mid-run: the first message waits for 09:00, none goes out before', async () => {
		time.set(BEFORE_NINE);
		const run = await runMessaging(sandbox, nineToFive(), orderItems(4));
		expect(run.error).toBeUndefined();
		const times = sendTimes();
		expect(times).toHaveLength(4);
		expect(Math.min(...times)).toBe(Date.parse('2026-11-23T09:00:00Z'));
		expect(run.output('Node')[0].json).toMatchObject({ waitedMs: 10_000 });
		// Besides the window, the run paused before the 3 messages after the first.
		expect(hintsOf(run).map((hint) => hint.message)).toEqual([
			expect.stringMatching(
				/^This run paused \d+ s in all before 3 messages \(Delay Between Messages: 2–6 s at random before each message but the first, so that the WhatsApp account does not send in bursts\), and waited 10 s for Send Only Between to open\.$/,
			),
		]);
	});

	it('outside the window beyond Max Wait: not attempted, with the next opening; a window in another time zone', async () => {
		// 17:30 UTC on Tuesday: the next opening is Monday 09:00 (Asia/Jakarta is UTC+7).
		time.set(Date.parse('2026-11-24T17:30:00Z'));
		const run = await runMessaging(
			sandbox,
			mappedSendText({
				sendWindow: {
					window: { start: '09:00', end: '17:00', days: ['mon'], timeZone: 'Asia/Jakarta' },
				},
			}),
			orderItems(2),
			{ onError: 'continueRegularOutput' },
		);
		const out = run.output('Node').map((item) => item.json);
		for (const item of out)
			expect(item).toMatchObject({
				error: expect.stringContaining(
					'outside Send Only Between (09:00–17:00 Mon (Asia/Jakarta))',
				),
				details: { notAttempted: true, nextWindowOpensAt: '2026-11-30T02:00:00.000Z' },
			});
		expect(sandbox.ledger()).toEqual([]);
		// No pause was spent on messages that were not sent.
		expect(time.sleeps()).toEqual([]);
	});

	it('a window that closes mid-run: what is left comes out not attempted, nothing is sent after 17:00', async () => {
		time.set(Date.parse('2026-11-23T16:59:50Z'));
		const run = await runMessaging(
			sandbox,
			nineToFive({ messageDelay: { range: { minSeconds: 4, maxSeconds: 4 } } }),
			orderItems(5),
			{ onError: 'continueRegularOutput' },
		);
		const out = run.output('Node').map((item) => item.json);
		expect(out.map((item) => item.sent === true)).toEqual([true, true, true, false, false]);
		expect(Math.max(...sendTimes())).toBeLessThan(Date.parse('2026-11-23T17:00:00Z'));
		expect(out[3]).toMatchObject({
			details: { nextWindowOpensAt: '2026-11-24T09:00:00.000Z' },
		});
	});

	const twoZones = [
		{ phone: '+62 812-8877-6713', text: 'Selamat pagi', tz: 'Asia/Jakarta' },
		{ phone: '+1 415 555 2671', text: 'Good morning', tz: 'America/New_York' },
	];

	it('a Time Zone mapped per item gives each recipient their own hours, in one run', async () => {
		// Monday 03:00 UTC: 10:00 in Jakarta (open), 22:00 on Sunday in New York (closed).
		time.set(Date.parse('2026-11-23T03:00:00Z'));
		const run = await runMessaging(
			sandbox,
			mappedSendText({
				sendWindow: { window: { start: '09:00', end: '17:00', timeZone: '={{ $json.tz }}' } },
			}),
			twoZones,
			{ onError: 'continueRegularOutput' },
		);
		const out = run.output('Node').map((item) => item.json);
		expect(out[0]).toMatchObject({ sent: true });
		expect(out[1]).toMatchObject({
			error: expect.stringContaining('(09:00–17:00 every day (America/New_York))'),
			details: { notAttempted: true, nextWindowOpensAt: '2026-11-23T14:00:00.000Z' },
		});
		expect(sandbox.ledger().map((entry) => entry.text)).toEqual(['Selamat pagi']);
	});

	it('Days mapped as text ("sat,sun") opens on those days only, never every day', async () => {
		time.set(Date.parse('2026-11-23T10:00:00Z'));
		const run = await runMessaging(
			sandbox,
			mappedSendText({
				sendWindow: {
					window: { start: '09:00', end: '17:00', days: '={{ $json.days }}', timeZone: 'UTC' },
				},
			}),
			[{ ...orderItems(1)[0], days: 'sat,sun' }],
			{ onError: 'continueRegularOutput' },
		);
		expect(run.output('Node')[0].json).toMatchObject({
			details: { notAttempted: true, nextWindowOpensAt: '2026-11-28T09:00:00.000Z' },
		});
		expect(sandbox.ledger()).toEqual([]);
	});

	it('a window until 24:00 closes at midnight also on a day whose midnight does not exist (Santiago)', async () => {
		// Sunday 2026-09-06 starts at 01:00 in Santiago; Monday 00:30 there is 03:30 UTC.
		time.set(Date.parse('2026-09-07T03:30:00Z'));
		const run = await runMessaging(
			sandbox,
			mappedSendText({
				sendWindow: {
					window: { start: '20:00', end: '24:00', days: ['sun'], timeZone: 'America/Santiago' },
				},
			}),
			orderItems(1),
			{ onError: 'continueRegularOutput' },
		);
		expect(run.output('Node')[0].json).toMatchObject({ details: { notAttempted: true } });
		expect(sandbox.ledger()).toEqual([]);
	});

	it('a bad window is refused before anything is sent, naming the item, the field and the fix', async () => {
		const run = await runMessaging(
			sandbox,
			mappedSendText({ sendWindow: { window: { start: '9am', end: '17:00' } } }),
			orderItems(2),
		);
		expect(run.error?.message).toBe(
			'Field "Send Only Between → Start" is not a time of day ("9am") [item 0]',
		);
		expect(run.error?.description).toMatch(/HH:MM/);
		expect(sandbox.ledger()).toEqual([]);
	});
});

describe('Message → Wait for Send Window', () => {
	let harness: WaitingHarness;
	beforeAll(async () => {
		harness = await WaitingHarness.start(sandboxCredential(sandbox.url));
	});
	afterAll(async () => await harness.close());

	const WINDOW = { start: '09:00', end: '17:00', days: ['mon', 'tue', 'wed'], timeZone: 'UTC' };

	/** Items → Wait for Send Window → Send Text (with the same window as its guard). */
	function windowThenSend(items: IDataObject[]): WorkflowJson {
		const base = singleNodeWorkflow(
			'messaging',
			{ resource: 'message', operation: 'waitForSendWindow', ...WINDOW },
			items,
			{ name: 'Wait' },
		);
		const send: INode = {
			id: '4',
			name: 'Send',
			type: `${PACKAGE}.messaging`,
			typeVersion: 1,
			position: [600, 0],
			parameters: mappedSendText({ sendWindow: { window: WINDOW } }) as INodeParameters,
			credentials: { messagingRateApi: { id: 'cred-1', name: 'Sandbox' } },
		};
		return {
			nodes: [...base.nodes, send],
			connections: {
				Start: base.connections.Start,
				Items: { main: [[{ node: 'Wait', type: 'main', index: 0 }]] },
				Wait: { main: [[{ node: 'Send', type: 'main', index: 0 }]] },
			} as IConnections,
		};
	}

	/** Items → Wait for Send Window with the Time Zone mapped per item. */
	const perItemZone = (items: IDataObject[], window: IDataObject = {}) => {
		const base = singleNodeWorkflow(
			'messaging',
			{
				resource: 'message',
				operation: 'waitForSendWindow',
				...WINDOW,
				days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
				timeZone: '={{ $json.tz }}',
				...window,
			},
			items,
			{ name: 'Wait' },
		);
		return {
			nodes: base.nodes,
			connections: {
				Start: base.connections.Start,
				Items: { main: [[{ node: 'Wait', type: 'main', index: 0 }]] },
			} as IConnections,
		};
	};

	it("waits until every item's window is open, not only the first item's", async () => {
		// 09:00–23:00: 12:00 in Jakarta (open), midnight in New York (opens 09:00 there, 14:00 UTC,
		// while Jakarta's is still open).
		time.set(Date.parse('2026-11-23T05:00:00Z'));
		const waiting = await harness.run(
			perItemZone([{ tz: 'Asia/Jakarta' }, { tz: 'America/New_York' }], { end: '23:00' }),
		);
		expect(waiting.run.data.resultData.error?.message).toBeUndefined();
		expect(waiting.status).toBe('waiting');
		expect(waiting.waitTill?.toISOString()).toBe('2026-11-23T14:00:00.000Z');
	});

	it('windows that are never open at the same time are refused, naming the items and the fix', async () => {
		time.set(Date.parse('2026-11-23T03:00:00Z'));
		const refused = await harness.run(
			perItemZone([{ tz: 'Asia/Jakarta' }, { tz: 'America/New_York' }, { tz: 'Asia/Jakarta' }]),
		);
		expect(refused.status).toBe('error');
		const error = refused.run.data.resultData.error;
		expect(error?.message).toMatch(/^The items' send windows are never open at the same time/);
		expect(error?.description).toContain('the windows of items 0–2 do not overlap within a week');
	});

	it('inside the window the items pass at once; an opening 30 s away is waited for in the process', async () => {
		time.set(Date.parse('2026-11-23T10:00:00Z'));
		const open = await harness.run(windowThenSend(orderItems(2)));
		expect(open.status).toBe('success');
		expect(sandbox.ledger()).toHaveLength(2);
		sandbox.reset();
		time.set(Date.parse('2026-11-24T08:59:30Z'));
		const before = time.sleeps().length;
		const soon = await harness.run(windowThenSend(orderItems(2, 10)));
		expect(soon.status).toBe('success');
		expect(time.sleeps()[before]).toBe(30_000);
		expect(Math.min(...sendTimes())).toBe(Date.parse('2026-11-24T09:00:00Z'));
	});

	it('an opening hours away puts the execution to wait; after a restart, n8n resumes it and every message goes out once, inside the window', async () => {
		time.set(Date.parse('2026-11-23T06:00:00Z'));
		const waiting = await harness.run(windowThenSend(orderItems(3)));
		expect(waiting.status).toBe('waiting');
		expect(waiting.waitTill?.toISOString()).toBe('2026-11-23T09:00:00.000Z');
		expect(sandbox.ledger()).toEqual([]);
		// A restart: this process forgets its caps and claims; n8n keeps the execution in its database.
		MemoryTable.forgetAll();
		MemoryTable.forgetAll();
		// n8n's wait tracker polls every 60 s: it resumes the execution a little after the opening.
		time.set(Date.parse('2026-11-23T09:00:40Z'));
		const resumed = await harness.timeOut(waiting.id);
		expect(resumed.status).toBe('success');
		expect(resumed.output('Send').map((item) => item.json.sent)).toEqual([true, true, true]);
		expect(sandbox.ledger().map((entry) => entry.text)).toEqual(
			orderItems(3).map((item) => item.text),
		);
		for (const at of sendTimes())
			expect(at).toBeGreaterThanOrEqual(Date.parse('2026-11-23T09:00:00Z'));
		// The same items again (a re-run): Skip Repeats Within (version 2) sends nothing twice.
		const again = await harness.run(windowThenSend(orderItems(3)));
		expect(again.output('Send').map((item) => item.json.skipped)).toEqual([true, true, true]);
		expect(sandbox.ledger()).toHaveLength(3);
	});
});
