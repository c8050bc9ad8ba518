/**
 * Account Cap in queue mode: the account's send times in n8n's queue Redis (a redis-server of this
 * file's own), one Lua script checking and adding them, so that runs that share nothing but Redis
 * (as workers do) hold one cap together. Through n8n's real engine against the sandbox, on a
 * virtual clock that the sandbox's ledger also reads.
 */

import { clock } from '../../../../nodes/shared/clock';
import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../../../harness/engine';
import { mappedSendText, orderItems } from '../../../harness/messagingNode';
import { sendOptions } from '../../../harness/sendOptions';
import { useQueueMode } from '../../../harness/redisServer';
import { useSandbox } from '../../../harness/useSandbox';
import { useVirtualTime } from '../../../harness/virtualTime';
import { MemoryTable } from '../../../../nodes/shared/store';

const sandbox = useSandbox({ now: () => clock.now() });
const queue = useQueueMode();
useVirtualTime();

const MINUTE = 60_000;
const capped = (messages: number) =>
	mappedSendText(
		sendOptions({ accountCap: { cap: { messages, per: 'minute' } }, maxWaitMinutes: 10 }),
	);
const run = (from: number, workflowId: string, count = 8) =>
	runWorkflow(
		singleNodeWorkflow('messaging', capped(5), orderItems(count, from)),
		sandboxCredential(sandbox.url),
		{ workflowId },
	);

it('two workflows at once hold one cap through Redis: never more than 5 in any minute, every message once', async () => {
	const runs = await Promise.all([run(0, 'workflow-a'), run(100, 'workflow-b')]);
	for (const r of runs) expect(r.error).toBeUndefined();
	const times = sandbox.ledger().map((entry) => Date.parse(entry.at));
	expect(times).toHaveLength(16);
	const most = Math.max(...times.map((t) => times.filter((s) => s > t - MINUTE && s <= t).length));
	expect(most).toBe(5);
	expect(new Set(sandbox.ledger().map((entry) => entry.text)).size).toBe(16);
	// The account's send times are in Redis, not in this process: one sorted set, one entry per send.
	const keys = (
		await queue.redis().cli('KEYS', 'n8n-nodes-messaging-rate:{account:*}:sends')
	).split('\n');
	expect(keys).toHaveLength(1);
	expect(await queue.redis().cli('ZCARD', keys[0])).toBe('16');
});

it('a process that forgets everything (a restart, another worker) still sees the account full', async () => {
	// 10 sends at 5 a minute: 5 at once, 5 a minute later, when the window is full again.
	await run(0, 'workflow-a', 10);
	const lastSend = Date.parse(sandbox.ledger()[9].at);
	MemoryTable.forgetAll();
	const again = await run(500, 'workflow-c', 1);
	expect(again.error).toBeUndefined();
	// The next send waits a whole minute, for the second five to leave the window.
	expect(again.output('Node')[0].json.waitedMs).toBe(MINUTE);
	expect(Date.parse(sandbox.ledger()[10].at)).toBe(lastSend + MINUTE);
});
