/** Number → Check through n8n's real engine against the sandbox: the request without a bearer token, the answer, a refusal. */
import {
	PHONE,
	PHONE_PASTED,
	apiRequests,
	runMessaging,
	tokenRequests,
	wire,
} from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';

const sandbox = useSandbox();

describe('number: check', () => {
	it('asks without a bearer token and answers exists: true or false', async () => {
		const run = await runMessaging(
			sandbox,
			{ resource: 'number', operation: 'check', phone: '={{ $json.phone }}' },
			[{ phone: PHONE_PASTED }, { phone: '+62 812-8877-0000' }],
		);
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox).map(wire)).toEqual([
			{ method: 'GET', path: '/api/wa/2.0/check', bearer: false, params: { phone: PHONE } },
			{
				method: 'GET',
				path: '/api/wa/2.0/check',
				bearer: false,
				params: { phone: '6281288770000' },
			},
		]);
		expect(run.output('Node')).toEqual([
			{
				json: { phone: PHONE, exists: true, response: { result: 'exists' } },
				pairedItem: { item: 0 },
			},
			{
				json: { phone: '6281288770000', exists: false, response: { result: 'not exists' } },
				pairedItem: { item: 1 },
			},
		]);
		expect(tokenRequests(sandbox)).toHaveLength(0);
	});
});

describe('server refusals', () => {
	it('a JSON-RPC error on a read fails the item with the server text', async () => {
		sandbox.addFaults([
			{
				kind: 'rpcError',
				match: { path: '/api/wa/2.0/check' },
				message: 'Service temporarily disabled',
			},
		]);
		const run = await runMessaging(sandbox, {
			resource: 'number',
			operation: 'check',
			phone: PHONE,
		});
		expect(run.error?.message).toContain('Check Number (GET /api/wa/2.0/check) failed');
		expect(run.error?.message).toContain('Service temporarily disabled');
	});
});
