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

	// Other gateways' words for the same counts: nested under `message`, numbers as text, flags as
	// words or 0/1. What is not given is null; with no flag, blocked once the count reaches the limit.
	it.each([
		[
			'nested, numbers as text',
			{ message: { block_limit: '100', limit_qty: ' 40 ' } },
			{ blocked: false, limit: 100, used: 40, remaining: 60 },
		],
		[
			'no flag, over the limit',
			{ limit: 5, used: 7 },
			{ blocked: true, limit: 5, used: 7, remaining: 0 },
		],
		[
			'no flag, at the limit',
			{ max: 10, usage: 10 },
			{ blocked: true, limit: 10, used: 10, remaining: 0 },
		],
		[
			'a flag as a word, a blank limit',
			{ blocked: ' Yes ', quota: ' ', count: 3 },
			{ blocked: true, limit: null, used: 3, remaining: null },
		],
		[
			'a flag as 0 says not blocked, whatever the counts',
			{ is_blocked: 0, blockLimit: 10, sent: 12 },
			{ blocked: false, limit: 10, used: 12, remaining: 0 },
		],
		[
			'a flag as 1, a count that is no number',
			{ isBlocked: 1, block_limit: 'many', limit: 9, limit_qty: 'x' },
			{ blocked: true, limit: 9, used: null, remaining: null },
		],
		[
			'a flag as text "false", the first key given wins',
			{ block: 'false', block_limit: 3, limit: 99, limit_qty: 1, used: 50 },
			{ blocked: false, limit: 3, used: 1, remaining: 2 },
		],
		[
			'a flag that says blocked, though the counts do not',
			{ block: true, block_limit: 10, limit_qty: 2 },
			{ blocked: true, limit: 10, used: 2, remaining: 8 },
		],
		[
			'a count without a limit, a limit without a count: not blocked',
			{ quota: 50 },
			{ blocked: false, limit: 50, used: null, remaining: null },
		],
		['a count alone', { usage: 3 }, { blocked: false, limit: null, used: 3, remaining: null }],
		['a limit of 0 alone', { block_limit: 0 }, { ...noCounts(false), limit: 0 }],
		[
			'a null limit is none: the next key is read',
			{ block_limit: null, limit: 9, used: 1 },
			{ blocked: false, limit: 9, used: 1, remaining: 8 },
		],
		[
			'flags in words that only contain one are not read',
			{ block: 'maybe-no', blocked: 'yesterday', is_blocked: true },
			noCounts(true),
		],
		['a flag in an unknown word, no counts', { block: 'maybe' }, noCounts(false)],
		['nothing it knows', { status: 'ok' }, noCounts(false)],
		['no object', 'unlimited', noCounts(false)],
	])('getLimit: %s', async (_case, result, expected) => {
		sandbox.addFaults([{ kind: 'answer', match: { path: '/api/wa/2.0/limit' }, result }]);
		const run = await runMessaging(sandbox, { resource: 'account', operation: 'getLimit' });
		expect(run.error).toBeUndefined();
		expect(run.output('Node')[0].json).toEqual({ ...expected, response: result });
	});
});

function noCounts(blocked: boolean) {
	return { blocked, limit: null, used: null, remaining: null };
}
