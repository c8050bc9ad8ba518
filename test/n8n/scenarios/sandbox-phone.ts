/**
 * The sandbox's phone page in Chromium, against `n8n start` (n8n 2.x: playwright-core comes with
 * that install): a message written on the page reaches a published Messaging Trigger and starts
 * an execution with its text; a Send and Wait question shows on the page with its answer buttons,
 * and following the Approve button (then the button of n8n's answer page) resumes the execution
 * with `approved: true`. Screenshot: docs/.images/sandbox-phone.png (with --doc-images).
 */
import { docImage, withEditor } from '../editor';
import {
	NODE_TYPES,
	getExecution,
	log,
	pressAnswerButton,
	waitForExecution,
	type ScenarioContext,
	type WorkflowJson,
} from '../lib';

const TRIGGER_ID = 'E2ePhoneTrigger';
const ASK_ID = 'E2ePhoneAsk';
const ASK_PATH = 'phone-page-approval';

function triggerWorkflow(t: ScenarioContext): WorkflowJson {
	return {
		id: TRIGGER_ID,
		name: 'E2E: a message written on the phone page',
		active: false,
		nodes: [
			{
				id: '0e2e7a16-0000-4000-8000-0000000000a1',
				name: 'On Message',
				type: NODE_TYPES.messagingTrigger,
				typeVersion: 1,
				position: [0, 0],
				webhookId: '5e2e7a16-4b1d-4c3e-9f00-0000000000a1',
				parameters: {
					accountNumber: t.account.number,
					verification: 'querySecret',
					queryParameterName: 'token',
					sharedSecret: 'e2e-phone-secret-91b2',
					options: {},
				},
				credentials: { messagingRateApi: { ...t.credential } },
			},
		],
		connections: {},
		settings: { executionOrder: 'v1' },
	} as unknown as WorkflowJson;
}

function askWorkflow(t: ScenarioContext): WorkflowJson {
	return {
		id: ASK_ID,
		name: 'E2E: a question answered on the phone page',
		active: false,
		nodes: [
			{
				id: '0e2e7a16-0000-4000-8000-0000000000a2',
				name: 'Request',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: '5e2e7a16-4b1d-4c3e-9f00-0000000000a2',
				parameters: { httpMethod: 'POST', path: ASK_PATH, responseMode: 'onReceived', options: {} },
			},
			{
				id: '0e2e7a16-0000-4000-8000-0000000000a3',
				name: 'Ask',
				type: NODE_TYPES.messaging,
				typeVersion: 1,
				position: [240, 0],
				parameters: {
					resource: 'message',
					operation: 'sendAndWait',
					phone: t.account.number,
					message: 'Ship order 1042 to Bandung today?',
					responseType: 'approval',
					approvalOptions: {},
				},
				credentials: { messagingRateApi: { ...t.credential } },
			},
		],
		connections: { Request: { main: [[{ node: 'Ask', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	} as unknown as WorkflowJson;
}

export async function sandboxPhonePage(t: ScenarioContext): Promise<void> {
	if (!t.options.editor || t.target.major < 2) {
		log(`phone page scenario not run for ${t.target.label} (Chromium comes with the 2.x install)`);
		return;
	}
	const { report, server: srv, sandbox: sb } = t;
	const phoneUrl = `${sb.url}/__sandbox/phone`;
	const triggerId = await t.importWorkflow(triggerWorkflow(t));
	const askId = await t.importWorkflow(askWorkflow(t));
	const startedAt = new Date(Date.now() - 1000);
	await report.timed('publish the Messaging Trigger workflow', () =>
		srv.activateWorkflow(triggerId),
	);
	await srv.activateWorkflow(askId);
	try {
		const written = 'Hello from the phone page';
		const delivered = await report.timed('phone page: write to the account', () =>
			withEditor(
				srv,
				async (s) => {
					await s.page.goto(phoneUrl, { waitUntil: 'load' });
					const form = s.page.locator('form.write[data-client="demo-client"]');
					await form.locator('input[name="sender"]').fill('6281300000077');
					await form.locator('input[name="message"]').fill(written);
					await form.locator('button[type="submit"]').click();
					const result = form.locator('.result');
					for (let i = 0; i < 50 && !(await result.textContent()); i++)
						await s.page.waitForTimeout(100);
					return { result: await result.textContent(), errors: s.errors };
				},
				[sb.url],
			),
		);
		report.check(
			'phone page: the message was delivered to the webhook (answered 200)',
			delivered.result === 'delivered (the webhook answered 200)',
			delivered,
		);
		const started = await waitForExecution(
			srv,
			{ workflowId: triggerId },
			{ after: startedAt, timeoutMs: 30_000 },
		);
		const run = await getExecution(srv, started.id);
		const item = run.data?.resultData.runData['On Message']?.[0]?.data?.main?.[0]?.[0]?.json ?? {};
		report.check(
			'the Messaging Trigger started an execution with the text and sender written on the page',
			started.status === 'success' && item.text === written && item.sender === '6281300000077',
			{ status: started.status, item },
		);

		const askedAt = new Date(Date.now() - 1000);
		await fetch(srv.webhookUrl(ASK_PATH), { method: 'POST', body: '{}' });
		const waiting = await waitForExecution(
			srv,
			{ workflowId: askId },
			{ after: askedAt, timeoutMs: 30_000, predicate: (e) => e.status === 'waiting' },
		);
		const shown = await report.timed('phone page: the question and its buttons', () =>
			withEditor(
				srv,
				async (s) => {
					await s.page.goto(phoneUrl, { waitUntil: 'load' });
					const approve = s.page
						.locator('section[data-account="demo-client"] a.answer')
						.filter({ hasText: 'Approve' })
						.last();
					const href = await approve.getAttribute('href');
					await s.page.evaluate(() => window.scrollTo(0, document.body.scrollHeight), undefined);
					await docImage(s, 'sandbox-phone');
					const buttons = await s.page
						.locator('section[data-account="demo-client"] .msg.sent')
						.last()
						.locator('a.answer')
						.allTextContents();
					return { href, buttons, errors: s.errors };
				},
				[sb.url],
			),
		);
		report.check(
			'phone page: the question shows with Approve and Decline buttons',
			JSON.stringify(shown.buttons) === '["Approve","Decline"]' && !!shown.href,
			shown,
		);
		// The link carries n8n's configured address; the path and query are what n8n signs.
		const link = new URL(shown.href ?? 'http://invalid/');
		const pressed = await pressAnswerButton(`${srv.url}${link.pathname}${link.search}`);
		const resumed = await waitForExecution(
			srv,
			{ workflowId: askId },
			{
				after: askedAt,
				timeoutMs: 30_000,
				predicate: (e) => e.id === waiting.id && e.status === 'success',
			},
		);
		const answered = await getExecution(srv, resumed.id);
		const answer = answered.data?.resultData.runData.Ask?.at(-1)?.data?.main?.[0]?.[0]?.json ?? {};
		report.check(
			"following the page's Approve button resumed the execution with approved: true",
			pressed.pressed && answer.approved === true,
			{ pressed: pressed.status, answer },
		);
	} finally {
		await srv.deactivateWorkflow(triggerId).catch(() => undefined);
		await srv.deactivateWorkflow(askId).catch(() => undefined);
	}
}
