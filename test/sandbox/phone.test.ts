/**
 * The phone page (`/__sandbox/phone`) as a person uses it, over real HTTP: who wrote a message,
 * what became of it (ignored as a repeat, or no workflow listening), its Deliver again button,
 * and which links become answer buttons. The workflows behind it are real: a Messaging Trigger
 * (test/harness/triggerEngine.ts) and a Send and Wait (test/harness/waitingEngine.ts).
 */
import { request } from 'undici';

import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../harness/engine';
import { PHONE_PASTED } from '../harness/messagingNode';
import { useTrigger } from '../harness/messagingTriggerNode';
import { useSandbox } from '../harness/useSandbox';
import { WaitingHarness } from '../harness/waitingEngine';

const sandbox = useSandbox();
const trigger = useTrigger(sandbox);
let waiting: WaitingHarness;
beforeAll(async () => {
	waiting = await WaitingHarness.start(sandboxCredential(sandbox.url));
});
afterAll(async () => await waiting.close());

async function control(method: 'GET' | 'POST', path: string, body?: unknown) {
	const response = await request(`${sandbox.url}/__sandbox/${path}`, {
		method,
		headers: body === undefined ? {} : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	return { status: response.statusCode, text: await response.body.text() };
}

const phonePage = async () => (await control('GET', 'phone')).text;

/** What the page's form posts when a person writes to demo-client. */
const write = async (sender: string, message: string) =>
	await control('POST', 'incoming', { clientId: 'demo-client', sender, message });

/** The chat's received lines, oldest first. */
const receivedLines = (page: string) =>
	[...page.matchAll(/<div class="msg received">.*?<\/div>/gs)].map((match) => match[0]);

const unescape = (text: string) =>
	text.replace(
		/&(amp|lt|gt|quot|#39);/g,
		(_, name: string) =>
			({ 'amp': '&', 'lt': '<', 'gt': '>', 'quot': '"', '#39': "'" })[name] as string,
	);

describe('the phone page: a message a person writes', () => {
	it('shows the sender once, as typed: +62 812-8877-6713, never ++62', async () => {
		await trigger.activate();
		expect((await write('+62 813-0000-0002', 'Halo')).status).toBe(200);
		expect((await write('6281300000003', 'Halo lagi')).status).toBe(200);
		const [typed, digits] = receivedLines(await phonePage());
		expect(typed).toMatch(/<small>from \+62 813-0000-0002 · /);
		expect(digits).toMatch(/<small>from \+6281300000003 · /);
		expect(await phonePage()).not.toContain('++');
		// What the workflow received: the number as the gateway gives it.
		expect(trigger.harness.executions.map((run) => run.triggerItems[0].json.sender)).toEqual([
			'6281300000002',
			'6281300000003',
		]);
	});

	it('Deliver again posts the same event (the same uuid): the trigger skips it, and the chat says so', async () => {
		await trigger.activate();
		await write('6281300000002', 'Is my order ready?');
		const page = await phonePage();
		const button =
			/<button data-redeliver data-client="([^"]*)" data-sender="([^"]*)" data-message="([^"]*)" data-uuid="([^"]*)">Deliver again<\/button>/.exec(
				receivedLines(page)[0],
			);
		expect(button).not.toBeNull();
		const [, client, sender, message, uuid] = button!.map(unescape);
		expect(uuid).toBe(trigger.harness.executions[0].triggerItems[0].json.messageId);

		// What the page's script posts for the button.
		expect(page).toContain("post('incoming', { clientId: client, sender, message, uuid })");
		const again = await control('POST', 'incoming', { clientId: client, sender, message, uuid });
		expect(JSON.parse(again.text)).toMatchObject({ status: 200 });
		await trigger.harness.settled();
		expect(trigger.harness.executions).toHaveLength(1);

		const [first, second] = receivedLines(await phonePage());
		expect(first).not.toContain('ignored');
		expect(second).toContain('Is my order ready?');
		expect(second).toContain(
			'<em class="ignored">ignored by the workflow: repeated delivery of a message already received</em>',
		);
	});

	it('when test listening has ended, says what the person can do (not the API call)', async () => {
		await trigger.activate();
		await trigger.harness.deactivate();
		await trigger.harness.listenForTestEvent();
		const listened = sandbox.accounts()[0].whatsappWebhook ?? '';
		expect(listened.startsWith(`${trigger.harness.testUrl}?token=`)).toBe(true);
		await trigger.harness.stopListeningForTestEvent();
		expect(sandbox.accounts()[0].whatsappWebhook).toBeUndefined();

		const refused = await write('6281300000002', 'Anyone there?');
		// The control API keeps the precise wording for programs.
		expect(refused.status).toBe(400);
		expect(JSON.parse(refused.text).error).toMatch(
			/^Account demo-client has no registered webhook/,
		);
		let page = await phonePage();
		expect(receivedLines(page)[0]).toContain(
			'reached no workflow: the account has no webhook: publish the workflow, or press Listen for test event again (a test listens for one message)',
		);
		expect(page).not.toContain('Update Account');

		// The gateway still points at the test URL, which n8n no longer serves: 404.
		sandbox.setWebhook('demo-client', listened);
		expect(JSON.parse((await write('6281300000002', 'Hello?')).text)).toMatchObject({
			status: 404,
		});
		page = await phonePage();
		expect(receivedLines(page)[1]).toContain(
			'reached no workflow: listening stopped (the webhook answered 404): publish the workflow, or press Listen for test event again',
		);
		// The form says so too instead of "delivered (the webhook answered 404)".
		expect(page).toContain('const delivered = answer.ok && result.status < 300;');
		expect(page).toContain("'not delivered: the chat says why'");
	});
});

describe('the phone page: answer buttons', () => {
	it("draws the account's own Send and Wait links as buttons, and a look-alike as a plain link", async () => {
		await trigger.activate();
		const stranger = 'Approve: https://evil.example/webhook-waiting/1/3?approved=true';
		// Even one shaped like a signed answer link: people's messages never hold buttons.
		const signedLookAlike = `Decline: https://evil.example/webhook-waiting/1/3?approved=false&item=0&w=0123456789ab&signature=${'a'.repeat(64)}`;
		await write('6281300000002', `Hi!\n${stranger}\n${signedLookAlike}`);
		// A Send Text whose line reads like an answer link is not a question either.
		const sent = await runWorkflow(
			singleNodeWorkflow('messaging', {
				resource: 'message',
				operation: 'sendText',
				phone: PHONE_PASTED,
				text: 'Approve: https://n8n.example/webhook-waiting/1/3?approved=true',
			}),
			sandboxCredential(sandbox.url),
		);
		expect(sent.error).toBeUndefined();
		const asked = await waiting.run(
			singleNodeWorkflow('messaging', {
				resource: 'message',
				operation: 'sendAndWait',
				phone: PHONE_PASTED,
				message: 'Ship order 1042 today?',
			}),
		);
		expect(asked.status).toBe('waiting');
		const question = sandbox.ledger()[1].text ?? '';

		const page = await phonePage();
		const buttons = [
			...page.matchAll(/<a class="answer" href="([^"]+)" target="_blank">([^<]+)<\/a>/g),
		].map(([, href, label]) => `${label}: ${unescape(href)}`);
		expect(buttons).toEqual(question.split('\n').slice(2));
		expect(buttons).toEqual([
			expect.stringMatching(
				/^Approve: http:\/\/127\.0\.0\.1:\d+\/webhook-waiting\/wait-\d+\/3\?approved=true&item=0&w=[0-9a-f]{12}&signature=[0-9a-f]{64}$/,
			),
			expect.stringMatching(/^Decline: .*approved=false/),
		]);
		const [received] = receivedLines(page);
		expect(received).toContain(
			'Hi!<br>Approve: <a href="https://evil.example/webhook-waiting/1/3?approved=true" target="_blank">https://evil.example/webhook-waiting/1/3?approved=true</a><br>Decline: <a href="https://evil.example/',
		);
		expect(received).not.toContain('class="answer"');
		expect(page).toContain(
			'Approve: <a href="https://n8n.example/webhook-waiting/1/3?approved=true" target="_blank">',
		);
	});
});
