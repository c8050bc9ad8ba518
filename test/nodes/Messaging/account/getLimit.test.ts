/** Account → Get Usage Limit through n8n's real engine against the sandbox: the request (no bearer token) and the counts. */
import { startSandbox } from '../../../../sandbox/server';
import { PHONE, SECRET, apiRequests, runMessaging, wire } from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';

const sandbox = useSandbox();

describe('account', () => {
	it('getLimit: reads blocked / limit / used without a bearer token', async () => {
		await runMessaging(
			sandbox,
			{ resource: 'message', operation: 'sendText', phone: PHONE, text: '={{ $json.text }}' },
			[{ text: 'one' }, { text: 'two' }],
		);
		const run = await runMessaging(sandbox, { resource: 'account', operation: 'getLimit' });
		expect(run.error).toBeUndefined();
		expect(wire(apiRequests(sandbox)[2])).toEqual({
			method: 'GET',
			path: '/api/wa/2.0/limit',
			bearer: false,
			params: { client_secret: SECRET },
		});
		expect(run.output('Node')[0].json).toEqual({
			blocked: false,
			limit: 10_000,
			used: 2,
			remaining: 9_998,
			response: { block: false, block_limit: 10_000, limit_qty: 2 },
		});
	});

	it('getLimit: blocked once the limit is reached', async () => {
		const small = await startSandbox({ blockLimit: 1 });
		try {
			await runMessaging(small, {
				resource: 'message',
				operation: 'sendText',
				phone: PHONE,
				text: 'one',
			});
			const run = await runMessaging(small, { resource: 'account', operation: 'getLimit' });
			expect(run.output('Node')[0].json).toMatchObject({
				blocked: true,
				limit: 1,
				used: 1,
				remaining: 0,
			});
		} finally {
			await small.close();
		}
	});
});
