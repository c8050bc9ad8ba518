/**
 * The Messaging Trigger safe by default and exactly once, through n8n-core's real hook and
 * webhook contexts against the sandbox over HTTP: the generated secret of a new
 * trigger, its defaults, putting back a previous webhook without
 * keeping its secret, and skipping repeated deliveries of one message.
 */
import { BinaryDataService } from 'n8n-core';
import { request } from 'undici';

import { expectNoSecret } from '../../harness/hostile';
import { MessagingTrigger } from '../../../nodes/MessagingTrigger/MessagingTrigger.node';
import { clock } from '../../../nodes/shared/clock';
import { sha256 } from '../../../nodes/MessagingTrigger/registration';
import { ApiClient, endpoints, parseCredentials } from '../../../nodes/shared/transport';
import { useSandbox } from '../../harness/useSandbox';
import {
	TRIGGER_ACCOUNT as ACCOUNT,
	TRIGGER_CUSTOMER as CUSTOMER,
	useTriggerHarnesses,
} from '../../harness/messagingTriggerNode';

const sandbox = useSandbox();
const harness = useTriggerHarnesses(sandbox);

afterEach(() => {
	jest.restoreAllMocks();
});

const accountWebhook = () => sandbox.accounts()[0].whatsappWebhook;
const tokenOf = (url: string | undefined) =>
	new URL(url ?? 'http://x').searchParams.get('token') ?? '';

async function post(
	url: string,
	body: unknown = { params: { message: 'forged', sender: CUSTOMER } },
) {
	const answer = await request(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
	});
	return { status: answer.statusCode, json: (await answer.body.json()) as Record<string, unknown> };
}

async function registerElsewhere(url: string): Promise<void> {
	const client = new ApiClient(
		parseCredentials({
			baseUrl: sandbox.url,
			clientId: 'demo-client',
			clientSecret: 'demo-secret',
		}),
	);
	await client.call(endpoints.updateAccount, {
		version: '16.0.1.3',
		whatsapp_number: ACCOUNT,
		whatsapp_webhook: url,
	});
}

describe('a new trigger verifies with a generated secret, with no setup', () => {
	it('registers its URL with a secret of its own, keeps only the hash, and refuses requests without it', async () => {
		const trigger = await harness();
		await trigger.activate();
		const registered = accountWebhook()!;
		const secret = tokenOf(registered);
		expect(registered).toBe(`${trigger.productionUrl}?token=${secret}`);
		expect(secret).toMatch(/^[\w-]{43}$/);

		const delivered = await sandbox.deliverIncoming({
			sender: CUSTOMER,
			message: 'through the registered URL',
		});
		await trigger.settled();
		expect(delivered.status).toBe(200);
		expect(trigger.executions).toHaveLength(1);

		// A stranger who knows (or guesses) n8n's URL starts nothing.
		expect(await post(trigger.productionUrl)).toEqual({
			status: 401,
			json: { received: false, error: 'The request has no query parameter "token"' },
		});
		const wrong = await post(`${trigger.productionUrl}?token=${secret.slice(0, -1)}x`);
		expect(wrong.status).toBe(401);
		expect(wrong.json.error).toMatch(
			/^The query parameter "token" does not hold the generated secret/,
		);
		const twice = await post(`${trigger.productionUrl}?token=${secret}&token=${secret}`);
		expect(twice.json.error).toBe('The query parameter "token" must appear once');
		await trigger.settled();
		expect(trigger.executions).toHaveLength(1);

		expect(trigger.nodeStaticData().registration).toMatchObject({ secretSha256: sha256(secret) });
		expectNoSecret('static data', trigger.staticData(), [secret]);
	});

	it('with its kept hash lost, the secret is derived again: the gateway still gets in, a stranger does not', async () => {
		const trigger = await harness();
		await trigger.activate();
		const secret = tokenOf(accountWebhook());
		const registration = trigger.nodeStaticData().registration as Record<string, unknown>;
		delete registration.secretSha256;
		const deliver = async (message: string) =>
			(await sandbox.deliverIncoming({ sender: CUSTOMER, message })).status;
		expect(await deliver('hash lost')).toBe(200);
		// The whole record lost: the number comes from the node's Account Number.
		delete trigger.nodeStaticData().registration;
		expect(await deliver('record lost')).toBe(200);
		const wrong = await post(`${trigger.productionUrl}?token=${secret.slice(0, -1)}x`);
		expect(wrong).toMatchObject({ status: 401 });
		await trigger.settled();
		expect(trigger.executions.map((run) => run.receivedItems[0].json.text)).toEqual([
			'hash lost',
			'record lost',
		]);
		// No number to derive it from either: refused, saying what to do (not a crash).
		trigger.setParameters({ accountNumber: '' });
		expect(await post(`${trigger.productionUrl}?token=${secret}`)).toEqual({
			status: 401,
			json: {
				received: false,
				error: expect.stringMatching(/does not hold the generated secret; publish/),
			},
		});
	});

	it('gives each trigger its own secret, and n8n restarting re-registers nothing', async () => {
		const first = await harness();
		await first.activate();
		const firstSecret = tokenOf(accountWebhook());
		await expect(first.checkExists()).resolves.toBe(true);
		expect(sandbox.requests().filter((entry) => entry.params?.method === 'update')).toHaveLength(1);
		await first.deactivate();

		const second = await harness();
		await second.activate();
		expect(tokenOf(accountWebhook())).not.toBe(firstSecret);
	});

	it('uses the Query Parameter Name option', async () => {
		const trigger = await harness({ queryParameterName: 'k' });
		await trigger.activate();
		expect(accountWebhook()).toMatch(
			new RegExp(`^${trigger.productionUrl.replace(/[.?]/g, '\\$&')}\\?k=[\\w-]{43}$`),
		);
		expect((await sandbox.deliverIncoming({ message: 'x' })).status).toBe(200);
	});
});

describe('defaults', () => {
	it('a new trigger ignores its own messages unless told otherwise', async () => {
		const trigger = await harness();
		await trigger.activate();
		const own = await sandbox.deliverIncoming({ sender: ACCOUNT, message: 'our own auto-reply' });
		expect(JSON.parse(own.body)).toEqual({
			received: true,
			ignored: "sent by the account's own number",
		});
		await trigger.settled();
		expect(trigger.executions).toHaveLength(0);
	});
});

describe('putting a previous webhook back without keeping its secret', () => {
	it('after "Listen for test event", the active workflow gets its URL back, secret included', async () => {
		const trigger = await harness();
		await trigger.activate();
		const production = accountWebhook()!;
		await trigger.listenForTestEvent();
		const test = accountWebhook()!;
		expect(test.startsWith(`${trigger.testUrl}?token=`)).toBe(true);
		expect(tokenOf(test)).not.toBe(tokenOf(production));

		const delivered = await sandbox.deliverIncoming({ message: 'test event' });
		await trigger.settled();
		expect(delivered.status).toBe(200);
		expect(trigger.executions.at(-1)?.run.mode).toBe('manual');

		await expect(trigger.stopListeningForTestEvent()).resolves.toBe(true);
		expect(accountWebhook()).toBe(production);
		expect((await sandbox.deliverIncoming({ message: 'production again' })).status).toBe(200);
		expectNoSecret('static data', trigger.staticData(), [tokenOf(production), tokenOf(test)]);
	});

	it("a second workflow taking the account over keeps none of the first one's secret, and gives the URL back", async () => {
		const first = await harness();
		await first.activate();
		const firstUrl = accountWebhook()!;
		const second = await harness();
		await second.activate();
		expect(accountWebhook()).not.toBe(firstUrl);

		expectNoSecret("second workflow's static data", second.staticData(), [tokenOf(firstUrl)]);
		expect(JSON.stringify(second.staticData())).not.toContain(firstUrl);

		await second.deactivate();
		expect(accountWebhook()).toBe(firstUrl);
		const delivered = await sandbox.deliverIncoming({ message: 'back to the first' });
		await first.settled();
		expect(delivered.url).toBe(firstUrl);
		expect(first.executions).toHaveLength(1);
	});

	it("another system's URL with a query is not kept: deactivation clears the webhook and says why", async () => {
		const foreign = 'https://crm.example.com/whatsapp/incoming?key=crm-s3cret-value';
		await registerElsewhere(foreign);
		const trigger = await harness();
		await trigger.activate();
		expectNoSecret('static data', trigger.staticData(), ['crm-s3cret-value']);
		expect(trigger.nodeStaticData().registration).toMatchObject({
			previousWebhookBase: 'https://crm.example.com/whatsapp/incoming',
		});

		await expect(trigger.deactivate()).resolves.toBe(true);
		expect(accountWebhook()).toBeUndefined();
		expect(trigger.logs).toContainEqual(
			expect.objectContaining({
				level: 'warn',
				message: expect.stringMatching(
					/previous webhook \(at https:\/\/crm\.example\.com\) carried a query that was not kept/,
				),
			}),
		);
		// Another system's path may hold its token too: only the origin is logged.
		expect(trigger.logs.some((line) => line.message.includes('/whatsapp/incoming'))).toBe(false);
	});
});

describe('Skip Repeated Deliveries', () => {
	const uuid = '3f2c6b1e-8a4d-4f0e-9b7a-1c2d3e4f5a6b';

	it('starts one execution for one message id delivered twice, and answers the repeat as such', async () => {
		const trigger = await harness();
		await trigger.activate();
		const first = await sandbox.deliverIncoming({ uuid, message: 'hello' });
		const again = await sandbox.deliverIncoming({ uuid, message: 'hello' });
		await trigger.settled();
		expect(JSON.parse(first.body)).toEqual({ received: true, messageId: uuid });
		expect(again.status).toBe(200);
		expect(JSON.parse(again.body)).toEqual({
			received: true,
			ignored: 'repeated delivery of a message already received',
			messageId: uuid,
		});
		expect(trigger.executions).toHaveLength(1);
	});

	it("a message whose file n8n cannot store is not taken: the gateway's retry starts the workflow", async () => {
		const trigger = await harness();
		await trigger.activate();
		const image = {
			uuid,
			type: 'image',
			fileBase64: Buffer.from('a picture').toString('base64'),
			mimeType: 'image/png',
		};
		jest
			.spyOn(BinaryDataService.prototype, 'store')
			.mockRejectedValueOnce(new Error('ENOSPC: no space left on device'));
		const first = await sandbox.deliverIncoming(image);
		expect(first.status).toBeGreaterThanOrEqual(500);
		const retry = await sandbox.deliverIncoming(image);
		await trigger.settled();
		expect(JSON.parse(retry.body)).toEqual({ received: true, messageId: uuid });
		expect(trigger.executions).toHaveLength(1);
	});

	it('catches deliveries racing into one process', async () => {
		const trigger = await harness();
		await trigger.activate();
		const answers = await Promise.all(
			Array.from(
				{ length: 8 },
				async () => await sandbox.deliverIncoming({ uuid, message: 'race' }),
			),
		);
		await trigger.settled();
		expect(answers.every((answer) => answer.status === 200)).toBe(true);
		expect(trigger.executions).toHaveLength(1);
	});

	it('remembers in the receiving process only: nothing in static data, and a restarted process forgets', async () => {
		const trigger = await harness();
		await trigger.activate();
		await sandbox.deliverIncoming({ uuid, message: 'first' });
		await sandbox.deliverIncoming({ uuid, message: 'retry' });
		await trigger.settled();
		expect(trigger.executions).toHaveLength(1);
		expect(JSON.stringify(trigger.staticData())).not.toContain('deliveries');

		// The documented limit (docs/messaging-trigger.md, "Repeated deliveries"): after a restart the
		// same id starts again. The restarted process serves the same workflow (id, static data).
		const restarted = await harness(
			{},
			{ workflowId: trigger.workflowId, staticData: trigger.staticData() },
		);
		await restarted.activate();
		await sandbox.deliverIncoming({ uuid, message: 'redelivered after a restart' });
		await restarted.settled();
		expect(restarted.executions).toHaveLength(1);
	});

	it('forgets an id after the window, so a much later message with a reused id starts again', async () => {
		const trigger = await harness({ options: { repeatWindowMinutes: 5 } });
		await trigger.activate();
		await sandbox.deliverIncoming({ uuid, message: 'now' });
		const now = Date.now();
		jest.spyOn(clock, 'now').mockReturnValue(now + 6 * 60_000);
		await sandbox.deliverIncoming({ uuid, message: 'six minutes later' });
		await trigger.settled();
		expect(trigger.executions).toHaveLength(2);
	});

	/** Posts a message straight to a URL of a trigger with verification "none"; its answer. */
	const postId = async (url: string, id: string) => {
		const answer = await request(url, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ params: { uuid: id, message: 'x' } }),
		});
		return (await answer.body.json()) as Record<string, unknown>;
	};
	const repeat = { ignored: 'repeated delivery of a message already received' };

	it('protects every active trigger of a process, however many (201 here: no table of 200 triggers)', async () => {
		const triggers = [];
		const process = new MessagingTrigger();
		for (let i = 0; i < 201; i++) {
			const trigger = await harness({ verification: 'none' }, { process });
			await trigger.activate();
			triggers.push(trigger);
		}
		for (const trigger of triggers) await postId(trigger.productionUrl, uuid);
		const repeats = await Promise.all(
			triggers.map(async (trigger) => await postId(trigger.productionUrl, uuid)),
		);
		expect(repeats.filter((answer) => answer.ignored === repeat.ignored)).toHaveLength(201);
	});

	it('keeps "Listen for test event" apart: 2,000 test deliveries never push out what an active trigger remembers', async () => {
		const trigger = await harness({ verification: 'none' });
		await trigger.activate();
		await postId(trigger.productionUrl, uuid);
		await trigger.listenForTestEvent();
		for (let start = 0; start < 2000; start += 50) {
			await Promise.all(
				Array.from(
					{ length: 50 },
					async (_, i) => await postId(trigger.testUrl, `test-${start + i}`),
				),
			);
		}
		await trigger.stopListeningForTestEvent();
		await trigger.settled();
		expect(await postId(trigger.productionUrl, uuid)).toMatchObject(repeat);
		// The test sessions' own table is bounded: it dropped its least recently used ids, not the last.
		await trigger.listenForTestEvent();
		expect(await postId(trigger.testUrl, 'test-1999')).toMatchObject(repeat);
		expect(await postId(trigger.testUrl, 'test-0')).toEqual({
			received: true,
			messageId: 'test-0',
		});
		await trigger.stopListeningForTestEvent();
	});

	it('can be turned off; a message without an id is never taken for a repeat', async () => {
		const off = await harness({ options: { skipRepeatedDeliveries: false } });
		await off.activate();
		await sandbox.deliverIncoming({ uuid, message: 'a' });
		await sandbox.deliverIncoming({ uuid, message: 'a' });
		await off.settled();
		expect(off.executions).toHaveLength(2);
		await off.deactivate();

		const on = await harness();
		await on.activate();
		const noId = JSON.stringify({ params: { sender: CUSTOMER, message: 'no uuid' } });
		await sandbox.deliverIncoming({ rawBody: noId });
		await sandbox.deliverIncoming({ rawBody: noId });
		await on.settled();
		expect(on.executions).toHaveLength(2);
	});
});
