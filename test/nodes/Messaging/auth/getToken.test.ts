/** Auth → Get Token and Verify Token through n8n's real engine against the sandbox: the token requests, the expiry, never the token. */
import {
	CLIENT_ID,
	SECRET,
	apiRequests,
	runMessaging,
	tokenRequests,
	wire,
} from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';

const sandbox = useSandbox();

describe('auth', () => {
	it('getToken: asks for a new token and outputs its expiry, never the token', async () => {
		const before = Date.now();
		const run = await runMessaging(sandbox, { resource: 'auth', operation: 'getToken' });
		expect(run.error).toBeUndefined();
		expect(tokenRequests(sandbox).map(wire)).toEqual([
			{
				method: 'GET',
				path: '/api/wa/authentication',
				bearer: false,
				params: { client_id: CLIENT_ID, client_secret: SECRET },
			},
		]);
		const [item] = run.output('Node');
		// The same output shape as the Currency Rate node's Get Token (docs/messaging.md, "Auth → Get Token").
		expect(item.json).toEqual({
			tokenRenewed: true,
			api: 'messaging',
			expiresAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
			response: { connection: 'ok' },
		});
		// The credential's lifetime (60 min) less the safety margin.
		const expiresAt = Date.parse(item.json.expiresAt as string);
		expect(expiresAt).toBeGreaterThan(before + 55 * 60_000);
		expect(expiresAt).toBeLessThanOrEqual(Date.now() + 60 * 60_000);

		// verifyToken uses the token getToken fetched (no second token request); it is nowhere in the output.
		const verify = await runMessaging(sandbox, { resource: 'auth', operation: 'verifyToken' });
		expect(verify.error).toBeUndefined();
		expect(tokenRequests(sandbox)).toHaveLength(1);
		const [protectedRequest] = apiRequests(sandbox);
		expect(wire(protectedRequest)).toEqual({
			method: 'GET',
			path: '/api/wa/protected',
			bearer: true,
			params: { client_secret: SECRET },
		});
		const token = protectedRequest.authorization!.replace(/^Bearer /, '');
		expect(token.length).toBeGreaterThan(10);
		expect(JSON.stringify(run.run.data.resultData.runData)).not.toContain(token);
		expect(verify.output('Node')).toEqual([
			{
				json: {
					valid: true,
					message: 'Token is valid',
					response: { valid: true, message: 'Token is valid' },
				},
				pairedItem: { item: 0 },
			},
		]);
	});

	it('getToken replaces a cached token: the next call uses the new one', async () => {
		await runMessaging(sandbox, { resource: 'auth', operation: 'verifyToken' });
		await runMessaging(sandbox, { resource: 'auth', operation: 'getToken' });
		await runMessaging(sandbox, { resource: 'auth', operation: 'verifyToken' });
		expect(tokenRequests(sandbox)).toHaveLength(2);
		const [first, second] = apiRequests(sandbox).map((entry) => entry.authorization);
		expect(first).not.toEqual(second);
	});
});
