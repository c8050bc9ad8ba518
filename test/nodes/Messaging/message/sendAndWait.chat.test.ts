/**
 * Send and Wait with Response By → Reply in the Chat, through n8n's real engine: the question waits
 * (`test/harness/waitingEngine.ts`), the sandbox posts the person's WhatsApp reply to the account's
 * active Messaging Trigger (`test/harness/triggerEngine.ts`), and the trigger resumes the waiting
 * execution over HTTP through n8n's signed waiting-webhook route.
 */
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { RECEIVED_NAME, sandboxCredential } from '../../../harness/engine';
import { WaitingHarness, askWorkflow, signedAgain } from '../../../harness/waitingEngine';
import {
	TRIGGER_CUSTOMER,
	useTrigger,
	useTriggerHarnesses,
} from '../../../harness/messagingTriggerNode';
import { useSandbox } from '../../../harness/useSandbox';
import { DEFAULT_ACCOUNTS } from '../../../../sandbox/state';
import { readChatWait } from '../../../../nodes/shared/chatWaits';
import { parseCredentials } from '../../../../nodes/shared/transport';

// A second account of the same gateway, with a trigger of its own in one test.
const SECOND = { clientId: 'second-client', clientSecret: 'second-secret' };
const sandbox = useSandbox({
	accounts: [
		...DEFAULT_ACCOUNTS,
		{ ...SECOND, status: 'authenticated', whatsappNumber: '6281100000009' },
	],
});
const trigger = useTrigger(sandbox);
const otherTriggers = useTriggerHarnesses(sandbox);
let waiting: WaitingHarness;
beforeAll(async () => {
	waiting = await WaitingHarness.start(sandboxCredential(sandbox.url));
});
afterAll(async () => await waiting.close());
beforeEach(async () => await trigger.activate());

const QUESTION = 'Send the March price list to 1,200 customers?';
const OTHER_PERSON = '6281300000003';

/** Items → Messaging (Send and Wait, Reply in the Chat) → Received. */
const chatWorkflow = (parameters: INodeParameters = {}) =>
	askWorkflow({
		phone: `+${TRIGGER_CUSTOMER}`,
		message: QUESTION,
		responseBy: 'chatReply',
		...parameters,
	});

const json = (items: INodeExecutionData[]) => items.map((item) => item.json);

async function ask(parameters: INodeParameters = {}) {
	const execution = await waiting.run(chatWorkflow(parameters));
	expect(execution.status).toBe('waiting');
	return execution;
}

async function reply(message: string, extra: { sender?: string; uuid?: string } = {}) {
	return await trigger.deliver({ sender: TRIGGER_CUSTOMER, message, ...extra });
}

/** What the node after the question received, once the resumed execution ended. */
async function answerOf(id: string): Promise<IDataObject> {
	const done = await waiting.settled(id);
	expect(done.status).toBe('success');
	return json(done.output(RECEIVED_NAME))[0];
}

const reasks = () =>
	sandbox
		.ledger()
		.filter((entry) => entry.phone === TRIGGER_CUSTOMER && /^Please/.test(entry.text ?? ''));

describe('Send and Wait: Reply in the Chat, approval', () => {
	it('asks with one reply line and no links; "1" resumes the execution, not the trigger\'s workflow', async () => {
		const execution = await ask();
		const [question] = sandbox.ledger();
		expect(question).toMatchObject({ kind: 'text', phone: TRIGGER_CUSTOMER });
		expect(question.text).toBe(`${QUESTION}\n\nReply 1 to Approve, 2 to Decline`);

		const { json: answer, executions } = await reply('1', { uuid: 'reply-uuid-1' });
		expect(answer).toEqual({ received: true, resumed: execution.id, messageId: 'reply-uuid-1' });
		expect(executions).toHaveLength(0);
		expect(await answerOf(execution.id)).toMatchObject({
			approved: true,
			answered: true,
			answeredBy: 'chat',
			respondedBy: TRIGGER_CUSTOMER,
			respondedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
			replyMessageId: 'reply-uuid-1',
			timedOut: false,
			phone: TRIGGER_CUSTOMER,
		});
		// Nothing but the question was sent to the person.
		expect(sandbox.ledger()).toHaveLength(1);
	});

	it.each([
		['2', false],
		['yes', true],
		['No!', false],
		['  YES. ', true],
		['approve', true],
		['Decline!', false],
	])('the reply %j answers approved: %s', async (text, approved) => {
		const execution = await ask();
		expect((await reply(text)).json.resumed).toBe(execution.id);
		expect(await answerOf(execution.id)).toMatchObject({ approved, answeredBy: 'chat' });
	});

	it('own labels are the words to reply; "Approve Only" offers 1 only and "2" does not decline', async () => {
		let execution = await ask({ approvalOptions: { approveLabel: 'Send', declineLabel: 'Hold' } });
		expect(sandbox.ledger()[0].text).toBe(`${QUESTION}\n\nReply 1 to Send, 2 to Hold`);
		await reply('hold.');
		expect(await answerOf(execution.id)).toMatchObject({ approved: false });

		await trigger.activate();
		execution = await ask({ approvalOptions: { approvalType: 'single', approveLabel: 'Send' } });
		expect(sandbox.ledger()[0].text).toBe(`${QUESTION}\n\nReply 1 to Send`);
		const declined = await reply('2');
		expect(declined.json.resumed).toBeUndefined();
		expect(reasks().map((entry) => entry.text)).toEqual(['Please reply 1']);
		expect(waiting.execution(execution.id).status).toBe('waiting');
		await reply('send');
		expect(await answerOf(execution.id)).toMatchObject({ approved: true });
	});

	it("an invalid reply is asked again once, starts the trigger's workflow, and the wait goes on", async () => {
		const execution = await ask();
		const first = await reply('maybe later');
		expect(first.json.resumed).toBeUndefined();
		expect(first.executions).toHaveLength(1);
		expect(json(first.executions[0].receivedItems)[0]).toMatchObject({ text: 'maybe later' });
		expect(reasks().map((entry) => entry.text)).toEqual(['Please reply 1 or 2']);

		const second = await reply('what?');
		expect(second.executions).toHaveLength(1);
		// Still exactly one re-ask.
		expect(reasks()).toHaveLength(1);
		expect(waiting.execution(execution.id).status).toBe('waiting');

		expect((await reply('1')).json.resumed).toBe(execution.id);
		expect(await answerOf(execution.id)).toMatchObject({ approved: true });
	});

	it("another person's message is no answer: it starts the trigger's workflow", async () => {
		const execution = await ask();
		const other = await reply('1', { sender: OTHER_PERSON });
		expect(other.json.resumed).toBeUndefined();
		expect(other.executions).toHaveLength(1);
		expect(json(other.executions[0].receivedItems)[0]).toMatchObject({ sender: OTHER_PERSON });
		expect(waiting.execution(execution.id).status).toBe('waiting');
		expect(reasks()).toHaveLength(0);
		expect((await reply('1')).json.resumed).toBe(execution.id);
	});

	it('"1" written by the person in a group, or as a picture\'s caption, is no answer', async () => {
		const execution = await ask();
		const inGroup = await trigger.deliver({
			sender: '120363025246125486@g.us',
			author: `${TRIGGER_CUSTOMER}@c.us`,
			message: '1',
		});
		const picture = await trigger.deliver({
			sender: TRIGGER_CUSTOMER,
			type: 'image',
			message: '1',
			fileBase64: Buffer.from('not really a picture').toString('base64'),
			mimeType: 'image/png',
		});
		for (const other of [inGroup, picture]) {
			expect(other.json.resumed).toBeUndefined();
			expect(other.executions).toHaveLength(1);
		}
		expect(waiting.execution(execution.id).status).toBe('waiting');
		expect(reasks()).toHaveLength(0);
		expect((await reply('1')).json.resumed).toBe(execution.id);
	});

	it('the person\'s "1" to another account of the gateway answers nothing of this account', async () => {
		const execution = await ask();
		const second = await otherTriggers(
			{ accountNumber: '6281100000009' },
			{ credentials: sandboxCredential(sandbox.url, SECOND) },
		);
		await second.activate();
		const toSecond = await trigger.deliver({
			clientId: SECOND.clientId,
			sender: TRIGGER_CUSTOMER,
			message: '1',
		});
		await second.settled();
		expect(toSecond.json.resumed).toBeUndefined();
		expect(second.executions).toHaveLength(1);
		expect(waiting.execution(execution.id).status).toBe('waiting');
		expect((await reply('1')).json.resumed).toBe(execution.id);
	});

	it("the wait's limit passes without a reply; a later reply starts the trigger's workflow", async () => {
		const execution = await ask({ limitWaitTime: true, resumeAmount: 1, resumeUnit: 'hours' });
		const ended = await waiting.timeOut(execution.id);
		expect(ended.status).toBe('success');
		expect(json(ended.output(RECEIVED_NAME))[0]).toMatchObject({ approved: null, timedOut: true });

		const late = await reply('1');
		expect(late.json.resumed).toBeUndefined();
		expect(late.executions).toHaveLength(1);
		expect(json(late.executions[0].receivedItems)[0]).toMatchObject({ text: '1' });
	});

	it('two questions to one person: the newest is answered; the older waits for its limit', async () => {
		const older = await ask({ message: 'First question?' });
		const newer = await ask({ message: 'Second question?' });
		expect((await reply('2')).json.resumed).toBe(newer.id);
		expect(await answerOf(newer.id)).toMatchObject({
			approved: false,
			question: 'Second question?',
		});

		const again = await reply('1');
		expect(again.json.resumed).toBeUndefined();
		expect(again.executions).toHaveLength(1);
		expect(waiting.execution(older.id).status).toBe('waiting');
	});

	it('a repeated delivery of the reply resumes nothing twice', async () => {
		const first = await ask();
		expect((await reply('1', { uuid: 'same-uuid' })).json.resumed).toBe(first.id);
		await answerOf(first.id);

		const second = await ask({ message: 'And the April list?' });
		const repeated = await reply('1', { uuid: 'same-uuid' });
		expect(repeated.json).toMatchObject({
			ignored: 'repeated delivery of a message already received',
		});
		expect(repeated.executions).toHaveLength(0);
		expect(waiting.execution(second.id).status).toBe('waiting');
	});

	it('with "Start Workflow for Replies Too" the reply resumes and starts the workflow', async () => {
		await trigger.activate({ options: { startWorkflowForReplies: true } });
		const execution = await ask();
		const answered = await reply('yes');
		expect(answered.json.received).toBe(true);
		expect(answered.executions).toHaveLength(1);
		expect(json(answered.executions[0].receivedItems)[0]).toMatchObject({ text: 'yes' });
		expect(await answerOf(execution.id)).toMatchObject({ approved: true });
	});

	it('a forged delivery (no secret) is refused and resumes nothing', async () => {
		const execution = await ask();
		const forged = await fetch(trigger.harness.productionUrl, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ params: { sender: TRIGGER_CUSTOMER, message: '1', type: 'text' } }),
		});
		expect(forged.status).toBe(401);
		expect(waiting.execution(execution.id).status).toBe('waiting');
		expect((await reply('1')).json.resumed).toBe(execution.id);
	});

	it('with "Also Send Answer Links" a link answers; a reply afterwards starts the workflow', async () => {
		const execution = await ask({ alsoSendLinks: true });
		const text = sandbox.ledger()[0].text ?? '';
		expect(text).toMatch(
			/^Send the March price list to 1,200 customers\?\n\nReply 1 to Approve, 2 to Decline\n\nApprove: \S+\nDecline: \S+$/,
		);
		// The trigger's own link is none of the person's.
		expect(text).not.toContain('via=chat');
		const decline = /^Decline: (\S+)$/m.exec(text)?.[1] ?? '';
		expect((await waiting.press(decline)).resumed).toBe(true);
		expect(await answerOf(execution.id)).toMatchObject({ approved: false, answeredBy: 'link' });

		const late = await reply('1');
		expect(late.json.resumed).toBeUndefined();
		expect(late.executions).toHaveLength(1);
	});
});

describe("Send and Wait: Reply in the Chat, the trigger's resume link", () => {
	const chatWait = async () =>
		await readChatWait(
			parseCredentials(sandboxCredential(sandbox.url).messagingRateApi),
			TRIGGER_CUSTOMER,
		);
	/** The link the account's trigger posts a reply to: never sent to the person. */
	const chatLink = async () => (await chatWait())?.url ?? '';
	const post = async (url: string, body: unknown) =>
		await fetch(url, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(body),
		});
	const JSON_HEADERS = {
		'content-type': 'application/json; charset=utf-8',
		'cache-control': 'no-store',
	};
	const headersOf = (response: Response) => Object.fromEntries(response.headers);

	/** Each body is refused with the same JSON, and the execution waits on. */
	async function expectRefused(url: string, executionId: string, bodies: unknown[]) {
		for (const body of bodies) {
			const refused = await post(url, body);
			expect({ body, status: refused.status }).toEqual({ body, status: 400 });
			expect(headersOf(refused)).toMatchObject(JSON_HEADERS);
			expect(await refused.json()).toEqual({
				resumed: false,
				error: 'Not an answer: nothing was recorded',
			});
		}
		expect(waiting.execution(executionId).status).toBe('waiting');
	}

	it('takes only a JSON answer posted to it; a wrong one is refused and the wait goes on', async () => {
		const execution = await ask();
		const url = await chatLink();
		expect(new URL(url).searchParams.get('via')).toBe('chat');
		const at = new Date().toISOString();
		await expectRefused(url, execution.id, [
			{ approved: 'true', at },
			{ text: 'yes', at },
			{ approved: true },
			// The reply's time is a date in text, not a word or a number.
			{ approved: true, at: 'soon' },
			{ approved: true, at: 12345 },
		]);
		expect((await fetch(url)).status).toBe(400);
		expect(waiting.execution(execution.id).status).toBe('waiting');

		const answer = { approved: false, at, from: TRIGGER_CUSTOMER, messageId: 'm-1' };
		const taken = await post(url, answer);
		expect(taken.status).toBe(200);
		expect(headersOf(taken)).toMatchObject(JSON_HEADERS);
		expect(await taken.json()).toEqual({ resumed: true });
		expect(await answerOf(execution.id)).toMatchObject({
			approved: false,
			answeredBy: 'chat',
			replyMessageId: 'm-1',
			respondedAt: at,
		});
		// Posted again: the execution has ended, and n8n answers for it without the node.
		const again = await post(url, answer);
		expect(again.headers.get('content-type')).toMatch(/^text\/html/);
		expect(await again.text()).toContain('No action required');
	});

	it('free text: the text posted, trimmed, of at most 4000 characters; anything else is refused', async () => {
		const execution = await ask({ responseType: 'freeText' });
		const url = await chatLink();
		const at = new Date().toISOString();
		await expectRefused(url, execution.id, [
			{ text: 5, at },
			{ text: '   ', at },
			{ text: 'x'.repeat(4001), at },
		]);
		expect((await post(url, { text: '  ok  ', at })).status).toBe(200);
		expect(await answerOf(execution.id)).toMatchObject({ text: 'ok', answeredBy: 'chat' });
	});

	it("keeps the reply's sender and id only as text, at most 64 characters each", async () => {
		const execution = await ask();
		const messageId = `${'a'.repeat(64)}${'b'.repeat(36)}`;
		const at = new Date().toISOString();
		const taken = await post(await chatLink(), { approved: true, at, from: 12, messageId });
		expect(taken.status).toBe(200);
		expect(await answerOf(execution.id)).toMatchObject({
			approved: true,
			respondedBy: null,
			replyMessageId: 'a'.repeat(64),
		});
	});

	it("a link of the node's earlier question, signed for this execution, is refused with JSON", async () => {
		// The same question twice on purpose: Skip Repeats Within off.
		const again = { options: { skipRepeatsHours: 0 } };
		await ask(again);
		const earlier = new URL(await chatLink());
		const execution = await ask(again);
		// What n8n would sign for another wait of this node in this execution: this execution's
		// address with the earlier wait's values.
		const other = new URL(await chatLink());
		expect(other.search).not.toBe(earlier.search);
		other.search = earlier.search;
		const refused = await post(signedAgain(other), {
			approved: true,
			at: new Date().toISOString(),
		});
		expect(refused.status).toBe(410);
		expect(headersOf(refused)).toMatchObject(JSON_HEADERS);
		expect(await refused.json()).toEqual({
			resumed: false,
			error: 'It belongs to a question that was answered, replaced or ended. Nothing was recorded.',
		});
		expect(waiting.execution(execution.id).status).toBe('waiting');
	});

	it('with Response By links, no chat wait is kept: a reply "1" starts the trigger\'s workflow', async () => {
		const execution = await waiting.run(
			askWorkflow({ phone: `+${TRIGGER_CUSTOMER}`, message: QUESTION }),
		);
		expect(execution.status).toBe('waiting');
		expect(await chatWait()).toBeUndefined();
		const late = await reply('1');
		expect(late.json.resumed).toBeUndefined();
		expect(late.executions).toHaveLength(1);
		expect(waiting.execution(execution.id).status).toBe('waiting');
	});
});

describe('Send and Wait: Reply in the Chat, no trigger of this n8n', () => {
	const hintsOf = (execution: Awaited<ReturnType<typeof ask>>) =>
		execution.run.data.resultData.runData.Node[0].hints ?? [];
	const NO_TRIGGER = /^No active Messaging Trigger of this n8n receives this account's messages/;

	it('with the trigger active: no warning', async () => {
		expect(hintsOf(await ask())).toEqual([]);
	});

	it("the account's webhook empty or elsewhere: the question waits, with a warning", async () => {
		await trigger.harness.deactivate();
		expect(sandbox.accounts()[0].whatsappWebhook ?? '').toBe('');
		const unregistered = await ask();
		expect(hintsOf(unregistered)).toEqual([
			expect.objectContaining({ type: 'warning', message: expect.stringMatching(NO_TRIGGER) }),
		]);
		expect(hintsOf(unregistered)[0].message).toContain('its webhook is empty');

		sandbox.setWebhook(undefined, 'https://automation.example.com/webhook/abc/webhook');
		const elsewhere = await ask({ message: 'Another question?' });
		expect(hintsOf(elsewhere)[0].message).toMatch(/its webhook is elsewhere/);
	});

	it('Check Account failing: the question is sent and waits, with no warning', async () => {
		sandbox.addFaults([{ kind: 'rpcError', match: { rpcMethod: 'check' }, probability: 1 }]);
		const execution = await ask();
		const checks = sandbox.requests().filter((request) => request.params?.method === 'check');
		expect(checks.length).toBeGreaterThan(0);
		expect(sandbox.ledger()).toHaveLength(1);
		expect(hintsOf(execution)).toEqual([]);
		expect((await reply('1')).json.resumed).toBe(execution.id);
	});
});

describe('Send and Wait: Reply in the Chat, free text', () => {
	it('any text answers; it is never re-asked', async () => {
		const execution = await ask({ responseType: 'freeText' });
		expect(sandbox.ledger()[0].text).toBe(`${QUESTION}\n\nReply to this message with your answer`);
		const answered = await reply('  Only the wholesale list, please.  ');
		expect(answered.json.resumed).toBe(execution.id);
		expect(answered.executions).toHaveLength(0);
		expect(await answerOf(execution.id)).toMatchObject({
			text: 'Only the wholesale list, please.',
			answered: true,
			answeredBy: 'chat',
			respondedBy: TRIGGER_CUSTOMER,
		});
		expect(reasks()).toHaveLength(0);
	});

	it('a reply longer than 4000 characters answers nothing and starts the workflow', async () => {
		const execution = await ask({ responseType: 'freeText' });
		const long = await reply('x'.repeat(4001));
		expect(long.json.resumed).toBeUndefined();
		expect(long.executions).toHaveLength(1);
		expect(reasks()).toHaveLength(0);
		expect((await reply('x'.repeat(4000))).json.resumed).toBe(execution.id);
		expect(await answerOf(execution.id)).toMatchObject({ text: 'x'.repeat(4000) });
	});
});

describe("Send and Wait: Reply in the Chat, on the sandbox's phone page", () => {
	it('shows the question with Reply as the person asked; what its box posts then answers it', async () => {
		const execution = await ask();
		const page = await (await fetch(`${sandbox.url}/__sandbox/phone`)).text();
		const line = /<div class="msg sent"[^>]*>.*?<\/div>/s.exec(page)?.[0] ?? '';
		expect(line).toContain('Reply 1 to Approve, 2 to Decline');
		expect(line).toContain(
			`<button data-reply-as="${TRIGGER_CUSTOMER}" data-client="demo-client">`,
		);

		// The box, filled in by Reply as: the person's number as a phone shows it, and "1" typed.
		const posted = await fetch(`${sandbox.url}/__sandbox/incoming`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({
				clientId: 'demo-client',
				sender: `+${TRIGGER_CUSTOMER}`,
				message: '1',
			}),
		});
		expect(posted.status).toBe(200);
		expect(await answerOf(execution.id)).toMatchObject({ approved: true, answeredBy: 'chat' });
	});
});
