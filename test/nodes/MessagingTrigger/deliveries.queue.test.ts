/**
 * Skip Repeated Deliveries in queue mode: message ids in n8n's queue Redis (a redis-server of
 * this file's own), through n8n-core's webhook context. One workflow served by two receiving
 * processes (main and an `n8n webhook` process behind a load balancer), a restart, and an
 * unreachable Redis.
 */
import { BinaryDataService } from 'n8n-core';
import { request } from 'undici';

import { useTriggerHarnesses } from '../../harness/messagingTriggerNode';
import { useQueueMode } from '../../harness/redisServer';
import { useSandbox } from '../../harness/useSandbox';

const sandbox = useSandbox();
const queue = useQueueMode();
const harness = useTriggerHarnesses(sandbox);

const uuid = '9d1f7c2a-4b3e-4c5d-8e6f-0a1b2c3d4e5f';

async function post(url: string, id: string) {
	const answer = await request(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ params: { uuid: id, message: 'hello', sender: '6281300000002' } }),
	});
	return { status: answer.statusCode, json: (await answer.body.json()) as Record<string, unknown> };
}

/** One workflow as two n8n processes serve it (same workflow and node, each its own URL). */
async function twoProcesses() {
	const main = await harness({ verification: 'none' }, { workflowId: 'wf-queue' });
	const webhookProcess = await harness({ verification: 'none' }, { workflowId: 'wf-queue' });
	await main.activate();
	await webhookProcess.activate();
	return { main, webhookProcess };
}

it('one message delivered to main and to a webhook process at once starts one execution', async () => {
	const { main, webhookProcess } = await twoProcesses();
	const answers = await Promise.all([
		post(main.productionUrl, uuid),
		post(webhookProcess.productionUrl, uuid),
		post(webhookProcess.productionUrl, uuid),
	]);
	await Promise.all([main.settled(), webhookProcess.settled()]);
	expect(main.executions.length + webhookProcess.executions.length).toBe(1);
	expect(answers.filter((answer) => answer.json.ignored)).toHaveLength(2);
	const keys = (await queue.redis().cli('--scan', '--pattern', '*')).split('\n');
	expect(keys).toEqual([
		expect.stringMatching(
			/^n8n-nodes-messaging-rate:\{wf-queue:trigger-node:webhook\}:delivery:[0-9a-f]{32}$/,
		),
	]);
	// Kept for the Repeat Window (60 minutes by default).
	const ttl = Number(await queue.redis().cli('PTTL', keys[0]));
	expect(ttl).toBeGreaterThan(59 * 60_000);
	expect(ttl).toBeLessThanOrEqual(60 * 60_000);
});

it('a restart of the receiving process forgets nothing: Redis holds the ids', async () => {
	const { main } = await twoProcesses();
	await post(main.productionUrl, uuid);
	await main.settled();
	const restarted = await harness(
		{ verification: 'none' },
		{ workflowId: 'wf-queue', staticData: main.staticData() },
	);
	await restarted.activate();
	expect((await post(restarted.productionUrl, uuid)).json).toMatchObject({
		ignored: 'repeated delivery of a message already received',
	});
	await restarted.settled();
	expect(main.executions.length + restarted.executions.length).toBe(1);
});

it('with Redis unreachable a delivery is refused (503, the gateway tries again) and starts nothing', async () => {
	const { main } = await twoProcesses();
	const redis = queue.redis();
	await redis.stop();
	try {
		const refused = await post(main.productionUrl, uuid);
		expect(refused.status).toBe(503);
		expect(refused.json).toEqual({
			received: false,
			error: `n8n's queue Redis (127.0.0.1:${redis.port}, database 0) did not answer: connect ECONNREFUSED 127.0.0.1:${redis.port}; try again later`,
		});
	} finally {
		await redis.start();
	}
	expect((await post(main.productionUrl, uuid)).json).toEqual({ received: true, messageId: uuid });
	await main.settled();
	expect(main.executions).toHaveLength(1);
});

it("a message whose file n8n cannot store gives its id back in Redis: the gateway's retry starts the workflow", async () => {
	const { main } = await twoProcesses();
	const image = {
		params: {
			uuid,
			type: 'image',
			sender: '6281300000002',
			body: `data:image/png;base64,${Buffer.from('a picture').toString('base64')}`,
		},
	};
	const deliver = async () =>
		await request(main.productionUrl, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(image),
		});
	jest
		.spyOn(BinaryDataService.prototype, 'store')
		.mockRejectedValueOnce(new Error('ENOSPC: no space left on device'));
	expect((await deliver()).statusCode).toBeGreaterThanOrEqual(500);
	expect(await queue.redis().cli('--scan', '--pattern', '*')).toBe('');
	expect((await deliver()).statusCode).toBe(200);
	await main.settled();
	expect(main.executions).toHaveLength(1);
});
