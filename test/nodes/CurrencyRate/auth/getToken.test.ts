/**
 * Currency Rate → Auth → Get Token through n8n's engine against the sandbox: one
 * token request without a bearer, the new token used by later rate requests, and never shown.
 */
import { useSandbox } from '../../../harness/useSandbox';
import {
	RATES_PATH,
	RATE_TOKEN_PATH,
	requestsTo,
	runCurrencyRate,
} from '../../../harness/currencyRateNode';
import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../../../harness/engine';

const sandbox = useSandbox();

describe('auth → getToken', () => {
	it('requests a new rates token, which later rate requests use, and never puts it in the output', async () => {
		// A token already cached by an earlier run: Get Token must replace it, not reuse it.
		await runCurrencyRate(sandbox, {
			resource: 'rate',
			operation: 'get',
			provider: 'bca',
			currencies: 'USD',
		});
		const oldBearer = requestsTo(sandbox, RATES_PATH)[0].authorization;

		const { output, error } = await runCurrencyRate(sandbox, {
			resource: 'auth',
			operation: 'getToken',
		});
		expect(error).toBeUndefined();
		const tokenRequests = requestsTo(sandbox, RATE_TOKEN_PATH);
		expect(tokenRequests).toHaveLength(2);
		const renewal = tokenRequests[1];
		expect(renewal.method).toBe('GET');
		expect(renewal.contentType).toBe('application/json');
		expect(renewal.authorization).toBeUndefined();
		expect(renewal.params).toEqual({ client_id: 'demo-client', client_secret: 'demo-secret' });
		expect(sandbox.stats().tokensIssued).toEqual({ wa: 0, rate: 2 });

		const items = output('Node');
		expect(items).toHaveLength(1);
		expect(items[0].pairedItem).toEqual({ item: 0 });
		// The same output shape as the Messaging node's Get Token (docs/currency-rate.md, "Auth → Get Token").
		expect(items[0].json).toEqual({
			tokenRenewed: true,
			api: 'rates',
			expiresAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
			response: { status: 'success' },
		});
		// The credential's Token Lifetime (60 minutes) minus the transport's safety margin.
		const validFor = Date.parse(items[0].json.expiresAt as string) - Date.now();
		expect(validFor).toBeGreaterThan(55 * 60_000);
		expect(validFor).toBeLessThanOrEqual(60 * 60_000);

		// The next rate request carries the renewed token; neither token appears in the output.
		await runCurrencyRate(sandbox, {
			resource: 'rate',
			operation: 'get',
			provider: 'bca',
			currencies: 'USD',
		});
		const newBearer = requestsTo(sandbox, RATES_PATH)[1].authorization;
		expect(newBearer).toMatch(/^Bearer \S{8,}$/);
		expect(newBearer).not.toBe(oldBearer);
		expect(requestsTo(sandbox, RATE_TOKEN_PATH)).toHaveLength(2);
		const shown = JSON.stringify(items);
		for (const bearer of [oldBearer, newBearer])
			expect(shown).not.toContain((bearer as string).slice('Bearer '.length));
		expect(shown).not.toContain('demo-secret');
	});

	it("reports a refused token request with the server's words and without the secret", async () => {
		const { error } = await runWorkflow(
			singleNodeWorkflow('currencyRate', { resource: 'auth', operation: 'getToken' }),
			sandboxCredential(sandbox.url, { clientSecret: 'wrong-secret' }),
		);
		expect(error?.message).toBe(
			'Authenticate (rates) (GET /api/rate/1.0/authentication) failed: the server answered an error: "Odoo Server Error: Access Denied" [item 0]',
		);
		expect(`${error?.message} ${error?.description}`).not.toContain('wrong-secret');
		expect(requestsTo(sandbox, RATE_TOKEN_PATH)).toHaveLength(1);
	});
});
