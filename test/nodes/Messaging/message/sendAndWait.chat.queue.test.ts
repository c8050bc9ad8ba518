/**
 * Send and Wait → Reply in the Chat in queue mode: the open question lives in n8n's queue Redis (a
 * redis-server of this file's own), written by the Messaging node and taken by the Messaging
 * Trigger through n8n's real engines, as a worker and a webhook process would.
 */
import type { INodeParameters } from 'n8n-workflow';

import { RECEIVED_NAME, sandboxCredential } from '../../../harness/engine';
import { WaitingHarness, askWorkflow } from '../../../harness/waitingEngine';
import { PHONE } from '../../../harness/messagingNode';
import { TRIGGER_CUSTOMER, useTrigger } from '../../../harness/messagingTriggerNode';
import { useQueueMode } from '../../../harness/redisServer';
import { useSandbox } from '../../../harness/useSandbox';
import { MemoryTable } from '../../../../nodes/shared/store';

const sandbox = useSandbox();
const queue = useQueueMode();
const trigger = useTrigger(sandbox);
let waiting: WaitingHarness;
beforeAll(async () => {
	waiting = await WaitingHarness.start(sandboxCredential(sandbox.url));
});
afterAll(async () => await waiting.close());
beforeEach(async () => await trigger.activate());

const chatWorkflow = (parameters: INodeParameters = {}) =>
	askWorkflow({
		phone: `+${TRIGGER_CUSTOMER}`,
		message: 'Send the March price list?',
		responseBy: 'chatReply',
		...parameters,
	});

const reply = async (message: string) =>
	await trigger.deliver({ sender: TRIGGER_CUSTOMER, message });

async function chatWaitKeys(): Promise<string[]> {
	const keys = await queue.redis().cli('--scan', '--pattern', '*:chatWait:*');
	return keys.split('\n').filter(Boolean);
}

const HOUR = 3_600_000;

it('the question is kept in Redis until its limit, without the secret; the reply takes it', async () => {
	const execution = await waiting.run(
		chatWorkflow({ limitWaitTime: true, resumeAmount: 1, resumeUnit: 'hours' }),
	);
	expect(execution.status).toBe('waiting');
	const keys = await chatWaitKeys();
	expect(keys).toEqual([
		expect.stringMatching(
			new RegExp(`^n8n-nodes-messaging-rate:\\{[0-9a-f]{64}\\}:chatWait:${TRIGGER_CUSTOMER}$`),
		),
	]);
	const ttl = Number(await queue.redis().cli('PTTL', keys[0]));
	expect(ttl).toBeGreaterThan(HOUR - 60_000);
	expect(ttl).toBeLessThanOrEqual(HOUR);
	const value = await queue.redis().cli('GET', keys[0]);
	expect(value).toContain('via=chat');
	expect(value).not.toContain('demo-secret');

	expect((await reply('1')).json.resumed).toBe(execution.id);
	expect((await waiting.settled(execution.id)).output(RECEIVED_NAME)[0].json).toMatchObject({
		approved: true,
		answeredBy: 'chat',
	});
	expect(await chatWaitKeys()).toEqual([]);
});

it('an invalid reply is re-asked once; the record keeps its expiry; waiting indefinitely keeps it 30 days', async () => {
	const execution = await waiting.run(chatWorkflow());
	const [key] = await chatWaitKeys();
	const ttl = Number(await queue.redis().cli('PTTL', key));
	expect(ttl).toBeGreaterThan(30 * 24 * HOUR - 60_000);
	expect(ttl).toBeLessThanOrEqual(30 * 24 * HOUR);

	const reasks = () => sandbox.ledger().filter((entry) => entry.text === 'Please reply 1 or 2');
	// The first invalid reply is asked again, the second is not.
	expect((await reply('maybe')).executions).toHaveLength(1);
	expect(reasks()).toHaveLength(1);
	expect((await reply('perhaps')).executions).toHaveLength(1);
	expect(reasks()).toHaveLength(1);
	expect(JSON.parse(await queue.redis().cli('GET', key))).toMatchObject({ reasked: true });
	const kept = Number(await queue.redis().cli('PTTL', key));
	expect(kept).toBeGreaterThan(ttl - 60_000);
	expect(kept).toBeLessThanOrEqual(ttl);

	expect((await reply('no')).json.resumed).toBe(execution.id);
	expect((await waiting.settled(execution.id)).output(RECEIVED_NAME)[0].json).toMatchObject({
		approved: false,
	});
});

it('Redis down when the question is recorded: the question waits, and a warning says a reply cannot resume it', async () => {
	const redis = queue.redis();
	await redis.stop();
	const execution = await (async () => {
		try {
			// Skip Repeats off: the send itself needs no Redis.
			return await waiting.run(
				chatWorkflow({ alsoSendLinks: true, options: { skipRepeatsHours: 0 } }),
			);
		} finally {
			await redis.start();
		}
	})();
	expect(execution.status).toBe('waiting');
	expect(sandbox.ledger()).toHaveLength(1);
	expect(execution.run.data.resultData.runData.Node[0].hints).toEqual([
		expect.objectContaining({
			type: 'warning',
			message: expect.stringMatching(/reply in the chat cannot resume the question of item 0/),
		}),
	]);
	// The reply finds no question (it starts the trigger's workflow); the link still answers.
	const late = await reply('1');
	expect(late.json.resumed).toBeUndefined();
	expect(late.executions).toHaveLength(1);
	const approve = /^Approve: (\S+)$/m.exec(sandbox.ledger()[0].text ?? '')?.[1] ?? '';
	expect((await waiting.press(approve)).resumed).toBe(true);
	expect((await waiting.settled(execution.id)).status).toBe('success');
});

it('a question another process takes the claim of while this one waits its turn is not asked, and fails', async () => {
	const rows = [21, 22, 23].map((invoice) => ({ question: `Approve invoice ${invoice}?` }));
	const ask = (options: INodeParameters = {}) =>
		askWorkflow({ phone: PHONE, message: '={{ $json.question }}', options }, rows, {
			typeVersion: 1,
		});
	const paced = (seconds: number) => ({
		messageDelay: { range: { minSeconds: seconds, maxSeconds: seconds } },
	});
	// The second question's claim key: the claims in the order they were taken (each ends in its time).
	await waiting.run(ask(paced(0.1)));
	const keys = (await queue.redis().cli('--scan', '--pattern', '*:send:*')).split('\n');
	const takenAt = async (key: string) =>
		Number((await queue.redis().cli('GET', key)).split('|')[3]);
	const times = await Promise.all(keys.map(takenAt));
	const secondKey = keys[times.indexOf([...times].sort((a, b) => a - b)[1])];
	await queue.redis().cli('FLUSHALL');
	sandbox.reset();

	const running = waiting.run(ask(paced(0.4)));
	while (sandbox.ledger().length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
	await queue.redis().cli('SET', secondKey, `d|other.1|79|${Date.now()}`, 'PX', '3600000');
	const execution = await running;
	expect(execution.status).toBe('error');
	expect(execution.run.data.resultData.error?.message).toMatch(
		/^Not asked again: the same question was being sent by execution 79 at \S+Z, with no answer yet: it may have been delivered \(Skip Repeats Within 8 h\) \[item 1\]$/,
	);
	// Item 2 was not started: the re-run does not refuse it, but stops before it.
	expect(execution.run.data.resultData.error?.description).toContain(
		"Running the same input again within 8 h (n8n's Retry, a re-run) refuses items 0–1 again (asked before), and sends nothing: Skip Repeats Within.",
	);
	expect(sandbox.ledger()).toHaveLength(1);
	// What the note says: the same input again refuses both questions, and asks nothing.
	const again = await waiting.run(ask(paced(0.4)));
	expect(again.run.data.resultData.error?.description).toMatch(
		/^.*Failed: items 0–1\. Nothing was sent/m,
	);
	expect(sandbox.ledger()).toHaveLength(1);
});

it('a question another worker asked is refused before anything is sent, whatever this one remembers', async () => {
	const ask = () =>
		askWorkflow({ phone: PHONE, message: 'Approve invoice 31?' }, [{}], { typeVersion: 1 });
	expect((await waiting.run(ask())).status).toBe('waiting');
	// Another worker: its memory knows nothing of the first question, Redis does.
	MemoryTable.forgetAll();
	const again = await waiting.run(ask());
	expect(again.status).toBe('error');
	expect(again.run.data.resultData.error?.message).toMatch(
		/^Not asked again: the same question was sent by execution wait-\d+ at \S+Z \(Skip Repeats Within 8 h\) \[item 0\]$/,
	);
	expect(again.run.data.resultData.error?.description).toContain(
		"Nothing was sent: every item's input is checked before the first request.",
	);
	expect(sandbox.ledger()).toHaveLength(1);
});
