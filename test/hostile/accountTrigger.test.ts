/**
 * The Messaging Account Trigger with a gateway that echoes the client secret and tokens in the
 * ways it can (token answers, error words in several encodings, a status hint, a webhook URL): no
 * secret in any event, error, log line or in the static data n8n saves.
 */
import { LoggerProxy } from 'n8n-workflow';

import { sharedTokenCache } from '../../nodes/shared/transport';
import { GATEWAY_DOWN, failureOf, itemsOf } from '../harness/accountTriggerNode';
import { sandboxCredential } from '../harness/engine';
import { expectNoSecret } from '../harness/hostile';
import { ACCOUNT_TRIGGER_TYPE, PollHarness } from '../harness/pollEngine';
import { useSandbox } from '../harness/useSandbox';

const SECRET = 'se"cr\\et<&>+/ \'x9';
const ACCESS = 'AT-access-token-1234';

const logged: string[] = [];
const capture = (...args: unknown[]) =>
	logged.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
beforeAll(() => {
	LoggerProxy.init({
		error: capture,
		warn: capture,
		info: capture,
		debug: capture,
		verbose: capture,
	} as never);
	for (const method of ['log', 'warn', 'error', 'info', 'debug'] as const)
		jest.spyOn(console, method).mockImplementation(capture);
});
afterAll(() => jest.restoreAllMocks());

const sandbox = useSandbox({
	accounts: [{ clientId: 'hostile-client', clientSecret: SECRET, status: 'authenticated' }],
	tokenAnswerExtra: { access_token: ACCESS, client_secret: SECRET },
});

function secretsNow(): string[] {
	const bearer = sandbox
		.requests()
		.flatMap((r) => (r.authorization ? [r.authorization.replace(/^Bearer\s+/, '')] : []));
	return [SECRET, ACCESS, ...sharedTokenCache.values(), ...bearer];
}

const trigger = () =>
	new PollHarness({
		triggerType: ACCOUNT_TRIGGER_TYPE,
		parameters: {
			events: [
				'disconnected',
				'connected',
				'qrCodeNeeded',
				'webhookChanged',
				'usageLimit',
				'gatewayUnreachable',
			],
			accountNumber: '+62 812-8877-6713',
			failedPolls: 1,
		},
		credentials: sandboxCredential(sandbox.url, {
			clientId: 'hostile-client',
			clientSecret: SECRET,
		}),
	});

describe('Messaging Account Trigger: no secret anywhere', () => {
	it("events, static data and logs, with secrets in the webhook and the gateway's words", async () => {
		const account = trigger();
		await account.activate();
		sandbox.setWebhook(
			undefined,
			`https://hooks.example.com/in?secret=${encodeURIComponent(SECRET)}`,
		);
		sandbox.logout(undefined, { showQr: true });
		sandbox.addFaults([
			{
				kind: 'answer',
				match: { rpcMethod: 'status' },
				times: 1,
				result: { accountStatus: 'init', error: `login as hostile-client / ${SECRET}` },
			},
		]);
		await account.poll();
		sandbox.addFaults(GATEWAY_DOWN);
		await account.poll();
		sandbox.clearFaults();
		await account.poll();
		const secrets = secretsNow();
		// The gateway's echo reached an event (redacted): the path a leak would take is exercised.
		const items = account.executions.flatMap((execution) =>
			execution.triggerItems.map((item) => item.json),
		);
		expect(items).toContainEqual(
			expect.objectContaining({
				event: 'disconnected',
				message: expect.stringContaining('login as hostile-client / '),
			}),
		);
		expect(items).toContainEqual(
			expect.objectContaining({
				event: 'webhookChanged',
				currentOrigin: 'https://hooks.example.com',
			}),
		);
		for (const [index, execution] of account.executions.entries())
			expectNoSecret(`execution ${index}`, execution.run, secrets);
		expectNoSecret('static data', account.staticData(), secrets);
		expectNoSecret('logs', logged, secrets);
	});

	it.each([
		['JSON-escaped', JSON.stringify({ client_secret: SECRET })],
		['URL-encoded', `https://x/?s=${encodeURIComponent(SECRET)}`],
		['base64', Buffer.from(`hostile-client:${SECRET}`).toString('base64')],
	])('a failed poll whose error echoes the secret (%s)', async (_form, words) => {
		const account = trigger();
		await account.activate();
		sandbox.addFaults([{ kind: 'rpcError', probability: 1, message: `refused: ${words}` }]);
		const error = await failureOf(account.poll());
		expect(error.message).toMatch(/refused/);
		expectNoSecret('error', error, secretsNow());
		expectNoSecret('logs', logged, secretsNow());
	});
});

describe('Messaging Account Trigger: a server word of any size', () => {
	it('keeps a 200 KB status word and hint short, in the item and in static data', async () => {
		const account = trigger();
		await account.activate();
		const huge = 'loading '.repeat(25_000);
		sandbox.addFaults([
			{
				kind: 'answer',
				probability: 1,
				match: { rpcMethod: 'status' },
				result: { accountStatus: huge, error: huge },
			},
		]);
		const [disconnected] = itemsOf(await account.poll());
		const { event, status, message } = disconnected.json as Record<string, string>;
		expect([event, status.length, message.length]).toEqual(['disconnected', 64, 300]);
		expect(status).toBe(`${huge.slice(0, 63)}…`);
		expect(message).toBe(`${huge.slice(0, 299)}…`);
		// The memory holds the cut word: static data stays under 1 KB.
		expect(JSON.stringify(account.staticData()).length).toBeLessThan(1000);
	});
});
