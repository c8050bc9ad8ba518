/**
 * Messaging Account Trigger, the session's events, through n8n-core's poll machinery against the
 * sandbox, whose account the tests log out, show new QR codes for and scan through its control
 * API: Disconnected and Connected Again fire once per change and say from what to what and
 * since when; QR Code Needed carries the QR as a PNG that scans to the gateway's code, again
 * when the code changes, at most N per disconnection and M minutes apart.
 */
import { pngShowsQrOf } from '../../harness/qrReader';
import {
	accountTrigger,
	eventsOf,
	fakeDateOnly,
	itemsOf,
	savedMemory,
	verdictOf,
} from '../../harness/accountTriggerNode';
import { useSandbox } from '../../harness/useSandbox';

const sandbox = useSandbox();

const qrPayload = () => sandbox.accounts()[0].qrPayload as string;

afterEach(() => jest.useRealTimers());

describe('Messaging Account Trigger: Disconnected, Connected Again', () => {
	const parameters = { events: ['disconnected', 'connected'] };

	it('fires once per change, from what to what and since when', async () => {
		const trigger = accountTrigger(sandbox, parameters);
		const activation = await trigger.activate();
		expect(verdictOf(activation)).toBe('nothing');
		const connectedSince = (savedMemory(trigger)?.session as { since: string }).since;
		expect((await trigger.poll()).returned).toBeNull();

		sandbox.logout();
		const down = await trigger.poll();
		expect(itemsOf(down).map((item) => item.json)).toEqual([
			{
				event: 'disconnected',
				connected: false,
				status: 'init',
				previousStatus: 'authenticated',
				since: expect.any(String),
				previousSince: connectedSince,
				checkedAt: expect.any(String),
			},
		]);
		const downSince = itemsOf(down)[0].json.since as string;
		expect(downSince).toBe(itemsOf(down)[0].json.checkedAt);
		expect(Date.parse(downSince)).toBeGreaterThanOrEqual(Date.parse(connectedSince));
		// What the next node got is what the trigger emitted.
		expect(down.execution?.receivedItems.map((item) => item.json.event)).toEqual(['disconnected']);

		// Still logged out, with a QR code now: the same disconnection, nothing new.
		sandbox.newQr();
		expect((await trigger.poll()).returned).toBeNull();
		expect((await trigger.poll()).returned).toBeNull();

		sandbox.scan();
		const up = await trigger.poll();
		expect(itemsOf(up).map((item) => item.json)).toEqual([
			{
				event: 'connected',
				connected: true,
				status: 'authenticated',
				previousStatus: 'got qr code',
				since: expect.any(String),
				previousSince: downSince,
				checkedAt: expect.any(String),
			},
		]);
		expect((await trigger.poll()).returned).toBeNull();
		expect(trigger.executions).toHaveLength(2);
	});

	it('a session flapping every poll fires twice, then nothing until it settles; the settled state is reported', async () => {
		const start = Date.parse('2026-11-24T08:00:00Z');
		const at = (minutes: number) => jest.setSystemTime(new Date(start + minutes * 60_000));
		fakeDateOnly(start);
		const trigger = accountTrigger(sandbox, parameters);
		await trigger.activate();
		const events: string[] = [];
		// Logged out and scanned again at every poll, a minute apart, for ten minutes.
		for (let minute = 1; minute <= 10; minute++) {
			at(minute);
			if (minute % 2) sandbox.logout();
			else sandbox.scan();
			events.push(...eventsOf(await trigger.poll()));
		}
		expect(events).toEqual(['disconnected', 'connected']);
		// Settled, logged out: reported once its last three changes (9, 10, 12) no longer fall within a
		// quarter of an hour.
		sandbox.logout();
		at(12);
		expect(verdictOf(await trigger.poll())).toBe('save');
		at(23);
		expect((await trigger.poll()).returned).toBeNull();
		at(25);
		expect(eventsOf(await trigger.poll())).toEqual(['disconnected']);
		expect(eventsOf(await trigger.poll())).toEqual([]);
		expect(JSON.stringify(trigger.staticData()).length).toBeLessThan(1024);
	});

	it('asks only Session → Get Status, once per poll', async () => {
		const trigger = accountTrigger(sandbox, parameters);
		await trigger.activate();
		await trigger.poll();
		const asked = sandbox.requests().filter((r) => !r.path.endsWith('/authentication'));
		expect(asked.map((r) => `${r.method} ${r.path} ${String(r.params?.method)}`)).toEqual([
			'GET /api/wa/2.0/get status',
			'GET /api/wa/2.0/get status',
		]);
	});

	it('reports a disconnection already there at activation, unless told not to', async () => {
		sandbox.logout();
		const reporting = accountTrigger(sandbox, parameters);
		const first = await reporting.activate();
		expect(itemsOf(first).map((item) => item.json)).toEqual([
			expect.objectContaining({
				event: 'disconnected',
				status: 'init',
				previousStatus: null,
				previousSince: null,
			}),
		]);

		const quiet = accountTrigger(sandbox, {
			...parameters,
			options: { reportProblemsAtStart: false },
		});
		expect((await quiet.activate()).returned).toBeNull();
		sandbox.scan();
		expect(eventsOf(await quiet.poll())).toEqual(['connected']);
	});

	it('with only "Connected Again" picked, a disconnection fires nothing but is saved (an empty result)', async () => {
		const trigger = accountTrigger(sandbox, { events: ['connected'] });
		await trigger.activate();
		sandbox.logout();
		const down = await trigger.poll();
		expect(verdictOf(down)).toBe('save');
		// n8n started an execution without items: no node after the trigger ran.
		expect(down.execution?.receivedItems).toEqual([]);
		expect(savedMemory(trigger)?.session).toMatchObject({ connected: false, status: 'init' });
		expect((await trigger.poll()).returned).toBeNull();
		sandbox.scan();
		expect(eventsOf(await trigger.poll())).toEqual(['connected']);
	});
});

describe('Messaging Account Trigger: QR Code Needed', () => {
	it('carries the QR code as a PNG that scans to the code the gateway shows', async () => {
		const trigger = accountTrigger(sandbox, { events: ['qrCodeNeeded'] });
		await trigger.activate();
		sandbox.logout(undefined, { showQr: true });
		const needed = await trigger.poll();
		const [item] = itemsOf(needed);
		expect(item.json).toEqual({
			event: 'qrCodeNeeded',
			connected: false,
			status: 'got qr code',
			disconnectedSince: expect.any(String),
			qrNumber: 1,
			qrLimit: 3,
			qrImageField: 'qrCode',
			checkedAt: expect.any(String),
		});
		expect(item.binary?.qrCode).toMatchObject({ mimeType: 'image/png', fileName: 'qr-code.png' });
		expect(pngShowsQrOf(Buffer.from(item.binary!.qrCode.data, 'base64'), qrPayload())).toBe(true);
		// The next node got the image too.
		expect(needed.execution?.receivedItems[0].binary?.qrCode.mimeType).toBe('image/png');
		// The payload (a login code) is only in the image: not in the JSON, not in static data.
		expect(JSON.stringify(item.json)).not.toContain(qrPayload());
		expect(JSON.stringify(trigger.staticData())).not.toContain(qrPayload());
		// The same code again: nothing.
		expect((await trigger.poll()).returned).toBeNull();
	});

	it('fires again when the code changes, at most "QR Codes per Disconnection", "Minutes Between QR Codes" apart', async () => {
		fakeDateOnly(new Date('2026-11-24T08:00:00Z'));
		const trigger = accountTrigger(sandbox, {
			events: ['qrCodeNeeded'],
			options: { qrCodesPerDisconnection: 2, minutesBetweenQrCodes: 5 },
		});
		await trigger.activate();
		sandbox.logout(undefined, { showQr: true });
		expect(itemsOf(await trigger.poll())[0].json.qrNumber).toBe(1);

		// A new code 4 minutes later: too soon. At 5 minutes it fires, with that code.
		jest.setSystemTime(new Date('2026-11-24T08:04:00Z'));
		sandbox.newQr();
		expect((await trigger.poll()).returned).toBeNull();
		jest.setSystemTime(new Date('2026-11-24T08:05:00Z'));
		const second = itemsOf(await trigger.poll())[0];
		expect(second.json).toMatchObject({ qrNumber: 2, qrLimit: 2 });
		expect(pngShowsQrOf(Buffer.from(second.binary!.qrCode.data, 'base64'), qrPayload())).toBe(true);

		// The bound: an hour of new codes fires nothing more.
		for (let minutes = 10; minutes <= 60; minutes += 10) {
			jest.setSystemTime(new Date(Date.parse('2026-11-24T08:05:00Z') + minutes * 60_000));
			sandbox.newQr();
			expect((await trigger.poll()).returned).toBeNull();
		}

		// Connected again (saved: an empty result), then a new disconnection starts a new count.
		sandbox.scan();
		expect(verdictOf(await trigger.poll())).toBe('save');
		sandbox.logout(undefined, { showQr: true });
		expect(itemsOf(await trigger.poll())[0].json.qrNumber).toBe(1);
	});

	it('waits for a code: a logged-out account without one fires nothing until the gateway shows it', async () => {
		const trigger = accountTrigger(sandbox, { events: ['disconnected', 'qrCodeNeeded'] });
		await trigger.activate();
		sandbox.logout();
		expect(eventsOf(await trigger.poll())).toEqual(['disconnected']);
		sandbox.newQr();
		expect(eventsOf(await trigger.poll())).toEqual(['qrCodeNeeded']);
	});

	it('reports a QR code no image can hold, once, with why its item has no image', async () => {
		const trigger = accountTrigger(sandbox, { events: ['disconnected', 'qrCodeNeeded'] });
		await trigger.activate();
		// A payload longer than any QR code can hold: the gateway shows it all the same.
		sandbox.addFaults([
			{
				kind: 'answer',
				probability: 1,
				match: { rpcMethod: 'status' },
				result: { accountStatus: 'got qr code', qrCode: `2@${'A'.repeat(5000)}` },
			},
		]);
		const fired = await trigger.poll();
		expect(eventsOf(fired)).toEqual(['disconnected', 'qrCodeNeeded']);
		const [, needed] = itemsOf(fired);
		expect(needed.binary).toBeUndefined();
		expect(needed.json).not.toHaveProperty('qrImageField');
		expect(needed.json.qrImageError).toMatch(/^No image: .*too big.*gateway's own page/);
		expect(JSON.stringify(needed.json)).not.toContain('AAAAAAAA');
		// Reported and saved: neither the next poll nor a restart reports it again.
		expect((await trigger.poll()).returned).toBeNull();
		expect(verdictOf(await trigger.activate())).toBe('nothing');
	});

	it("names its binary field as told, and decodes an older gateway's ready-made image", async () => {
		await sandbox.restart({ qrAsDataUri: true });
		try {
			const trigger = accountTrigger(sandbox, {
				events: ['qrCodeNeeded'],
				options: { qrBinaryPropertyName: 'scanMe' },
			});
			await trigger.activate();
			sandbox.logout(undefined, { showQr: true });
			const [item] = itemsOf(await trigger.poll());
			expect(item.json.qrImageField).toBe('scanMe');
			expect(pngShowsQrOf(Buffer.from(item.binary!.scanMe.data, 'base64'), qrPayload())).toBe(true);
		} finally {
			await sandbox.restart();
		}
	});
});
