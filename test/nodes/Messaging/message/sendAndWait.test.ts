/**
 * Message → Send and Wait for Response through n8n's real engine: the execution waits, the
 * links in the WhatsApp text (read from the sandbox's ledger) are opened over HTTP on a server
 * that plays n8n's waiting-webhook route (`test/harness/waitingEngine.ts`: n8n's signature check, the
 * node's restart webhook, the resume), and the next node sees the answer.
 */
import { Container } from '@n8n/di';
import {
	ExecuteContext,
	InstanceSettings,
	generateUrlSignature,
	prepareUrlForSigning,
} from 'n8n-core';
import type {
	IConnections,
	IDataObject,
	INode,
	INodeExecutionData,
	INodeParameters,
} from 'n8n-workflow';

import { Messaging } from '../../../../nodes/Messaging/Messaging.node';
import {
	PACKAGE,
	RECEIVED_NAME,
	sandboxCredential,
	singleNodeWorkflow,
	type WorkflowJson,
} from '../../../harness/engine';
import { WaitingHarness } from '../../../harness/waitingEngine';
import { PHONE, PHONE_PASTED } from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';

const sandbox = useSandbox();
let harness: WaitingHarness;
beforeAll(async () => {
	harness = await WaitingHarness.start(sandboxCredential(sandbox.url));
});
afterAll(async () => await harness.close());

const OTHER_PHONE = '6281299990001';

/** Items → Messaging (Send and Wait) → Received. */
function approvalWorkflow(
	parameters: INodeParameters = {},
	items: IDataObject[] = [{}],
	settings: Partial<INode> = {},
): WorkflowJson {
	const base = singleNodeWorkflow(
		'messaging',
		{
			resource: 'message',
			operation: 'sendAndWait',
			phone: PHONE_PASTED,
			message: 'Send the March price list to 1,200 customers?',
			...parameters,
		},
		items,
		settings,
	);
	return {
		nodes: [
			...base.nodes,
			{
				id: '4',
				name: RECEIVED_NAME,
				type: 'test.received',
				typeVersion: 1,
				position: [600, 0],
				parameters: {},
			},
		],
		connections: {
			...base.connections,
			Node: { main: [[{ node: RECEIVED_NAME, type: 'main', index: 0 }]] },
		} as IConnections,
	};
}

/** The links of the n-th message the sandbox recorded, by label. */
function linksOf(entryIndex = 0): Record<string, string> {
	const text = sandbox.ledger()[entryIndex]?.text ?? '';
	return Object.fromEntries(
		[...text.matchAll(/^(.+): (http\S+)$/gm)].map((match) => [match[1], match[2]]),
	);
}

const json = (items: INodeExecutionData[]) => items.map((item) => item.json);

describe('Send and Wait: approval', () => {
	it('waits; opening the approve link shows its button, and pressing it resumes: the next node sees approved: true', async () => {
		const execution = await harness.run(approvalWorkflow());
		expect(execution.status).toBe('waiting');
		expect(execution.waitTill?.toISOString()).toBe('3000-01-01T00:00:00.000Z');

		const [entry] = sandbox.ledger();
		expect(entry).toMatchObject({ kind: 'text', phone: PHONE });
		expect(entry.text).toMatch(
			/^Send the March price list to 1,200 customers\?\n\nApprove: http:\/\/127\.0\.0\.1:\d+\/webhook-waiting\/wait-\d+\/3\?approved=true&item=0&w=[0-9a-f]{12}&signature=[0-9a-f]{64}\nDecline: http.*approved=false.*$/,
		);
		expect(json(execution.output('Node'))).toEqual([
			expect.objectContaining({
				approved: null,
				answered: false,
				timedOut: false,
				id: entry.id,
				phone: PHONE,
				sent: true,
			}),
		]);

		const page = await harness.open(linksOf().Approve);
		expect(page).toMatchObject({
			status: 200,
			resumed: false,
			contentType: 'text/html; charset=utf-8',
		});
		expect(page.text).toContain(
			'<h1>Approve</h1><p>Press the button to record your answer. Opening this page records nothing.</p><form method="post"><button type="submit" name="decision" value="approve">Approve</button></form>',
		);
		expect(harness.execution(execution.id).status).toBe('waiting');

		const call = await harness.press(linksOf().Approve);
		expect(call).toMatchObject({
			status: 200,
			resumed: true,
			contentType: 'text/html; charset=utf-8',
		});
		expect(call.text).toContain('<h1>Approved</h1>');
		expect(call.text).not.toMatch(/<script|https?:\/\/(?!127)/);

		const resumed = await harness.settled(execution.id);
		expect(resumed.status).toBe('success');
		const [answer] = json(resumed.output(RECEIVED_NAME));
		expect(answer).toEqual({
			approved: true,
			answered: true,
			respondedBy: PHONE,
			respondedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
			timedOut: false,
			sent: true,
			id: entry.id,
			phone: PHONE,
			message: 'Message sent',
			sentAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
			waitedMs: 0,
			response: expect.any(Object),
			question: 'Send the March price list to 1,200 customers?',
			waitId: expect.stringMatching(/^[0-9a-f]{12}$/),
		});
		expect(resumed.output('Node')[0].pairedItem).toEqual({ item: 0 });

		// The execution is over: the other link changes nothing.
		const late = await harness.open(linksOf().Decline);
		expect(late).toMatchObject({ status: 200, resumed: false });
		expect(late.text).toContain('No action required');
	});

	it('decline: approved: false; "Approve Only" sends one link with its own label', async () => {
		const execution = await harness.run(approvalWorkflow());
		await harness.press(linksOf().Decline);
		expect(json((await harness.settled(execution.id)).output(RECEIVED_NAME))[0]).toMatchObject({
			approved: false,
			answered: true,
		});

		sandbox.reset();
		await harness.run(
			approvalWorkflow({
				approvalOptions: { approvalType: 'single', approveLabel: 'Yes, send it' },
			}),
		);
		expect(Object.keys(linksOf())).toEqual(['Yes, send it']);
	});

	it('a tampered link is refused by the signature check and the execution keeps waiting', async () => {
		const execution = await harness.run(approvalWorkflow());
		const decline = linksOf().Decline;
		const forged = decline.replace('approved=false', 'approved=true');
		expect(await harness.open(forged)).toMatchObject({ status: 401, resumed: false });
		expect(await harness.open(decline.replace(/&signature=[0-9a-f]+/, ''))).toMatchObject({
			status: 401,
			resumed: false,
		});
		const otherItem = decline.replace('item=0', 'item=1');
		expect(await harness.open(otherItem)).toMatchObject({ status: 401, resumed: false });
		expect(harness.execution(execution.id).status).toBe('waiting');
	});

	it.each([
		['python-requests', 'python-requests/2.32.3'],
		['curl', 'curl/8.5.0'],
		['Go', 'Go-http-client/1.1'],
		['okhttp', 'okhttp/4.12.0'],
		['node', 'node'],
		[
			"Outlook's previewer",
			'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17928; Pro)',
		],
		["WhatsApp's previewer", 'WhatsApp/2.24.6.77 A'],
		[
			'a browser',
			'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148',
		],
		['no user agent', ''],
	])(
		'opening a link decides nothing, whoever opens it (%s): GET, HEAD and a POST without the button',
		async (_who, agent) => {
			const execution = await harness.run(approvalWorkflow());
			const headers = { 'user-agent': agent };
			for (const link of [linksOf().Approve, linksOf().Decline]) {
				expect(await harness.open(link, { headers })).toMatchObject({
					status: 200,
					resumed: false,
				});
				expect(await harness.open(link, { method: 'HEAD', headers })).toMatchObject({
					status: 200,
					resumed: false,
				});
				// A scanner that posts the link, or submits the form without pressing its button.
				const posted = await harness.open(link, { form: { approved: 'true' }, headers });
				expect(posted).toMatchObject({ status: 400, resumed: false });
				expect(posted.text).toContain('Nothing was recorded: press the button to answer.');
			}
			// The decline button's value posted to the approve link is no approval either.
			expect(
				await harness.open(linksOf().Approve, { form: { decision: 'decline' }, headers }),
			).toMatchObject({ status: 400, resumed: false });
			expect(harness.execution(execution.id).status).toBe('waiting');
			// The person still answers afterwards.
			expect(await harness.press(linksOf().Decline)).toMatchObject({ resumed: true });
			expect(json((await harness.settled(execution.id)).output(RECEIVED_NAME))[0]).toMatchObject({
				approved: false,
			});
		},
	);

	it('the page escapes what the workflow put in it (labels), and keeps its headers', async () => {
		await harness.run(
			approvalWorkflow({
				approvalOptions: { approveLabel: '<img src=x onerror=alert(1)>"Yes"' },
			}),
		);
		const page = await harness.open(linksOf()['<img src=x onerror=alert(1)>"Yes"']);
		expect(page.text).toContain(
			'<button type="submit" name="decision" value="approve">&#60;img src=x onerror=alert(1)&#62;&#34;Yes&#34;</button>',
		);
		expect(page.text).not.toContain('<img');
		expect(page.headers).toMatchObject({
			'content-security-policy': expect.stringContaining("default-src 'none'"),
			'referrer-policy': 'no-referrer',
			'cache-control': 'no-store',
		});
	});

	it('a link signed for another wait of the node (same execution and node) is refused by the node itself', async () => {
		const execution = await harness.run(approvalWorkflow());
		// What n8n would sign for an earlier (or later) wait of this node in this execution: only the wait id differs.
		const other = new URL(linksOf().Approve);
		other.searchParams.set('w', '0123456789ab');
		other.searchParams.delete('signature');
		other.searchParams.set(
			'signature',
			generateUrlSignature(
				prepareUrlForSigning(other),
				Container.get(InstanceSettings).hmacSignatureSecret,
			),
		);
		const call = await harness.open(other.toString());
		expect(call).toMatchObject({ status: 410, resumed: false });
		expect(call.text).toContain('This link is no longer valid');
		expect(harness.execution(execution.id).status).toBe('waiting');
	});
});

describe('Send and Wait: free text', () => {
	it('the link opens a form; an empty answer is refused; the text comes out', async () => {
		const execution = await harness.run(
			approvalWorkflow({
				responseType: 'freeText',
				message: 'Which date suits you for the delivery?',
				freeTextOptions: { linkLabel: 'Answer here' },
			}),
		);
		const link = linksOf()['Answer here'];
		expect(link).toMatch(/\?item=0&w=[0-9a-f]{12}&signature=/);

		const page = await harness.open(link);
		expect(page).toMatchObject({ status: 200, resumed: false });
		expect(page.text).toMatch(
			/<form method="post"><label for="text">Your answer<\/label><textarea id="text" name="text" maxlength="4000" required><\/textarea><button type="submit" name="decision" value="send">Send<\/button><\/form>/,
		);
		// Whoever only opens the link learns nothing of the question (a preview, a scanner, a forward).
		expect(page.text).not.toMatch(/date|delivery/i);

		expect(await harness.press(link, { text: '   ' })).toMatchObject({
			status: 400,
			resumed: false,
		});
		// An answer posted without the button (a script, a scanner filling forms) records nothing.
		expect(await harness.open(link, { form: { text: 'Friday' } })).toMatchObject({
			status: 400,
			resumed: false,
		});
		const refused = await harness.press(link, { text: 'x'.repeat(4001) });
		expect(refused).toMatchObject({ status: 400, resumed: false });
		expect(refused.text).not.toMatch(/date|delivery/i);
		expect(await harness.press(link, { text: 'Thursday <b>morning</b>' })).toMatchObject({
			status: 200,
			resumed: true,
		});
		const [answer] = json((await harness.settled(execution.id)).output(RECEIVED_NAME));
		expect(answer).toMatchObject({
			text: 'Thursday <b>morning</b>',
			answered: true,
			respondedBy: PHONE,
			timedOut: false,
		});
		expect(answer).not.toHaveProperty('approved');
	});
});

describe('Send and Wait: several items, limits, errors', () => {
	it('one question per item; the first answer resumes; every item comes out, a failed send as its error item', async () => {
		const execution = await harness.run(
			approvalWorkflow(
				{ phone: '={{ $json.phone }}' },
				[{ phone: PHONE_PASTED }, { phone: '12ab' }, { phone: `+${OTHER_PHONE}` }],
				{ onError: 'continueRegularOutput' },
			),
		);
		expect(execution.status).toBe('waiting');
		expect(sandbox.ledger().map((entry) => entry.phone)).toEqual([PHONE, OTHER_PHONE]);
		await harness.press(linksOf(1).Approve);
		const out = json((await harness.settled(execution.id)).output(RECEIVED_NAME));
		expect(out).toHaveLength(3);
		expect(out[0]).toMatchObject({
			approved: null,
			answered: false,
			phone: PHONE,
			timedOut: false,
		});
		expect(out[1]).toMatchObject({ error: expect.stringContaining('Phone Number') });
		expect(out[2]).toMatchObject({
			approved: true,
			answered: true,
			respondedBy: OTHER_PHONE,
			phone: OTHER_PHONE,
		});
	});

	it('nothing sent: nothing waits', async () => {
		const execution = await harness.run(
			approvalWorkflow({ phone: '12ab' }, [{}], { onError: 'continueRegularOutput' }),
		);
		expect(execution.status).toBe('success');
		expect(json(execution.output(RECEIVED_NAME))[0]).toMatchObject({
			error: expect.stringContaining('Phone Number'),
		});
	});

	it('Limit Wait Time: after the interval the execution goes on with timedOut: true', async () => {
		const before = Date.now();
		const execution = await harness.run(
			approvalWorkflow({
				limitWaitTime: true,
				limitType: 'afterTimeInterval',
				resumeAmount: 2,
				resumeUnit: 'hours',
			}),
		);
		expect(execution.waitTill!.getTime() - before).toBeGreaterThanOrEqual(2 * 3_600_000 - 1000);
		expect(execution.waitTill!.getTime() - before).toBeLessThan(2 * 3_600_000 + 60_000);
		const ended = await harness.timeOut(execution.id);
		expect(ended.status).toBe('success');
		expect(json(ended.output(RECEIVED_NAME))).toEqual([
			expect.objectContaining({
				approved: null,
				answered: false,
				respondedBy: null,
				respondedAt: null,
				timedOut: true,
				id: sandbox.ledger()[0].id,
			}),
		]);
		// After the time-out the links answer "no action required", pressed or not.
		expect((await harness.open(linksOf().Approve)).resumed).toBe(false);
		expect((await harness.open(linksOf().Approve, { form: { decision: 'approve' } })).resumed).toBe(
			false,
		);
	});

	it('Limit Wait Time at a date; a date that is none is refused before anything is sent', async () => {
		const execution = await harness.run(
			approvalWorkflow({
				limitWaitTime: true,
				limitType: 'atSpecifiedTime',
				maxDateAndTime: '2031-05-01T10:00:00.000Z',
			}),
		);
		expect(execution.waitTill?.toISOString()).toBe('2031-05-01T10:00:00.000Z');
		sandbox.reset();
		const bad = await harness.run(
			approvalWorkflow({
				limitWaitTime: true,
				limitType: 'atSpecifiedTime',
				maxDateAndTime: 'next tuesday',
			}),
		);
		expect(bad.status).toBe('error');
		expect(JSON.stringify(bad.run.data.resultData.error)).toContain('Max Date and Time');
		expect(sandbox.ledger()).toHaveLength(0);
	});

	it('an n8n without signed resume links: refused clearly, nothing sent', async () => {
		// The prototype that defines it (n8n-core's NodeExecutionContext, which ExecuteContext extends).
		let proto = ExecuteContext.prototype as unknown as { getSignedResumeUrl?: unknown };
		while (!Object.prototype.hasOwnProperty.call(proto, 'getSignedResumeUrl'))
			proto = Object.getPrototypeOf(proto) as typeof proto;
		const original = proto.getSignedResumeUrl;
		delete proto.getSignedResumeUrl;
		try {
			const execution = await harness.run(approvalWorkflow());
			expect(execution.status).toBe('error');
			expect(JSON.stringify(execution.run.data.resultData.error)).toContain(
				'Send and Wait needs n8n 1.107 or newer',
			);
			expect(sandbox.ledger()).toHaveLength(0);
		} finally {
			proto.getSignedResumeUrl = original;
		}
	});

	it('with Stop at the Usage Limit, only the remaining messages are sent and the wait covers them', async () => {
		sandbox.setUsage({ limit: 10, used: 9 });
		const execution = await harness.run(
			approvalWorkflow(
				{ phone: '={{ $json.phone }}', options: { stopAtUsageLimit: true } },
				[{ phone: PHONE }, { phone: OTHER_PHONE }],
				{ onError: 'continueRegularOutput' },
			),
		);
		expect(execution.status).toBe('waiting');
		expect(sandbox.ledger()).toHaveLength(1);
		const out = json(execution.output('Node'));
		expect(out[0]).toMatchObject({ answered: false, phone: PHONE });
		expect(out[1]).toMatchObject({
			details: { notAttempted: true },
			error: expect.stringContaining(
				"Not sent: the account's usage limit is reached. It had 1 message left",
			),
		});
	});

	it('the node declares its restart webhooks as n8n expects (path = node id, GET and POST)', () => {
		const { description } = new Messaging();
		expect(description.webhooks).toEqual([
			expect.objectContaining({
				httpMethod: 'GET',
				path: '={{ $nodeId }}',
				restartWebhook: true,
				isFullPath: true,
			}),
			expect.objectContaining({
				httpMethod: 'POST',
				path: '={{ $nodeId }}',
				restartWebhook: true,
				isFullPath: true,
			}),
		]);
		expect(PACKAGE).toBe('n8n-nodes-messaging-rate');
	});
});

describe('Send and Wait: Skip Repeats Within (version 2)', () => {
	it('a question asked again within the window is not sent again, and fails rather than pass on an item that reads as a decision', async () => {
		const first = await harness.run(approvalWorkflow({}, [{}], { typeVersion: 1 }));
		expect(first.status).toBe('waiting');
		const again = await harness.run(approvalWorkflow({}, [{}], { typeVersion: 1 }));
		expect(again.status).toBe('error');
		expect(again.run.data.resultData.error?.message).toEqual(
			expect.stringMatching(
				new RegExp(
					`^Not asked again: the same question was sent by execution ${first.id} at \\S+Z \\(Skip Repeats Within 8 h\\) \\[item 0\\]$`,
				),
			),
		);
		expect(again.output('Node')).toEqual([]);
		expect(sandbox.ledger()).toHaveLength(1);
		// The first question is still open, and its link still answers it.
		expect((await harness.press(linksOf().Approve)).resumed).toBe(true);
	});

	it('the error says what a re-run does, truthfully: a third run fails the same way and sends nothing', async () => {
		const first = await harness.run(approvalWorkflow({}, [{}], { typeVersion: 1 }));
		for (const run of [1, 2]) {
			const again = await harness.run(approvalWorkflow({}, [{}], { typeVersion: 1 }));
			expect(again.status).toBe('error');
			const { message, description } = again.run.data.resultData.error as {
				message: string;
				description: string;
			};
			expect(message).toMatch(new RegExp(`^Not asked again: .* by execution ${first.id} `));
			expect(description).toContain(
				`The person's answer (or the wait's time limit) resumes execution ${first.id}, the one that asked: see it for the answer.`,
			);
			expect(description).toContain('Running this input again within 8 h refuses it again.');
			expect(description).not.toMatch(/sends item/);
			expect(sandbox.ledger()).toHaveLength(1);
			expect(run).toBeGreaterThan(0);
		}
	});

	it('a duplicated row is refused before the first question is sent', async () => {
		const question = { message: '={{ $json.question }}' };
		const rows = [{ question: 'Approve invoice 7?' }, { question: 'Approve invoice 7?' }];
		const run = await harness.run(approvalWorkflow(question, rows, { typeVersion: 1 }));
		expect(run.status).toBe('error');
		expect(run.run.data.resultData.error?.message).toBe(
			'Not asked again: item 0 of this run asks the same (Skip Repeats Within 8 h) [item 1]',
		);
		expect(sandbox.ledger()).toEqual([]);
	});

	it("n8n's Retry whose input puts a new question before a repeated one asks nothing", async () => {
		const question = { message: '={{ $json.question }}' };
		const first = await harness.run(
			approvalWorkflow(question, [{ question: 'Approve invoice 8?' }], { typeVersion: 1 }),
		);
		expect(first.status).toBe('waiting');
		const rows = [{ question: 'Approve invoice 9?' }, { question: 'Approve invoice 8?' }];
		const run = await harness.run(approvalWorkflow(question, rows, { typeVersion: 1 }));
		expect(run.status).toBe('error');
		expect(run.run.data.resultData.error?.message).toMatch(
			/^Not asked again: the same question was sent by execution .* \[item 1\]$/,
		);
		expect(sandbox.ledger().map((entry) => entry.text?.split('\n')[0])).toEqual([
			'Approve invoice 8?',
		]);
	});

	it('with On Error → Continue, only the repeated question fails; the new one is asked', async () => {
		const question = { message: '={{ $json.question }}' };
		const rows = [{ question: 'Approve invoice 10?' }, { question: 'Approve invoice 10?' }];
		const run = await harness.run(
			approvalWorkflow(question, rows, { typeVersion: 1, onError: 'continueRegularOutput' }),
		);
		expect(run.status).toBe('waiting');
		expect(sandbox.ledger()).toHaveLength(1);
		const out = json(run.output('Node'));
		expect(out[1]).toMatchObject({ details: { notAttempted: true } });
	});
});
