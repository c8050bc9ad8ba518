/**
 * Send and Wait with Response By → Reply in the Chat under `n8n start`: Messaging Trigger → Send
 * and Wait (approval, asking the sender) → No Op, published. "hello" from a person starts one
 * execution that asks "Reply 1 to Approve, 2 to Decline" and waits; a message from another number
 * resumes nothing (it is a new conversation: its own execution asks that person); "1" from the
 * first person resumes the waiting execution, which finishes with `approved: true`, and starts no
 * execution of its own; "2" from the other person declines the other question.
 */
import { randomUUID } from 'crypto';

import {
	NODE_TYPES,
	getExecution,
	listExecutions,
	sleep,
	waitForExecution,
	type ExecutionSummary,
	type ScenarioContext,
	type WorkflowJson,
} from '../lib';

const WORKFLOW_ID = 'E2eSendWaitChat';
const ASK = 'Ask';
const DONE = 'Done';
const PERSON = '6281300000021';
const OTHER_PERSON = '6281300000022';
const QUESTION = 'Send the March price list to 1,200 customers?';
const ended = (e: ExecutionSummary) =>
	['success', 'error', 'crashed', 'canceled'].includes(e.status);

export async function sendAndWaitReplyInTheChat(t: ScenarioContext): Promise<void> {
	const { report, server: srv, sandbox: sb } = t;
	const credentials = { messagingRateApi: t.credential };
	const workflow = {
		id: WORKFLOW_ID,
		name: 'E2E: Send and Wait, Reply in the Chat',
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
				credentials,
			},
			{
				id: randomUUID(),
				name: ASK,
				type: NODE_TYPES.messaging,
				typeVersion: 1,
				position: [240, 0],
				webhookId: randomUUID(),
				parameters: {
					resource: 'message',
					operation: 'sendAndWait',
					phone: '={{ $json.sender }}',
					message: QUESTION,
					responseBy: 'chatReply',
				},
				credentials,
			},
			{
				id: randomUUID(),
				name: DONE,
				type: 'n8n-nodes-base.noOp',
				typeVersion: 1,
				position: [480, 0],
				parameters: {},
			},
		],
		connections: {
			'On Message': { main: [[{ node: ASK, type: 'main', index: 0 }]] },
			[ASK]: { main: [[{ node: DONE, type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	} as unknown as WorkflowJson;
	await t.importWorkflow(workflow);
	const act = await report.timed('activate the Reply in the Chat workflow', () =>
		srv.activateWorkflow(WORKFLOW_ID),
	);
	report.check(
		'activate: published (2.x) / active (1.x)',
		act.publication?.status === 'published' ||
			(act.publication === undefined && act.active === true),
		act.publication ?? { active: act.active },
	);
	const all = () => listExecutions(srv, { workflowId: WORKFLOW_ID });
	const find = async (id: string) => (await all()).find((e) => e.id === id);
	const summary = (list: ExecutionSummary[]) => list.map((e) => `${e.id}:${e.mode}:${e.status}`);
	const bodyOf = (text: string): Record<string, unknown> => {
		try {
			return JSON.parse(text) as Record<string, unknown>;
		} catch {
			return { unparsed: text };
		}
	};
	const askedBy = (phone: string, from: number) =>
		sb
			.ledger()
			.slice(from)
			.filter((entry) => entry.kind === 'text' && entry.phone === phone);

	try {
		const ledgerBefore = sb.ledger().length;
		const startedAt = new Date(Date.now() - 1000);
		const hello = await sb.deliverIncoming({
			uuid: randomUUID(),
			message: 'hello',
			sender: PERSON,
		});
		report.check('"hello" is accepted by the trigger (200, received)', hello.status === 200, {
			status: hello.status,
			body: hello.body,
		});
		const waiting = await report.timed('the execution asks and waits', () =>
			waitForExecution(
				srv,
				{ workflowId: WORKFLOW_ID },
				{ after: startedAt, timeoutMs: 30_000, predicate: (e) => e.status === 'waiting' },
			),
		);
		report.check('GET /rest/executions: the execution is "waiting"', waiting.status === 'waiting', {
			id: waiting.id,
			status: waiting.status,
			mode: waiting.mode,
		});
		const asked = askedBy(PERSON, ledgerBefore);
		report.check(
			'the sandbox holds the question to the sender, ending "Reply 1 to Approve, 2 to Decline", no links',
			asked.length === 1 &&
				asked[0].text === `${QUESTION}\n\nReply 1 to Approve, 2 to Decline` &&
				!/https?:/.test(asked[0].text ?? ''),
			asked,
		);

		// Another person writes while the question waits: a new conversation, not an answer.
		const otherAt = new Date();
		const other = await sb.deliverIncoming({
			uuid: randomUUID(),
			message: '1',
			sender: OTHER_PERSON,
		});
		const otherExecution = await waitForExecution(
			srv,
			{ workflowId: WORKFLOW_ID },
			{
				after: otherAt,
				timeoutMs: 30_000,
				predicate: (e) => e.id !== waiting.id && e.status === 'waiting',
			},
		).catch(() => undefined);
		const firstAfterOther = await find(waiting.id);
		report.check(
			"a message from another number resumes nothing: the first execution still waits, the trigger's answer names no resumed execution",
			firstAfterOther?.status === 'waiting' &&
				other.status === 200 &&
				bodyOf(other.body).resumed === undefined,
			{ first: firstAfterOther?.status, status: other.status, body: other.body },
		);
		report.check(
			'that message starts its own execution, which asks the other person',
			otherExecution !== undefined && askedBy(OTHER_PERSON, ledgerBefore).length === 1,
			{ other: otherExecution?.id, asked: askedBy(OTHER_PERSON, ledgerBefore) },
		);

		const beforeReply = await all();
		const replyId = randomUUID();
		const reply = await sb.deliverIncoming({ uuid: replyId, message: '1', sender: PERSON });
		report.check(
			'"1" from the asked person: the trigger answers 200 with the resumed execution\'s id',
			reply.status === 200 && bodyOf(reply.body).resumed === waiting.id,
			{ status: reply.status, body: reply.body },
		);
		const done = await report.timed('the resumed execution finishes', () =>
			waitForExecution(
				srv,
				{ workflowId: WORKFLOW_ID },
				{
					timeoutMs: 60_000,
					predicate: (e) => e.id === waiting.id && ended(e),
				},
			),
		);
		report.check('the resumed execution succeeded', done.status === 'success', {
			id: done.id,
			status: done.status,
		});
		const runData = (await getExecution(srv, done.id)).data?.resultData.runData ?? {};
		const answer = runData[ASK]?.at(-1)?.data?.main?.[0]?.[0]?.json ?? {};
		report.check(
			"Send and Wait output: approved true, answered in the chat by the sender, the reply's message id",
			answer.approved === true &&
				answer.answered === true &&
				answer.answeredBy === 'chat' &&
				answer.respondedBy === PERSON &&
				answer.replyMessageId === replyId &&
				answer.timedOut === false &&
				answer.id === asked[0]?.id,
			answer,
		);
		const passedOn = runData[DONE]?.at(-1)?.data?.main?.[0] ?? [];
		report.check(
			'the node after it got that item',
			passedOn.length === 1 && passedOn[0].json.approved === true,
			passedOn[0]?.json,
		);
		await sleep(3000);
		const afterReply = await all();
		const started = afterReply.filter((e) => !beforeReply.some((b) => b.id === e.id));
		report.check(
			"the reply started no execution of the trigger's workflow; the other person's still waits",
			started.length === 0 &&
				afterReply.find((e) => e.id === otherExecution?.id)?.status === 'waiting',
			{ started: summary(started), all: summary(afterReply) },
		);
		report.check(
			'the person got the question only (no re-ask, no second question)',
			askedBy(PERSON, ledgerBefore).length === 1,
			askedBy(PERSON, ledgerBefore),
		);

		if (otherExecution) {
			await sb.deliverIncoming({ uuid: randomUUID(), message: '2', sender: OTHER_PERSON });
			const declined = await waitForExecution(
				srv,
				{ workflowId: WORKFLOW_ID },
				{
					timeoutMs: 60_000,
					predicate: (e) => e.id === otherExecution.id && ended(e),
				},
			);
			const out =
				(await getExecution(srv, declined.id)).data?.resultData.runData[ASK]?.at(-1)?.data
					?.main?.[0]?.[0]?.json ?? {};
			report.check(
				'"2" from the other person declines their question: approved false',
				declined.status === 'success' && out.approved === false && out.respondedBy === OTHER_PERSON,
				{ status: declined.status, out },
			);
		}
	} finally {
		await srv.deactivateWorkflow(WORKFLOW_ID);
		sb.setWebhook(t.account.clientId, t.account.previousWebhook);
	}
}
