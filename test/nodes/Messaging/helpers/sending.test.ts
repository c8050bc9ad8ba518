/**
 * Options → Stop at the Usage Limit through n8n's real engine: the sandbox's usage counter runs
 * out, the node reads it once per run and sends only what remains.
 */
import type { INodeParameters } from 'n8n-workflow';

import { PHONE, apiRequests, runMessaging } from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';
import { useVirtualTime } from '../../../harness/virtualTime';

const sandbox = useSandbox();
// The pause between messages (a new node's default) takes virtual time.
useVirtualTime();

const items = (count: number) =>
	Array.from({ length: count }, (_, index) => ({ text: `Message ${index}` }));
const sendText = (options: INodeParameters = { stopAtUsageLimit: true }): INodeParameters => ({
	resource: 'message',
	operation: 'sendText',
	phone: PHONE,
	text: '={{ $json.text }}',
	options,
});
const limitReads = () => apiRequests(sandbox).filter((entry) => entry.path === '/api/wa/2.0/limit');

describe('Stop at the Usage Limit', () => {
	it('sends only as many as remain; the others are error items marked notAttempted, in order; one limit read', async () => {
		sandbox.setUsage({ limit: 10, used: 7 });
		const run = await runMessaging(sandbox, sendText(), items(5), {
			onError: 'continueRegularOutput',
		});
		expect(run.error).toBeUndefined();
		expect(sandbox.ledger().map((entry) => entry.text)).toEqual([
			'Message 0',
			'Message 1',
			'Message 2',
		]);
		const out = run.output('Node').map((item) => item.json);
		expect(out.slice(0, 3).map((json) => json.sent)).toEqual([true, true, true]);
		expect(out[3]).toMatchObject({
			details: { notAttempted: true },
			error:
				"Not sent: the account's usage limit is reached. It had 3 messages left when this run started (limit 10, 7 used), and they went to 3 earlier items [item 3]",
		});
		expect(String((out[3].details as { description?: unknown }).description)).toContain(
			'The gateway does not say when the count starts again',
		);
		expect(out[4]).toMatchObject({
			details: { notAttempted: true },
			error: expect.stringContaining('[item 4]'),
		});
		expect(run.output('Node').map((item) => item.pairedItem)).toEqual(
			[0, 1, 2, 3, 4].map((item) => ({ item })),
		);
		expect(limitReads()).toHaveLength(1);
		// Read before the first send.
		expect(apiRequests(sandbox)[0].path).toBe('/api/wa/2.0/limit');
	});

	it('nothing left means nothing sent, and says to check the limit before running the rest (the answer gives no reset date)', async () => {
		sandbox.setUsage({ limit: 5, used: 5 });
		const run = await runMessaging(sandbox, sendText(), items(2), {
			onError: 'continueRegularOutput',
		});
		const out = run.output('Node').map((item) => item.json);
		expect(out[0].error).toBe(
			"Not sent: the account's usage limit is reached. It had 0 messages left when this run started (limit 5, 5 used), so nothing was sent in this run [item 0]",
		);
		expect(String((out[0].details as { description?: unknown }).description)).toContain(
			'The gateway does not say when the count starts again: check Account → Get Usage Limit before running the remaining items.',
		);
		expect(apiRequests(sandbox).filter((entry) => entry.path === '/api/wa/2.0/post')).toHaveLength(
			0,
		);
	});

	it('without On Error → Continue the run stops at the first item over the limit, saying what was sent', async () => {
		sandbox.setUsage({ limit: 10, used: 8 });
		const run = await runMessaging(sandbox, sendText(), items(4));
		expect(run.error?.message).toContain(
			"Not sent: the account's usage limit is reached. It had 2 messages left",
		);
		expect(run.error?.message).toContain('[item 2]');
		expect(run.error?.description).toMatch(/Completed before the stop: (items )?0–1/);
		expect(run.error?.description).toContain(
			"Running the same input again within 8 h (n8n's Retry, a re-run) skips items 0–1 (sent) and sends items 2–3: Skip Repeats Within.",
		);
		expect(sandbox.ledger()).toHaveLength(2);
		// Kept back without a request, its claim was given back: once the limit allows, it is sent.
		sandbox.setUsage({ limit: 20, used: 10 });
		const again = await runMessaging(sandbox, sendText(), items(4));
		expect(again.error).toBeUndefined();
		expect(sandbox.ledger().map((entry) => entry.text)).toEqual([
			'Message 0',
			'Message 1',
			'Message 2',
			'Message 3',
		]);
	});

	it('with Parallel Requests the count holds: exactly the remaining number is sent', async () => {
		sandbox.setUsage({ limit: 20, used: 15 });
		const run = await runMessaging(
			sandbox,
			sendText({ stopAtUsageLimit: true, parallel: 4 }),
			items(12),
			{ onError: 'continueRegularOutput' },
		);
		expect(sandbox.ledger()).toHaveLength(5);
		expect(
			run
				.output('Node')
				.filter(
					(item) =>
						(item.json.details as { notAttempted?: unknown } | undefined)?.notAttempted === true,
				),
		).toHaveLength(7);
		expect(limitReads()).toHaveLength(1);
	});

	it('off (the default): no limit read, every item is attempted and the gateway refuses those over the limit', async () => {
		sandbox.setUsage({ limit: 10, used: 9 });
		const run = await runMessaging(sandbox, sendText({}), items(3), {
			onError: 'continueRegularOutput',
		});
		expect(limitReads()).toHaveLength(0);
		expect(sandbox.ledger()).toHaveLength(1);
		const out = run.output('Node').map((item) => item.json);
		expect(out[1].error).toEqual(expect.stringContaining('Message limit reached'));
		expect(
			(out[1].details as { notAttempted?: unknown } | undefined)?.notAttempted,
		).toBeUndefined();
	});

	it('Send File from a URL: an item over the limit downloads nothing', async () => {
		sandbox.setUsage({ limit: 3, used: 2 });
		const url = `${sandbox.url}/files/list.pdf?size=100&type=application/pdf`;
		const run = await runMessaging(
			sandbox,
			{
				resource: 'message',
				operation: 'sendFile',
				phone: PHONE,
				fileSource: 'url',
				fileUrl: url,
				// Two messages, not one repeated (Skip Repeats Within): each its own caption.
				caption: '={{ "copy " + $itemIndex }}',
				options: { stopAtUsageLimit: true },
			},
			[{}, {}],
			{ onError: 'continueRegularOutput' },
		);
		expect(
			run
				.output('Node')
				.map(
					(item) =>
						(item.json.details as { notAttempted?: unknown } | undefined)?.notAttempted ?? false,
				),
		).toEqual([false, true]);
		expect(sandbox.fileRequests()).toHaveLength(1);
		expect(sandbox.ledger()).toHaveLength(1);
	});

	it('a gateway that cannot say its limit fails the items rather than sending blind', async () => {
		sandbox.addFaults([{ kind: 'html502', match: { path: '/api/wa/2.0/limit' }, times: 10 }]);
		const run = await runMessaging(sandbox, sendText(), items(2), {
			onError: 'continueRegularOutput',
		});
		expect(sandbox.ledger()).toHaveLength(0);
		expect(run.output('Node').map((item) => item.json.error)).toEqual([
			expect.stringContaining('Get Usage Limit'),
			expect.stringContaining('Get Usage Limit'),
		]);
	});
});
