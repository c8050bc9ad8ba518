/**
 * A new Messaging Trigger under `n8n start`, with nothing set but the account number (its
 * defaults: Verification → Generated Secret, Ignore Own Messages on): activation registers n8n's
 * URL with a generated secret, a post without it is refused, a message from the account's own
 * number starts nothing, one message delivered twice (the same uuid) starts one execution, the
 * workflow's static data holds no secret, and deactivation puts the account's previous webhook back.
 */
import { randomUUID } from 'crypto';

import {
	NODE_TYPES,
	listExecutions,
	waitForExecution,
	type ScenarioContext,
	type WorkflowJson,
} from '../lib';

const WORKFLOW_ID = 'E2eTriggerDflts';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function messagingTriggerDefaults(t: ScenarioContext): Promise<void> {
	const { report, server: srv, sandbox: sb } = t;
	const webhookId = randomUUID();
	const workflow = {
		id: WORKFLOW_ID,
		name: 'E2E: Messaging Trigger defaults',
		active: false,
		nodes: [
			{
				id: randomUUID(),
				name: 'On Message',
				type: NODE_TYPES.messagingTrigger,
				typeVersion: 1,
				position: [0, 0],
				webhookId,
				parameters: { accountNumber: t.account.number },
				credentials: { messagingRateApi: t.credential },
			},
		],
		connections: {},
		settings: {},
	} as unknown as WorkflowJson;
	await t.importWorkflow(workflow);
	const account = () => sb.accounts().find((a) => a.clientId === t.account.clientId)!;
	const prodUrl = srv.webhookUrl(`${webhookId}/webhook`);

	await report.timed('activate a new Messaging Trigger', () => srv.activateWorkflow(WORKFLOW_ID));
	const registered = account().whatsappWebhook ?? '';
	report.check(
		"defaults: the account holds n8n's URL with a generated secret (?token=<43 chars>)",
		/^.+\?token=[\w-]{43}$/.test(registered) && registered.startsWith(prodUrl),
		{
			registered,
			prodUrl,
		},
	);

	const bare = await fetch(prodUrl, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ params: { message: 'forged' } }),
	});
	report.check(
		'defaults: a post without the generated secret is answered 401',
		bare.status === 401,
		{ status: bare.status, body: await bare.text() },
	);

	// A message the account itself wrote (an auto-reply) must not start the workflow again.
	const own = await sb.deliverIncoming({
		message: 'Thanks, we got your message',
		sender: `${t.account.number}@c.us`,
	});
	report.check(
		"defaults: a message from the account's own number is answered 200, ignored",
		own.status === 200 && /sent by the account's own number/.test(own.body),
		{ status: own.status, body: own.body },
	);

	const t0 = new Date(Date.now() - 1000);
	const uuid = randomUUID();
	const first = await sb.deliverIncoming({
		uuid,
		message: 'once, please',
		sender: '6281300000002',
	});
	await waitForExecution(srv, { workflowId: WORKFLOW_ID }, { after: t0, timeoutMs: 30_000 });
	const again = await sb.deliverIncoming({
		uuid,
		message: 'once, please',
		sender: '6281300000002',
	});
	report.check(
		'the first delivery is accepted, the repeat (same uuid) answered "repeated delivery"',
		first.status === 200 && again.status === 200 && /repeated delivery/.test(again.body),
		{
			first: first.body,
			again: again.body,
		},
	);
	await sleep(3000);
	const executions = await listExecutions(srv, { workflowId: WORKFLOW_ID });
	report.check(
		"one message delivered twice started one execution (and the account's own message none)",
		executions.length === 1,
		executions.map((e) => `${e.id}:${e.status}`),
	);

	const saved = await srv.rest<{ staticData?: Record<string, unknown> }>(
		'GET',
		`/workflows/${WORKFLOW_ID}`,
	);
	const secret = new URL(registered).searchParams.get('token') ?? '';
	report.check(
		"the workflow's static data keeps the registration's hashes, not the generated secret",
		secret !== '' && !JSON.stringify(saved.staticData ?? {}).includes(secret),
		saved.staticData,
	);

	await report.timed('deactivate the trigger', () => srv.deactivateWorkflow(WORKFLOW_ID));
	report.check(
		'deactivation put the previous webhook back',
		account().whatsappWebhook === t.account.previousWebhook,
		account(),
	);
	// The next scenarios start from the account as the run set it up, whatever happened here.
	sb.setWebhook(t.account.clientId, t.account.previousWebhook);
}
