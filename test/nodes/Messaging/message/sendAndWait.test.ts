/**
 * Message → Send and Wait for Response through n8n's real engine: the execution waits, the
 * links in the WhatsApp text (read from the sandbox's ledger) are opened over HTTP on a server
 * that plays n8n's waiting-webhook route (`test/harness/waitingEngine.ts`: n8n's signature check, the
 * node's restart webhook, the resume), and the next node sees the answer.
 */
import { ExecuteContext } from 'n8n-core';
import {
	WAIT_INDEFINITELY,
	type IDataObject,
	type INode,
	type INodeExecutionData,
	type INodeParameters,
} from 'n8n-workflow';

import { RECEIVED_NAME, sandboxCredential, type WorkflowJson } from '../../../harness/engine';
import {
	WaitingHarness,
	askWorkflow,
	pageForm,
	pageText,
	signedAgain,
} from '../../../harness/waitingEngine';
import { PHONE, PHONE_PASTED } from '../../../harness/messagingNode';
import { processedItems } from '../../../harness/processedItems';
import { useSandbox } from '../../../harness/useSandbox';
import { MemoryTable } from '../../../../nodes/shared/store';

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
	return askWorkflow(
		{
			phone: PHONE_PASTED,
			message: 'Send the March price list to 1,200 customers?',
			...parameters,
		},
		items,
		settings,
	);
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
		// What n8n shows as waiting without an end.
		expect(execution.waitTill).toEqual(WAIT_INDEFINITELY);

		const [entry] = sandbox.ledger();
		expect(entry).toMatchObject({ kind: 'text', phone: PHONE });
		expect(entry.text).toMatch(
			/^Send the March price list to 1,200 customers\?\n\nApprove: \S+\nDecline: \S+$/,
		);
		// Each link is n8n's waiting-webhook route of this execution and node, signed by n8n.
		const nodeId = approvalWorkflow().nodes.find((node) => node.name === 'Node')?.id;
		for (const link of Object.values(linksOf())) {
			const url = new URL(link);
			expect(`${url.origin}${url.pathname}`).toBe(
				`${harness.baseUrl}/webhook-waiting/${execution.id}/${nodeId}`,
			);
			expect(url.searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/);
		}
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
		// One button, with the link's label; nothing of the question (a preview shows the page).
		expect(pageForm(page.text)?.button).toEqual({
			name: 'decision',
			value: 'approve',
			label: 'Approve',
		});
		expect(pageText(page.text)).toEqual([
			'Approve',
			'Press the button to record your answer. Opening this page records nothing.',
			'Approve',
		]);
		expect(page.text).not.toMatch(/March|customers/);
		expect(harness.execution(execution.id).status).toBe('waiting');

		const call = await harness.press(linksOf().Approve);
		expect(call).toMatchObject({
			status: 200,
			resumed: true,
			contentType: 'text/html; charset=utf-8',
		});
		// Recorded: nothing is left to press.
		expect(pageForm(call.text)).toBeUndefined();
		expect(pageText(call.text)).toEqual([
			'Approved',
			'Your approval was recorded. You can close this page.',
		]);
		expect(call.text).not.toMatch(/<script|https?:\/\/(?!127)/);

		const resumed = await harness.settled(execution.id);
		expect(resumed.status).toBe('success');
		const [answer] = json(resumed.output(RECEIVED_NAME));
		expect(answer).toEqual({
			approved: true,
			answered: true,
			answeredBy: 'link',
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
		const page = (await harness.open(linksOf().Decline)).text;
		expect(pageForm(page)?.button).toEqual({
			name: 'decision',
			value: 'decline',
			label: 'Decline',
		});
		expect(pageText(page)[0]).toBe('Decline');
		// A JSON body that names the button is no press: only a browser's form is.
		const posted = await harness.open(linksOf().Decline, {
			method: 'POST',
			body: JSON.stringify({ decision: 'decline' }),
			headers: { 'content-type': 'application/json' },
		});
		expect(posted).toMatchObject({ status: 400, resumed: false });
		expect(pageText(posted.text)).toContain('Nothing was recorded: press the button to answer.');
		// A browser's form, its type written in capitals by some client.
		const pressed = await harness.open(linksOf().Decline, {
			form: { decision: 'decline' },
			headers: { 'content-type': 'Application/X-WWW-Form-URLEncoded; charset=UTF-8' },
		});
		expect(pageText(pressed.text)).toEqual([
			'Declined',
			'Your answer (declined) was recorded. You can close this page.',
		]);
		expect(json((await harness.settled(execution.id)).output(RECEIVED_NAME))[0]).toMatchObject({
			approved: false,
			answered: true,
		});

		sandbox.reset();
		await harness.run(
			approvalWorkflow({
				approvalOptions: { approvalType: 'single', approveLabel: ' Yes, send it ' },
			}),
		);
		// A label as typed, without the spaces around it.
		expect(Object.keys(linksOf())).toEqual(['Yes, send it']);
		expect(pageForm((await harness.open(linksOf()['Yes, send it'])).text)?.button.label).toBe(
			'Yes, send it',
		);

		// A label of spaces only is no label: the default is used.
		sandbox.reset();
		await harness.run(
			approvalWorkflow({ message: 'Another question', approvalOptions: { declineLabel: '   ' } }),
		);
		expect(Object.keys(linksOf())).toEqual(['Approve', 'Decline']);
	});

	it('a tampered link is refused by the signature check and the execution keeps waiting', async () => {
		const execution = await harness.run(approvalWorkflow());
		const { Approve, Decline } = linksOf();
		const decline = new URL(Decline);
		// The approve link's address with the decline link's signature.
		const forged = new URL(Approve);
		forged.searchParams.set('signature', decline.searchParams.get('signature') ?? '');
		expect(await harness.open(forged.toString())).toMatchObject({ status: 401, resumed: false });
		const unsigned = new URL(Decline);
		unsigned.searchParams.delete('signature');
		expect(await harness.open(unsigned.toString())).toMatchObject({ status: 401, resumed: false });
		// Any value of the link changed, whatever the node reads from it.
		const names = [...decline.searchParams.keys()].filter((name) => name !== 'signature');
		expect(names.length).toBeGreaterThan(0);
		for (const name of names) {
			const changed = new URL(Decline);
			changed.searchParams.set(name, `${changed.searchParams.get(name)}1`);
			expect(await harness.open(changed.toString())).toMatchObject({ status: 401, resumed: false });
		}
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
			const buttons = [];
			for (const link of [linksOf().Approve, linksOf().Decline]) {
				const opened = await harness.open(link, { headers });
				buttons.push(pageForm(opened.text)?.button);
				expect(opened).toMatchObject({ status: 200, resumed: false });
				expect(await harness.open(link, { method: 'HEAD', headers })).toMatchObject({
					status: 200,
					resumed: false,
				});
				// A scanner that posts the link's own values, or submits the form without its button:
				// refused, with the same button to press and a notice the opened page has not.
				const posted = await harness.open(link, {
					form: Object.fromEntries(new URL(link).searchParams),
					headers,
				});
				expect(posted).toMatchObject({ status: 400, resumed: false });
				expect(pageForm(posted.text)?.button).toEqual(pageForm(opened.text)?.button);
				expect(posted.text).not.toBe(opened.text);
			}
			// The decline button's value posted to the approve link is no approval either.
			const [, declineButton] = buttons;
			expect(
				await harness.open(linksOf().Approve, {
					form: { [declineButton?.name ?? '']: declineButton?.value ?? '' },
					headers,
				}),
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
		// Shown as the text typed, not as markup.
		expect(pageForm(page.text)?.button.label).toBe('<img src=x onerror=alert(1)>"Yes"');
		expect(page.text).not.toContain('<img');
		expect(page.text).toContain('>&#60;img src=x onerror=alert(1)&#62;&#34;Yes&#34;</button>');
		expect(page.headers).toMatchObject({
			'x-content-type-options': 'nosniff',
			'content-security-policy': expect.stringContaining("default-src 'none'"),
			'referrer-policy': 'no-referrer',
			'cache-control': 'no-store',
		});
	});

	it('a link signed for another wait of the node (same execution and node) is refused by the node itself', async () => {
		// The same question twice on purpose: Skip Repeats Within off.
		const again = { options: { skipRepeatsHours: 0 } };
		await harness.run(approvalWorkflow(again));
		const earlier = new URL(linksOf().Approve);
		sandbox.reset();
		const execution = await harness.run(approvalWorkflow(again));
		// What n8n would sign for another wait of this node in this execution: this execution's
		// address with the other wait's values.
		const other = new URL(linksOf().Approve);
		expect(other.search).not.toBe(earlier.search);
		other.search = earlier.search;
		const call = await harness.open(signedAgain(other));
		expect(call).toMatchObject({ status: 410, resumed: false });
		// A page for the person (a chat link's refusal is JSON for the trigger).
		expect(call.headers?.['content-type']).toBe('text/html; charset=utf-8');
		expect(pageForm(call.text)).toBeUndefined();
		expect(pageText(call.text)).toEqual([
			'This link is no longer valid',
			'It belongs to a question that was answered, replaced or ended. Nothing was recorded.',
		]);
		expect(harness.execution(execution.id).status).toBe('waiting');

		// Signed, but with no decision in it: refused, and the wait goes on.
		const undecided = new URL(linksOf().Approve);
		undecided.searchParams.set('approved', 'maybe');
		const refused = await harness.open(signedAgain(undecided));
		expect(refused).toMatchObject({ status: 400, resumed: false });
		expect(pageText(refused.text)).toEqual(['This link is not valid', 'Nothing was recorded.']);
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
		expect(new URL(link).searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/);

		const page = await harness.open(link);
		expect(page).toMatchObject({ status: 200, resumed: false });
		// A form: one field to type the answer in, and its button.
		const [field] = pageForm(page.text)?.fields ?? [];
		expect(pageForm(page.text)?.fields).toEqual([field]);
		const typed = (text: string) => ({ [field.name]: text });
		// Whoever only opens the link learns nothing of the question (a preview, a scanner, a forward).
		expect(page.text).not.toMatch(/date|delivery/i);
		expect(pageText(page.text)).toEqual([
			'Your answer',
			'Type your answer to the question in your WhatsApp message.',
			'Your answer',
			'Send',
		]);

		const empty = await harness.press(link, typed('   '));
		expect(empty).toMatchObject({ status: 400, resumed: false });
		expect(pageText(empty.text)).toContain('Please type an answer.');
		// The button pressed without the field (a client that leaves it out): no answer either.
		const without = await harness.press(link);
		expect(without).toMatchObject({ status: 400, resumed: false });
		expect(pageText(without.text)).toContain('Please type an answer.');
		// An answer posted without the button (a script, a scanner filling forms) records nothing.
		expect(await harness.open(link, { form: typed('Friday') })).toMatchObject({
			status: 400,
			resumed: false,
		});
		const sent = await harness.press(link, typed('Thursday <b>morning</b>'));
		expect(sent).toMatchObject({ status: 200, resumed: true });
		expect(pageText(sent.text)).toEqual([
			'Thank you',
			'Your answer was sent. You can close this page.',
		]);
		const [answer] = json((await harness.settled(execution.id)).output(RECEIVED_NAME));
		expect(answer).toMatchObject({
			text: 'Thursday <b>morning</b>',
			answered: true,
			respondedBy: PHONE,
			timedOut: false,
		});
		expect(answer).not.toHaveProperty('approved');
	});

	it('an answer as long as the page lets one type is taken whole; one character more is refused', async () => {
		const execution = await harness.run(
			approvalWorkflow({
				responseType: 'freeText',
				message: 'Which date suits you?',
				freeTextOptions: { buttonLabel: 'Answer' },
			}),
		);
		const [link] = Object.values(linksOf());
		const form = pageForm((await harness.open(link)).text);
		expect(form?.button.label).toBe('Answer');
		const [field] = form?.fields ?? [];
		expect(field.maxLength).toBeGreaterThan(0);
		const longest = 'y'.repeat(field.maxLength ?? 0);
		const refused = await harness.press(link, { [field.name]: `${longest}y` });
		expect(refused).toMatchObject({ status: 400, resumed: false });
		expect(refused.text).not.toMatch(/date/i);
		// What was typed comes back as far as the field takes it, with why it was refused.
		expect(pageText(refused.text)).toEqual(
			expect.arrayContaining([`The answer is longer than ${field.maxLength} characters.`, longest]),
		);
		expect(await harness.press(link, { [field.name]: longest })).toMatchObject({
			status: 200,
			resumed: true,
		});
		const [answer] = json((await harness.settled(execution.id)).output(RECEIVED_NAME));
		expect(answer.text).toBe(longest);
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
		const resumed = await harness.settled(execution.id);
		const out = json(resumed.output(RECEIVED_NAME));
		expect(out).toHaveLength(3);
		// Each item after the answer is paired with its own input item.
		expect(resumed.output('Node').map((item) => item.pairedItem)).toEqual([
			{ item: 0 },
			{ item: 1 },
			{ item: 2 },
		]);
		expect(out[0]).toMatchObject({
			approved: null,
			answered: false,
			phone: PHONE,
			timedOut: false,
		});
		expect(out[0]).toMatchObject({ respondedBy: null, respondedAt: null });
		// The failed send stays its error item: it was no question.
		expect(out[1]).toMatchObject({ error: expect.stringContaining('Phone Number') });
		expect(out[1]).not.toHaveProperty('answered');
		expect(out[1]).not.toHaveProperty('timedOut');
		expect(out[2]).toMatchObject({
			approved: true,
			answered: true,
			respondedBy: OTHER_PHONE,
			phone: OTHER_PHONE,
		});
	});

	it("the eleventh item's link answers the eleventh question", async () => {
		const items = Array.from({ length: 11 }, (_, n) => ({ n }));
		const execution = await harness.run(
			approvalWorkflow(
				{
					message: '={{ "Question " + $json.n }}',
					options: { messageDelay: { range: { minSeconds: 0, maxSeconds: 0 } } },
				},
				items,
			),
		);
		expect(sandbox.ledger()).toHaveLength(11);
		await harness.press(linksOf(10).Approve);
		const out = json((await harness.settled(execution.id)).output(RECEIVED_NAME));
		expect(out.map((item) => item.answered)).toEqual([...Array(10).fill(false), true]);
		expect(out[10]).toMatchObject({ approved: true, question: 'Question 10' });
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
		const button = pageForm((await harness.open(linksOf().Approve)).text)?.button;
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
		expect(button).toBeDefined();
		const pressed = { [button?.name ?? '']: button?.value ?? '' };
		expect((await harness.open(linksOf().Approve, { form: pressed })).resumed).toBe(false);
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
		// Mapped as a number: milliseconds since 1970, as n8n's own date fields read it.
		const mapped = await harness.run(
			approvalWorkflow({
				limitWaitTime: true,
				limitType: 'atSpecifiedTime',
				maxDateAndTime: "={{ new Date('2031-05-01T10:00:00.000Z').getTime() }}",
				message: 'Another question, so not a repeat',
			}),
		);
		expect(mapped.run.data.resultData.error).toBeUndefined();
		expect(mapped.waitTill?.toISOString()).toBe('2031-05-01T10:00:00.000Z');
		sandbox.reset();
		const bad = await harness.run(
			approvalWorkflow({
				limitWaitTime: true,
				limitType: 'atSpecifiedTime',
				maxDateAndTime: 'next tuesday',
			}),
		);
		expect(bad.status).toBe('error');
		expect(bad.run.data.resultData.error).toMatchObject({
			message: expect.stringContaining('Field "Max Date and Time" is not a date'),
			description: expect.stringContaining('Pick a date and time'),
		});
		expect(sandbox.ledger()).toHaveLength(0);
	});

	it('Limit Wait Time of 0 ends the wait at once; a negative amount is refused before anything is sent', async () => {
		const limit = (resumeAmount: number) =>
			approvalWorkflow({
				limitWaitTime: true,
				limitType: 'afterTimeInterval',
				resumeAmount,
				resumeUnit: 'minutes',
			});
		const before = Date.now();
		const now = await harness.run(limit(0));
		expect(now.status).toBe('waiting');
		expect(now.waitTill!.getTime() - before).toBeLessThan(60_000);
		expect(now.waitTill!.getTime()).toBeGreaterThanOrEqual(before);
		sandbox.reset();
		const bad = await harness.run(limit(-1));
		expect(bad.status).toBe('error');
		expect(bad.run.data.resultData.error?.message).toBe(
			'Field "Amount" must be a number of minutes of at least 0, not -1',
		);
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
			// The round in the report, should one send.
			expect({ run, sent: sandbox.ledger().length }).toEqual({ run, sent: 1 });
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
		expect(run.run.data.resultData.error?.description).toContain(
			'Only one of two equal questions can be answered.',
		);
		expect(sandbox.ledger()).toEqual([]);
	});

	it('one Idempotency Key for two different questions is refused as the key, not as a repeat', async () => {
		const question = { message: '={{ $json.question }}', options: { idempotencyKey: 'approval' } };
		const rows = [{ question: 'Approve invoice 7?' }, { question: 'Approve invoice 8?' }];
		const run = await harness.run(approvalWorkflow(question, rows, { typeVersion: 1 }));
		expect(run.status).toBe('error');
		expect(run.run.data.resultData.error?.message).toMatch(
			/^Field "Options → Idempotency Key" is "approval" for every item, and item 0 sends another message to the same number.*\[item 1\]$/,
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

	it('after a restart, a repeated question names no execution: the store keeps none', async () => {
		await harness.run(approvalWorkflow({}, [{}], { typeVersion: 1 }));
		MemoryTable.forgetAll();
		const again = await harness.run(approvalWorkflow({}, [{}], { typeVersion: 1 }));
		const { message, description } = again.run.data.resultData.error as {
			message: string;
			description: string;
		};
		expect(message).toMatch(
			/^Not asked again: the same question was sent by an earlier execution, not before \S+Z \(n8n's database holds it\)/,
		);
		expect(description).toContain(
			"The person's answer (or the wait's time limit) resumes an earlier execution, the one that asked: see it for the answer.",
		);
		expect(sandbox.ledger()).toHaveLength(1);
	});

	it("when n8n's store cannot be used, no question is asked, and the error names every item", async () => {
		processedItems.failing = [new Error('database is locked'), new Error('database is locked')];
		const rows = [{ question: 'Approve invoice 11?' }, { question: 'Approve invoice 12?' }];
		const run = await harness.run(
			approvalWorkflow({ message: '={{ $json.question }}' }, rows, { typeVersion: 1 }),
		);
		expect(sandbox.ledger()).toEqual([]);
		const { message, description } = run.run.data.resultData.error as {
			message: string;
			description: string;
		};
		expect(message).toMatch(
			/^Not sent: Skip Repeats Within could not check whether this message was already sent: .*database is locked \[item 0\]$/,
		);
		expect(description).toContain(
			"Failed: items 0–1. Nothing was sent: every item's input is checked before the first request.",
		);
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
