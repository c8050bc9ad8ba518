/**
 * The first thing a user does (n8n 2.x editor only: its selectors are 2.x's), each with a new
 * Send Text's defaults (Skip Repeats Within on, a pause between messages):
 * - a lone Send Text, the only node of its workflow, run with its panel's "Execute step" (a start
 *   node: n8n gives it no source data) sends;
 * - a Send Text behind a Manual Trigger, run with "Execute workflow", sends;
 * - a reply behind a Messaging Trigger published from the editor answers an inbound message.
 */
import { randomUUID } from 'crypto';

import { openNodePanel, openWorkflow, withEditor } from '../editor';
import { NODE_TYPES, listExecutions, log, waitForExecution, type ScenarioContext } from '../lib';

const CUSTOMER = '6281300000003';

function sendText(name: string, text: string, credential: unknown, x = 300) {
	return {
		id: randomUUID(),
		name,
		type: NODE_TYPES.messaging,
		typeVersion: 1,
		position: [x, 0],
		parameters: { resource: 'message', operation: 'sendText', phone: '+62 812-8877-6713', text },
		credentials: { messagingRateApi: credential },
	};
}

export async function editorFirstSendSends(t: ScenarioContext): Promise<void> {
	if (!t.options.editor || t.target.major < 2) {
		log(
			`editor first-send scenario not run for ${t.target.label} (${t.options.editor ? "the editor selectors are n8n 2.x's" : '--no-editor'})`,
		);
		return;
	}
	const { report, server: srv, sandbox } = t;
	const stamp = Date.now();
	const sentText = (text: string) => sandbox.ledger().filter((entry) => entry.text === text).length;

	const loneText = `A lone Send Text ${stamp}`;
	const lone = await srv.rest<{ id: string }>('POST', '/workflows', {
		name: 'Editor: a lone Send Text',
		active: false,
		settings: {},
		nodes: [sendText('Send Text', loneText, { ...t.credential }, 0)],
		connections: {},
	});
	const manualText = `Send Text after a Manual Trigger ${stamp}`;
	const manual = await srv.rest<{ id: string }>('POST', '/workflows', {
		name: 'Editor: Manual Trigger, then Send Text',
		active: false,
		settings: {},
		nodes: [
			{
				id: randomUUID(),
				name: 'Manual',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			sendText('Send Text', manualText, { ...t.credential }),
		],
		connections: { Manual: { main: [[{ node: 'Send Text', type: 'main', index: 0 }]] } },
	});
	const replyText = `Thanks for writing ${stamp}`;
	const chatbot = await srv.rest<{ id: string }>('POST', '/workflows', {
		name: 'Editor: a reply behind a Messaging Trigger',
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: randomUUID(),
				name: 'On Message',
				type: NODE_TYPES.messagingTrigger,
				typeVersion: 1,
				position: [0, 0],
				webhookId: randomUUID(),
				parameters: { accountNumber: t.account.number },
				credentials: { messagingRateApi: { ...t.credential } },
			},
			{
				...sendText('Reply', replyText, { ...t.credential }),
				parameters: {
					resource: 'message',
					operation: 'sendText',
					phone: '={{ $json.sender }}',
					text: replyText,
				},
			},
		],
		connections: { 'On Message': { main: [[{ node: 'Reply', type: 'main', index: 0 }]] } },
	});

	const seen = await report.timed('editor: a lone Send Text, one after a Manual Trigger', () =>
		withEditor(srv, async (s) => {
			const { page } = s;
			await openWorkflow(page, srv, lone.id);
			await openNodePanel(page, 'Send Text');
			await page.getByTestId('node-execute-button').first().click();
			await page.getByTestId('node-run-status-success').first().waitFor({ timeout: 90_000 });
			// The run's status shows before the output table is drawn: read until it is.
			let loneOutput = '';
			for (let i = 0; i < 20 && !/sent\W+true/.test(loneOutput); i++) {
				if (i > 0) await page.waitForTimeout(500);
				loneOutput = ((await page.getByTestId('output-panel').first().textContent()) ?? '').replace(
					/\s+/g,
					' ',
				);
			}
			await s.screenshot('editor-lone-send-text');

			await openWorkflow(page, srv, manual.id);
			await page.getByTestId('execute-workflow-button').first().click();
			for (let i = 0; i < 180 && sentText(manualText) === 0; i++) await page.waitForTimeout(500);

			await openWorkflow(page, srv, chatbot.id);
			// n8n 2.x: the header's Publish opens a dialog whose Publish button publishes.
			await page.getByTestId('workflow-open-publish-modal-button').first().click();
			await page.getByTestId('workflow-publish-button').first().click();
			for (let i = 0; i < 60; i++) {
				const workflow = await srv.rest<{ active: boolean }>('GET', `/workflows/${chatbot.id}`);
				if (workflow.active) break;
				await page.waitForTimeout(500);
			}
			await s.screenshot('editor-published-chatbot');
			return { loneOutput, errors: s.errors };
		}),
	);
	report.check(
		'editor: a lone Send Text (its workflow has no other node) sends with Execute step and the defaults',
		sentText(loneText) === 1 && /sent\W+true/.test(seen.loneOutput),
		{ sent: sentText(loneText), output: seen.loneOutput.slice(0, 300) },
	);
	report.check(
		'editor: a Send Text behind a Manual Trigger sends with Execute workflow and the defaults',
		sentText(manualText) === 1,
		{ sent: sentText(manualText) },
	);

	const published = await srv.rest<{ active: boolean }>('GET', `/workflows/${chatbot.id}`);
	let replies = 0;
	if (published.active) {
		const t0 = new Date(Date.now() - 1000);
		await sandbox.deliverIncoming({ uuid: randomUUID(), message: 'Hello?', sender: CUSTOMER });
		await waitForExecution(srv, { workflowId: chatbot.id }, { after: t0, timeoutMs: 60_000 });
		for (let i = 0; i < 20 && replies === 0; i++) {
			replies = sandbox
				.ledger()
				.filter((entry) => entry.phone === CUSTOMER && entry.text === replyText).length;
			if (replies === 0) await new Promise((resolve) => setTimeout(resolve, 500));
		}
	}
	const executions = await listExecutions(srv, { workflowId: chatbot.id });
	report.check(
		'editor: a reply behind a Messaging Trigger published from the editor answers a message, with the defaults',
		published.active && replies === 1,
		{
			active: published.active,
			replies,
			executions: executions.map((e) => `${e.id}:${e.status}`),
		},
	);

	if (published.active) await srv.deactivateWorkflow(chatbot.id).catch(() => undefined);
	for (const { id } of [lone, manual, chatbot])
		await srv.rest('DELETE', `/workflows/${id}`).catch(() => undefined);
}
