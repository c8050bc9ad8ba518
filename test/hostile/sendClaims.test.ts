/**
 * Skip Repeats Within where only this process holds the claims (no n8n store: a workflow without
 * an id, or an n8n without the store), through n8n's engine against the sandbox: another
 * workflow's flood of claims must not evict a claim whose message is being sent now.
 */
import type { IDataObject } from 'n8n-workflow';

import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../harness/engine';
import { PHONE, mappedSendText, orderItems } from '../harness/messagingNode';
import { useSandbox } from '../harness/useSandbox';

const sandbox = useSandbox();

const NO_DELAY = { messageDelay: { range: { minSeconds: 0, maxSeconds: 0 } } };

describe('claims held in process memory only', () => {
	it("a flood of another workflow's claims never evicts a message being sent: a second run skips it", async () => {
		const message = [{ phone: PHONE, text: 'Your code is 4412' }];
		const run = (items: IDataObject[], workflowId: string | null) =>
			runWorkflow(
				singleNodeWorkflow('messaging', mappedSendText(NO_DELAY), items),
				sandboxCredential(sandbox.url),
				{ workflowId },
			);
		// The first run's request is processed, and its answer is slow: the claim is in flight.
		sandbox.addFaults([
			{ kind: 'slow', delayMs: 4000, match: { rpcMethod: 'sendMessage' }, times: 1 },
		]);
		const first = run(message, null);
		while (sandbox.ledger().length === 0) await new Promise((resolve) => setTimeout(resolve, 20));

		// 80,000 claims (more than the memory budget holds), given back when its first send fails.
		sandbox.addFaults([{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, times: 1 }]);
		const flood = await run(orderItems(80_000), null);
		expect(flood.error).toBeDefined();
		expect(sandbox.ledger().some((entry) => entry.text?.startsWith('Order'))).toBe(false);

		const second = await run(message, null);
		expect(second.output('Node')[0]?.json).toMatchObject({ skipped: true });
		// Its answer may come after its Request Timeout while the flood holds the process: either way
		// the message counts as sent or maybe delivered.
		await first;
		expect(sandbox.ledger().filter((entry) => entry.text === 'Your code is 4412')).toHaveLength(1);
	});
});
