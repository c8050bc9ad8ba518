/**
 * A chatbot under `n8n start`: a Messaging Trigger answers every inbound message with the same
 * words through a Send Text (defaults, Skip Repeats Within 8 h). Two inbound messages are two
 * causes: two replies. The same message delivered again starts nothing new.
 */
import { randomUUID } from 'crypto';

import {
	NODE_TYPES,
	listExecutions,
	waitForExecution,
	type ScenarioContext,
	type WorkflowJson,
} from '../lib';

const WORKFLOW_ID = 'E2eChatbotReply';
const REPLY = 'Thanks, we got your message';
const CUSTOMER = '6281300000002';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function chatbotSameReplyToTwoMessages(t: ScenarioContext): Promise<void> {
	const { report, server: srv, sandbox: sb } = t;
	const workflow = {
		id: WORKFLOW_ID,
		name: 'E2E: chatbot, the same reply to every message',
		active: false,
		nodes: [
			{
				id: randomUUID(),
				name: 'On Message',
				type: NODE_TYPES.messagingTrigger,
				typeVersion: 1,
				position: [0, 0],
				webhookId: randomUUID(),
				parameters: { accountNumber: t.account.number },
				credentials: { messagingRateApi: t.credential },
			},
			{
				id: randomUUID(),
				name: 'Reply',
				type: NODE_TYPES.messaging,
				typeVersion: 1,
				position: [240, 0],
				parameters: {
					resource: 'message',
					operation: 'sendText',
					phone: '={{ $json.sender }}',
					text: REPLY,
				},
				credentials: { messagingRateApi: t.credential },
			},
		],
		connections: { 'On Message': { main: [[{ node: 'Reply', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	} as unknown as WorkflowJson;
	await t.importWorkflow(workflow);
	await report.timed('activate the chatbot', () => srv.activateWorkflow(WORKFLOW_ID));

	const replies = () =>
		sb.ledger().filter((entry) => entry.phone === CUSTOMER && entry.text === REPLY).length;
	const before = replies();
	const deliver = async (uuid: string, message: string) => {
		const t0 = new Date(Date.now() - 1000);
		await sb.deliverIncoming({ uuid, message, sender: CUSTOMER });
		await waitForExecution(srv, { workflowId: WORKFLOW_ID }, { after: t0, timeoutMs: 30_000 });
	};
	const first = randomUUID();
	await deliver(first, 'Do you open on Sunday?');
	await deliver(randomUUID(), 'And on Monday?');
	// The gateway delivers the first message again: the trigger starts nothing.
	await sb.deliverIncoming({ uuid: first, message: 'Do you open on Sunday?', sender: CUSTOMER });
	await sleep(3000);
	const executions = await listExecutions(srv, { workflowId: WORKFLOW_ID });
	report.check(
		'two inbound messages answered with the same words: two replies (and the redelivery none)',
		replies() - before === 2 && executions.length === 2,
		{
			replies: replies() - before,
			executions: executions.map((e) => `${e.id}:${e.status}`),
		},
	);

	await srv.deactivateWorkflow(WORKFLOW_ID);
	sb.setWebhook(t.account.clientId, t.account.previousWebhook);
}
