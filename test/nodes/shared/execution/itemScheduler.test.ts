/**
 * Batching options through the engine: "Delay Between Requests" spaces the starts of the sends,
 * and a failure without Continue On Fail starts no further item.
 */
import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../../../harness/engine';
import { useSandbox } from '../../../harness/useSandbox';

const sandbox = useSandbox();

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ text: `batch-${i}` }));
const sendText = (options: Record<string, number>) => ({
	resource: 'message',
	operation: 'sendText',
	phone: '6281288776713',
	text: '={{ $json.text }}',
	options,
});

test.each([1, 3])('Delay Between Requests spaces the sends (parallel %i)', async (parallel) => {
	const delayMs = 150;
	const run = await runWorkflow(singleNodeWorkflow('messaging', sendText({ delayMs, parallel }), items(5)), sandboxCredential(sandbox.url));
	expect(run.error).toBeUndefined();
	const times = sandbox
		.ledger()
		.map((e) => Date.parse(e.at))
		.sort((a, b) => a - b);
	expect(times).toHaveLength(5);
	// Starts are spaced by the delay (the first send also waited for the token, so count from the second).
	// These are arrival times: on a loaded machine one request's way to the sandbox can take tens of
	// milliseconds longer than another's, hence the margin (without the delay the spread is near 0).
	expect(times[4] - times[1]).toBeGreaterThanOrEqual(3 * delayMs - 60);
	expect(run.output('Node').map((i) => i.json.sent)).toEqual([true, true, true, true, true]);
});

test('without the delay, the same sends are not spaced out', async () => {
	const run = await runWorkflow(singleNodeWorkflow('messaging', sendText({ parallel: 1 }), items(5)), sandboxCredential(sandbox.url));
	expect(run.error).toBeUndefined();
	const times = sandbox.ledger().map((e) => Date.parse(e.at));
	expect(Math.max(...times) - Math.min(...times)).toBeLessThan(4 * 150 - 20);
});

test('without Continue On Fail, a failure starts no further item and the error lists what was sent', async () => {
	// times 2: sandbox.reset() dropped its tokens, so the first send may be refused as "Invalid
	// token" (which spends one firing) and repeated with a new token. Either way item 0 fails;
	// with parallel 1 nothing after it may be sent.
	sandbox.addFaults([{ kind: 'sentFalse', message: 'Number is banned', match: { rpcMethod: 'sendMessage' }, times: 2 }]);
	const run = await runWorkflow(singleNodeWorkflow('messaging', sendText({ parallel: 1 }), items(4)), sandboxCredential(sandbox.url));
	expect(run.error?.description).toMatch(/not sent: "Number is banned"/);
	expect(run.error?.description).toMatch(/Failed: item 0\. Not started: items 1–3\./);
	expect(sandbox.ledger()).toHaveLength(0);
});
