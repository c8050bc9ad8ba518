/**
 * Messaging Trigger activation and deactivation, through n8n-core's real HookContext against the
 * sandbox over HTTP: what Update Account receives, what the account ends up with, what the
 * node keeps in static data, and what deactivation restores or clears.
 *
 * These run a version 1 trigger as existing workflows have it (Verification "None" by default,
 * so the registered URL is n8n's URL as it is); version 2's generated secret is in
 * messagingTrigger.security.test.ts.
 */
import type { RequestLogEntry } from '../../../sandbox/types';
import { ApiClient, endpoints, parseCredentials } from '../../../nodes/shared/transport';
import { useSandbox } from '../../harness/useSandbox';
import { useTrigger, useTriggerHarnesses } from '../../harness/messagingTriggerNode';

const ACCOUNT = '6281288776713';
const VERSION = '16.0.1.3';
const OTHER_SYSTEM_URL = 'https://crm.example.com/whatsapp/incoming';

const sandbox = useSandbox();
// The registration's own mechanics, with the plain URL (the generated secret: security.test.ts).
const harness = useTriggerHarnesses(sandbox, { parameters: { verification: 'none' } });

/** Another system (or a person with the gateway's form) setting the account's webhook. */
async function registerElsewhere(url: string): Promise<void> {
	const client = new ApiClient(
		parseCredentials({
			baseUrl: sandbox.url,
			clientId: 'demo-client',
			clientSecret: 'demo-secret',
		}),
	);
	await client.call(endpoints.updateAccount, {
		version: VERSION,
		whatsapp_number: ACCOUNT,
		whatsapp_webhook: url,
	});
}

const accountCalls = (method: 'check' | 'update'): RequestLogEntry[] =>
	sandbox
		.requests()
		.filter((entry) => entry.path === '/api/wa/2.0/post' && entry.params?.method === method);

const account = () => sandbox.accounts()[0];

describe('activation', () => {
	it('registers the workflow URL with Update Account, with exactly the spec params', async () => {
		const trigger = await harness();
		await expect(trigger.activate()).resolves.toEqual({ created: true });

		expect(account().whatsappWebhook).toBe(trigger.productionUrl);
		expect(account().whatsappNumber).toBe(ACCOUNT);
		const [update] = accountCalls('update');
		expect(update.params).toEqual({
			method: 'update',
			client_secret: 'demo-secret',
			version: VERSION,
			whatsapp_number: ACCOUNT,
			whatsapp_webhook: trigger.productionUrl,
		});
		expect(update.authorization).toBeUndefined();
		// The webhook there before was read first, with a bearer token as the spec requires.
		const checks = accountCalls('check');
		expect(checks.length).toBeGreaterThan(0);
		expect(checks[0].seq).toBeLessThan(update.seq);
		expect(checks[0].authorization).toMatch(/^Bearer /);
		expect(checks[0].params).toMatchObject({
			whatsapp_number: ACCOUNT,
			whatsapp_webhook: trigger.productionUrl,
			version: VERSION,
		});
	});

	it('is not registered twice: checkExists sees the URL at the gateway', async () => {
		const trigger = await harness();
		await trigger.activate();
		await expect(trigger.checkExists()).resolves.toBe(true);
		await expect(trigger.activate()).resolves.toEqual({ created: false });
		expect(accountCalls('update')).toHaveLength(1);
	});

	it('registers again when the gateway no longer has the URL', async () => {
		const trigger = await harness();
		await trigger.activate();
		await registerElsewhere(OTHER_SYSTEM_URL);
		await expect(trigger.checkExists()).resolves.toBe(false);
		await expect(trigger.activate()).resolves.toEqual({ created: true });
		expect(account().whatsappWebhook).toBe(trigger.productionUrl);
	});

	it('sends the API version option', async () => {
		const trigger = await harness({ options: { version: 'v16' } });
		await trigger.activate();
		expect(accountCalls('update')[0].params?.version).toBe('v16');
	});

	it('keeps a hash of the registered URL in static data, never the URL or its secret', async () => {
		const trigger = await harness({
			verification: 'querySecret',
			sharedSecret: 'query-s3cret-value',
		});
		await trigger.activate();
		const registered = `${trigger.productionUrl}?token=query-s3cret-value`;
		expect(account().whatsappWebhook).toBe(registered);
		expect(accountCalls('update')[0].params?.whatsapp_webhook).toBe(registered);

		const record = trigger.nodeStaticData().registration as Record<string, unknown>;
		expect(record).toMatchObject({ accountNumber: ACCOUNT, previousKnown: true });
		expect(record.urlSha256).toMatch(/^[0-9a-f]{64}$/);
		expect(JSON.stringify(trigger.staticData())).not.toContain('query-s3cret-value');
	});

	it('uses the configured query parameter name', async () => {
		const trigger = await harness({
			verification: 'querySecret',
			queryParameterName: 'key',
			sharedSecret: 'abc',
		});
		await trigger.activate();
		expect(account().whatsappWebhook).toBe(`${trigger.productionUrl}?key=abc`);
	});

	it('fails with the field named when the account number is not a number, and registers nothing', async () => {
		const trigger = await harness({ accountNumber: 'my phone' });
		await expect(trigger.activate()).rejects.toThrow(
			/Field "Account Number" is not a phone number/,
		);
		expect(accountCalls('update')).toHaveLength(0);
		expect(account().whatsappWebhook).toBeUndefined();
	});

	it.each([
		[{ maxBodySizeMb: 0 }, 'Field "Maximum Body Size (MB)" is 0, not a number of at least 1'],
		[
			{ repeatWindowMinutes: '={{ 20000 }}' },
			'Field "Repeat Window (Minutes)" is 20000, not a number from 1 to 10080',
		],
	])(
		'refuses the option %j out of its range, naming it, and registers nothing',
		async (options, message) => {
			const trigger = await harness({ options });
			await expect(trigger.activate()).rejects.toThrow(message);
			expect(accountCalls('update')).toHaveLength(0);
			expect(account().whatsappWebhook).toBeUndefined();
		},
	);

	it('fails clearly when Update Account fails, and leaves the webhook there before untouched', async () => {
		await registerElsewhere(OTHER_SYSTEM_URL);
		const trigger = await harness();
		sandbox.addFaults([
			{ kind: 'rpcError', match: { rpcMethod: 'update' }, times: 1, message: 'Account locked' },
		]);
		await expect(trigger.activate()).rejects.toThrow(
			/Could not register this workflow's URL with Update Account.*Account locked/,
		);
		// n8n runs `delete` after a failed activation: it must not clear the other system's URL.
		expect(account().whatsappWebhook).toBe(OTHER_SYSTEM_URL);
	});
});

describe('an empty Account Number: the number the gateway holds for the account', () => {
	it('no number held: activation fails naming the field, and registers nothing', async () => {
		const trigger = await harness({ accountNumber: '' });
		await expect(trigger.activate()).rejects.toThrow(
			'Field "Account Number" is empty and the gateway holds no number for this account (Account → Check shows none)',
		);
		// Activation's Check, and the one of n8n's `delete` after a failed activation: reads only.
		expect(accountCalls('check').map((entry) => entry.params?.whatsapp_number)).toEqual(['', '']);
		expect(accountCalls('update')).toHaveLength(0);
		expect(account().whatsappWebhook).toBeUndefined();
	});

	describe('with a number held (as the playground accounts have)', () => {
		const held = useSandbox({
			accounts: [
				{
					clientId: 'demo-client',
					clientSecret: 'demo-secret',
					status: 'authenticated',
					whatsappNumber: ACCOUNT,
				},
			],
		});
		const trigger = useTrigger(held);

		it('activation reads it with Account → Check and registers the webhook for it', async () => {
			await trigger.activate({ accountNumber: '', verification: 'none' });
			const updates = held
				.requests()
				.filter((entry) => entry.path === '/api/wa/2.0/post' && entry.params?.method === 'update');
			expect(updates.map((entry) => entry.params?.whatsapp_number)).toEqual([ACCOUNT]);
			expect(held.accounts()[0].whatsappWebhook).toBe(trigger.harness.productionUrl);
		});

		it("Ignore Own Messages knows the account's number without the field", async () => {
			await trigger.activate({ accountNumber: '', ignoreOwnMessages: true });
			const own = await trigger.deliver({ sender: ACCOUNT, message: 'echo of our own reply' });
			expect(own.json).toEqual({ received: true, ignored: "sent by the account's own number" });
			expect(own.executions).toHaveLength(0);
			const customer = await trigger.deliver({ sender: '6281300000002', message: 'hello' });
			expect(customer.executions).toHaveLength(1);
		});
	});
});

describe("reading the gateway's webhook", () => {
	it('takes its own URL in another spelling for its own (URLs are compared as URLs)', async () => {
		const trigger = await harness();
		await trigger.activate();
		await registerElsewhere(trigger.productionUrl.replace('http://', 'HTTP://'));
		await expect(trigger.checkExists()).resolves.toBe(true);
	});

	it('registers a shared secret in the query URL-encoded, and the request carrying it passes', async () => {
		const trigger = await harness({ verification: 'querySecret', sharedSecret: 'a b&c' });
		await trigger.activate();
		expect(account().whatsappWebhook).toBe(`${trigger.productionUrl}?token=a+b%26c`);
		expect((await sandbox.deliverIncoming({ message: 'x' })).status).toBe(200);
	});

	it.each([false, null, ''])(
		'reads a Check Account webhook of %j as none: deactivation clears it',
		async (none) => {
			const trigger = await harness();
			sandbox.addFaults([
				{
					kind: 'answer',
					match: { rpcMethod: 'check' },
					times: 2,
					result: { message: { whatsapp_number: ACCOUNT, whatsapp_webhook: none } },
				},
			]);
			await trigger.activate();
			expect(trigger.nodeStaticData().registration).toMatchObject({ previousKnown: true });
			await trigger.deactivate();
			expect(accountCalls('update').at(-1)?.params?.whatsapp_webhook).toBe('');
		},
	);

	it('does not take an answer without the webhook for "none"', async () => {
		const trigger = await harness();
		sandbox.addFaults([
			{
				kind: 'answer',
				match: { rpcMethod: 'check' },
				times: 2,
				result: { message: { registered: true } },
			},
		]);
		await trigger.activate();
		expect(trigger.nodeStaticData().registration).toMatchObject({ previousKnown: false });
	});
});

describe('deactivation', () => {
	it('clears the webhook with an empty string when the account had none before', async () => {
		const trigger = await harness();
		await trigger.activate();
		await expect(trigger.deactivate()).resolves.toBe(true);

		expect(account().whatsappWebhook).toBeUndefined();
		const updates = accountCalls('update');
		expect(updates).toHaveLength(2);
		expect(updates[1].params).toEqual({
			method: 'update',
			client_secret: 'demo-secret',
			version: VERSION,
			whatsapp_number: ACCOUNT,
			whatsapp_webhook: '',
		});
		expect(trigger.nodeStaticData().registration).toBeUndefined();
	});

	it('restores the webhook the account had before activation', async () => {
		await registerElsewhere(OTHER_SYSTEM_URL);
		const trigger = await harness();
		await trigger.activate();
		expect(account().whatsappWebhook).toBe(trigger.productionUrl);
		expect(trigger.nodeStaticData().registration).toMatchObject({
			previousKnown: true,
			previousWebhookBase: OTHER_SYSTEM_URL,
		});

		await trigger.deactivate();
		expect(account().whatsappWebhook).toBe(OTHER_SYSTEM_URL);
		expect(accountCalls('update').at(-1)?.params?.whatsapp_webhook).toBe(OTHER_SYSTEM_URL);
	});

	it('leaves a webhook alone that someone set after activation', async () => {
		const trigger = await harness();
		await trigger.activate();
		await registerElsewhere('https://newer.example.com/hook');
		const updatesBefore = accountCalls('update').length;

		await expect(trigger.deactivate()).resolves.toBe(true);
		expect(account().whatsappWebhook).toBe('https://newer.example.com/hook');
		expect(accountCalls('update')).toHaveLength(updatesBefore);
	});

	it('uses the number it registered even if the parameter was edited since', async () => {
		const trigger = await harness();
		await trigger.activate();
		trigger.setParameters({ accountNumber: '+62 811-1111-2222' });
		await trigger.deactivate();
		expect(accountCalls('update').at(-1)?.params).toMatchObject({
			whatsapp_number: ACCOUNT,
			whatsapp_webhook: '',
		});
	});

	it('clears (cannot restore) when Check Account did not show the webhook there before', async () => {
		await registerElsewhere(OTHER_SYSTEM_URL);
		const trigger = await harness();
		sandbox.addFaults([
			{ kind: 'rpcError', match: { rpcMethod: 'check' }, times: 100, message: 'check unavailable' },
		]);

		await expect(trigger.activate()).resolves.toEqual({ created: true });
		expect(account().whatsappWebhook).toBe(trigger.productionUrl);
		expect(trigger.nodeStaticData().registration).toMatchObject({ previousKnown: false });
		expect(trigger.nodeStaticData().registration).not.toHaveProperty('previousWebhook');
		// Without Check Account, checkExists trusts what activation stored.
		await expect(trigger.checkExists()).resolves.toBe(true);

		await trigger.deactivate();
		expect(account().whatsappWebhook).toBeUndefined();
		expect(accountCalls('update').at(-1)?.params?.whatsapp_webhook).toBe('');
	});

	it('answers false (n8n only logs it) when the gateway cannot be reached', async () => {
		const trigger = await harness();
		await trigger.activate();
		sandbox.addFaults([{ kind: 'rpcError', match: { rpcMethod: 'update' }, times: 1 }]);
		await expect(trigger.deactivate()).resolves.toBe(false);
		expect(account().whatsappWebhook).toBe(trigger.productionUrl);
	});
});

describe('listening for a test event while the workflow is active', () => {
	it('points the account at the test URL, then restores the production URL', async () => {
		const trigger = await harness();
		await trigger.activate();
		await expect(trigger.listenForTestEvent()).resolves.toEqual({ created: true });
		expect(account().whatsappWebhook).toBe(trigger.testUrl);

		const delivered = await sandbox.deliverIncoming({ message: 'test event' });
		expect(delivered.url).toBe(trigger.testUrl);
		expect(delivered.status).toBe(200);
		await trigger.settled();
		expect(trigger.executions).toHaveLength(1);
		expect(trigger.executions[0].run.mode).toBe('manual');

		await expect(trigger.stopListeningForTestEvent()).resolves.toBe(true);
		expect(account().whatsappWebhook).toBe(trigger.productionUrl);
		// The production registration is untouched: deactivating later still clears it.
		await trigger.deactivate();
		expect(account().whatsappWebhook).toBeUndefined();
	});
});
