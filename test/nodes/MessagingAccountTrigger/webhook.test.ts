/**
 * Messaging Account Trigger, Webhook Changed, against the sandbox whose account's webhook the
 * tests change through its control API: one event per change, naming the old and new origin and
 * which part changed, never a path, a query or a password, in the item or in static data.
 */
import { apiRequests, wire } from '../../harness/messagingNode';
import { accountTrigger, itemsOf, verdictOf } from '../../harness/accountTriggerNode';
import { useSandbox } from '../../harness/useSandbox';

const sandbox = useSandbox();

const parameters = { events: ['webhookChanged'], accountNumber: '+62 812-8877-6713' };
const OURS = 'https://n8n.example.com/webhook/7f1c9e2a-workflow-a/messaging?token=s3cr3t-a';

describe('Messaging Account Trigger: Webhook Changed', () => {
	it('asks Account → Check with the account number and an empty webhook, nothing else', async () => {
		const trigger = accountTrigger(sandbox, parameters);
		await trigger.activate();
		expect(apiRequests(sandbox).map(wire)).toEqual([
			{
				method: 'POST',
				path: '/api/wa/2.0/post',
				bearer: true,
				params: {
					method: 'check',
					client_secret: 'demo-secret',
					version: '16.0.1.3',
					whatsapp_number: '6281288776713',
					whatsapp_webhook: '',
				},
			},
		]);
	});

	it('fires once per change and names only origins and the part that changed', async () => {
		sandbox.setWebhook(undefined, OURS);
		const trigger = accountTrigger(sandbox, parameters);
		expect(verdictOf(await trigger.activate())).toBe('nothing');
		expect((await trigger.poll()).returned).toBeNull();

		const changes: Array<[string | undefined, Record<string, unknown>]> = [
			// Another workflow on the same n8n: same origin, another path.
			[
				'https://n8n.example.com/webhook/0b7d-workflow-b/messaging?token=s3cr3t-b',
				{
					previousOrigin: 'https://n8n.example.com',
					currentOrigin: 'https://n8n.example.com',
					changed: 'path',
				},
			],
			// The same path with another secret.
			[
				'https://n8n.example.com/webhook/0b7d-workflow-b/messaging?token=s3cr3t-c',
				{
					previousOrigin: 'https://n8n.example.com',
					currentOrigin: 'https://n8n.example.com',
					changed: 'query',
				},
			],
			// Another system.
			[
				'https://crm.example.org:8443/hooks/wa?key=s3cr3t-d',
				{
					previousOrigin: 'https://n8n.example.com',
					currentOrigin: 'https://crm.example.org:8443',
					changed: 'origin',
				},
			],
			[
				undefined,
				{ previousOrigin: 'https://crm.example.org:8443', currentOrigin: null, changed: 'cleared' },
			],
			[
				'https://user:p4ssw0rd@n8n.example.com/webhook/again',
				{ previousOrigin: null, currentOrigin: 'https://n8n.example.com', changed: 'set' },
			],
		];
		let previousSince: unknown;
		for (const [url, expected] of changes) {
			sandbox.setWebhook(undefined, url);
			const changed = await trigger.poll();
			const [item] = itemsOf(changed);
			expect(itemsOf(changed)).toHaveLength(1);
			expect(item.json).toEqual({
				event: 'webhookChanged',
				...expected,
				since: item.json.checkedAt,
				previousSince: expect.any(String),
				checkedAt: expect.any(String),
			});
			if (previousSince !== undefined) expect(item.json.previousSince).toBe(previousSince);
			previousSince = item.json.since;
			expect((await trigger.poll()).returned).toBeNull();
		}

		const everything = JSON.stringify([
			trigger.executions.map((e) => e.triggerItems),
			trigger.staticData(),
		]);
		for (const secretOrPath of [
			's3cr3t',
			'p4ssw0rd',
			'workflow-a',
			'workflow-b',
			'/hooks/wa',
			'/webhook/again',
		])
			expect(everything).not.toContain(secretOrPath);
	});

	it('refuses to guess when Check Account does not show the webhook: the poll fails and says why', async () => {
		const trigger = accountTrigger(sandbox, parameters);
		sandbox.addFaults([
			{
				kind: 'answer',
				result: { message: { registered: true } },
				match: { rpcMethod: 'check' },
				times: 1,
			},
		]);
		await expect(trigger.activate()).rejects.toThrow(
			/Could not read the account's health: Check Account answered without the webhook/,
		);
	});

	it('refuses an account number without its country code', async () => {
		const trigger = accountTrigger(sandbox, { ...parameters, accountNumber: '0812 8877 6713' });
		await expect(trigger.activate()).rejects.toThrow(/^Field "Account Number" has no country code/);
		expect(apiRequests(sandbox)).toEqual([]);
	});
});
