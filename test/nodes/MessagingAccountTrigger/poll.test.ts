/**
 * Messaging Account Trigger, what every poll does whatever the events: only the requests the
 * chosen events need (at most three), settings checked with errors that name the field, "Fetch
 * Test Event" samples that leave the memory alone, and a memory without secrets.
 */
import { apiRequests, tokenRequests } from '../../harness/messagingNode';
import { accountTrigger, failureOf, itemsOf, savedMemory } from '../../harness/accountTriggerNode';
import { sandboxCredential } from '../../harness/engine';
import { ACCOUNT_TRIGGER_TYPE, PollHarness } from '../../harness/pollEngine';
import { useSandbox } from '../../harness/useSandbox';

const sandbox = useSandbox();

const ACCOUNT = '+62 812-8877-6713';
const requestNames = (from = 0) =>
	apiRequests(sandbox)
		.slice(from)
		.map((r) => `${r.method} ${r.path}${r.params?.method ? ` ${String(r.params.method)}` : ''}`);

describe('Messaging Account Trigger: requests', () => {
	it.each([
		[['disconnected'], ['GET /api/wa/2.0/get status']],
		[['connected', 'qrCodeNeeded'], ['GET /api/wa/2.0/get status']],
		[['webhookChanged'], ['POST /api/wa/2.0/post check']],
		[['usageLimit'], ['GET /api/wa/2.0/limit']],
		[['gatewayUnreachable'], ['GET /api/wa/2.0/get status']],
		[['usageLimit', 'gatewayUnreachable'], ['GET /api/wa/2.0/limit']],
		[
			[
				'disconnected',
				'connected',
				'qrCodeNeeded',
				'webhookChanged',
				'usageLimit',
				'gatewayUnreachable',
			],
			['GET /api/wa/2.0/get status', 'POST /api/wa/2.0/post check', 'GET /api/wa/2.0/limit'],
		],
	])('%j asks %j on each poll, and nothing else', async (events, expected) => {
		const trigger = accountTrigger(sandbox, { events, accountNumber: ACCOUNT });
		await trigger.activate();
		expect(requestNames().sort()).toEqual([...expected].sort());
		const before = apiRequests(sandbox).length;
		await trigger.poll();
		expect(requestNames(before).sort()).toEqual([...expected].sort());
	});

	it("shares one token across polls (the transport's cache)", async () => {
		const trigger = accountTrigger(sandbox, {
			events: ['disconnected', 'webhookChanged'],
			accountNumber: ACCOUNT,
		});
		await trigger.activate();
		for (let tick = 0; tick < 3; tick++) await trigger.poll();
		expect(tokenRequests(sandbox)).toHaveLength(1);
	});
});

describe('Messaging Account Trigger: settings', () => {
	it.each([
		[{ events: [] }, /^Field "Events to Watch" is empty$/],
		[
			{ events: ['disconnected', 'typo'] },
			/^Field "Events to Watch" holds unknown events: \["typo"\]$/,
		],
		[{ events: ['webhookChanged'] }, /^Field "Account Number" /],
		[
			{ events: ['usageLimit'], usagePercent: 120 },
			/^Field "Percentage Left" is 120, not a number from 0 to 100$/,
		],
		[
			{ events: ['usageLimit'], usageRule: 'count', usageCount: 2.5 },
			/^Field "Messages Left" is 2.5, not a whole number of at least 0$/,
		],
		[
			{ events: ['gatewayUnreachable'], failedPolls: 0 },
			/^Field "Failed Polls Before Firing" is 0, not a whole number from 1 to 1000$/,
		],
		[
			{ events: ['qrCodeNeeded'], options: { qrCodesPerDisconnection: '={{ 200 }}' } },
			/^Field "QR Codes per Disconnection" is 200, not a whole number from 1 to 100$/,
		],
		[
			{ events: ['qrCodeNeeded'], options: { minutesBetweenQrCodes: -1 } },
			/^Field "Minutes Between QR Codes" is -1, not a number from 0 to 1440$/,
		],
	])('%j is refused before any request: %s', async (parameters, message) => {
		const trigger = accountTrigger(sandbox, parameters);
		await expect(trigger.activate()).rejects.toThrow(message);
		expect(apiRequests(sandbox)).toEqual([]);
	});

	it("a wrong credential fails the activation with the transport's words, without the secret", async () => {
		const wrong = new PollHarness({
			triggerType: ACCOUNT_TRIGGER_TYPE,
			parameters: { events: ['disconnected'] },
			credentials: sandboxCredential(sandbox.url, { clientSecret: 'not-the-secret-42' }),
		});
		const error = await failureOf(wrong.activate());
		expect(error.message).toMatch(
			/^Could not read the account's health: Authenticate \(messaging\)/,
		);
		expect(JSON.stringify(error)).not.toContain('not-the-secret-42');
		expect(error.message).not.toContain('not-the-secret-42');
	});
});

describe('Messaging Account Trigger: Fetch Test Event', () => {
	it('returns one sample per chosen event from the state now, the QR as an image, and saves nothing', async () => {
		sandbox.logout(undefined, { showQr: true });
		sandbox.setUsage({ limit: 100, used: 40 });
		const trigger = accountTrigger(sandbox, {
			events: ['disconnected', 'qrCodeNeeded', 'usageLimit'],
		});
		const test = await trigger.fetchTestEvent();
		expect(test.error).toBeUndefined();
		expect(test.triggerItems.map((item) => item.json)).toEqual([
			expect.objectContaining({
				event: 'disconnected',
				sample: true,
				connected: false,
				status: 'got qr code',
			}),
			expect.objectContaining({
				event: 'qrCodeNeeded',
				sample: true,
				qrNumber: 1,
				qrImageField: 'qrCode',
			}),
			expect.objectContaining({ event: 'usageLow', sample: true, remaining: 60, level: 'ok' }),
		]);
		expect(test.triggerItems[1].binary?.qrCode.mimeType).toBe('image/png');
		expect(test.receivedItems).toHaveLength(3);
		expect(trigger.staticData()).toEqual({});
	});

	it("compares with the active workflow's memory and leaves it alone", async () => {
		const trigger = accountTrigger(sandbox, { events: ['connected'] });
		await trigger.activate();
		const before = trigger.staticData();
		sandbox.logout();
		const test = await trigger.fetchTestEvent();
		expect(test.triggerItems[0].json).toMatchObject({
			event: 'connected',
			sample: true,
			connected: false,
			previousStatus: 'authenticated',
			previousSince: (savedMemory(trigger)?.session as { since: string }).since,
		});
		expect(trigger.staticData()).toEqual(before);
		// The active workflow still sees the change as new.
		expect((await trigger.poll()).returned).toEqual([[]]);
	});
});

describe('Messaging Account Trigger: memory', () => {
	it('is small and holds no secret, token, QR code or webhook beyond its origin', async () => {
		const webhook = 'https://n8n.example.com/webhook/9d2e-private-path?token=hook-secret-9';
		sandbox.setWebhook(undefined, webhook);
		sandbox.setUsage({ limit: 100, used: 99 });
		const trigger = accountTrigger(sandbox, {
			events: [
				'disconnected',
				'connected',
				'qrCodeNeeded',
				'webhookChanged',
				'usageLimit',
				'gatewayUnreachable',
			],
			accountNumber: ACCOUNT,
		});
		await trigger.activate();
		sandbox.logout(undefined, { showQr: true });
		sandbox.setWebhook(undefined, 'https://other.example.net/in?key=other-secret-7');
		const fired = await trigger.poll();
		expect(itemsOf(fired).length).toBeGreaterThan(0);
		const saved = JSON.stringify(trigger.staticData());
		expect(saved.length).toBeLessThan(1000);
		const tokens = sandbox
			.requests()
			.map((r) => r.authorization?.replace(/^Bearer /, ''))
			.filter((t): t is string => !!t);
		const payload = sandbox.accounts()[0].qrPayload as string;
		for (const secret of [
			'demo-secret',
			'hook-secret-9',
			'other-secret-7',
			'9d2e-private-path',
			payload,
			...tokens,
		]) {
			expect(saved).not.toContain(secret);
			expect(JSON.stringify(itemsOf(fired).map((item) => item.json))).not.toContain(secret);
		}
	});
});
