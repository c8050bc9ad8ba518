/**
 * Message → Wait for Send Window under `n8n start`, with a window that opens about two minutes
 * after the run starts: Webhook → Split Out → Wait for Send Window → Send Text (its defaults,
 * Send Only Between the same window). The execution shows as "waiting" and nothing is sent; n8n is
 * restarted during the wait; the execution is still waiting after the restart, n8n's wait
 * tracker resumes it by itself after the opening (it looks once a minute), and Send Text sends
 * every message once, none before the opening.
 */
import {
	getExecution,
	startN8n,
	waitForExecution,
	type ScenarioContext,
	type WorkflowJson,
} from '../lib';

const WORKFLOW_ID = 'E2eSendWindow';
const PATH = 'send-window-wait';

const hhmm = (at: Date) =>
	`${String(at.getUTCHours()).padStart(2, '0')}:${String(at.getUTCMinutes()).padStart(2, '0')}`;

function windowWorkflow(window: Record<string, unknown>, credential: { id: string; name: string }) {
	const node = (id: string, name: string, x: number, parameters: Record<string, unknown>) => ({
		id,
		name,
		type: 'n8n-nodes-messaging-rate.messaging',
		typeVersion: 1,
		position: [x, 0],
		parameters,
		credentials: { messagingRateApi: credential },
	});
	return {
		id: WORKFLOW_ID,
		name: 'E2E: Wait for Send Window, then Send Text',
		active: false,
		nodes: [
			{
				id: 'e2e-window-1',
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: '0d8f7a52-6b1c-4e2d-9a3f-5c6d7e8f9a01',
				parameters: { httpMethod: 'POST', path: PATH, responseMode: 'onReceived', options: {} },
			},
			{
				id: 'e2e-window-2',
				name: 'Split Messages',
				type: 'n8n-nodes-base.splitOut',
				typeVersion: 1,
				position: [200, 0],
				parameters: { fieldToSplitOut: 'body.messages', include: 'noOtherFields', options: {} },
			},
			node('e2e-window-3', 'Wait for Window', 400, {
				resource: 'message',
				operation: 'waitForSendWindow',
				...window,
			}),
			node('e2e-window-4', 'Send Text', 600, {
				resource: 'message',
				operation: 'sendText',
				phone: '={{ $json.phone }}',
				text: '={{ $json.text }}',
				options: { sendWindow: { window } },
			}),
		],
		connections: {
			'Webhook': { main: [[{ node: 'Split Messages', type: 'main', index: 0 }]] },
			'Split Messages': { main: [[{ node: 'Wait for Window', type: 'main', index: 0 }]] },
			'Wait for Window': { main: [[{ node: 'Send Text', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
		pinData: {},
	} as unknown as WorkflowJson;
}

export async function sendWindowWaitsAcrossARestart(t: ScenarioContext): Promise<void> {
	const { report, server: srv, sandbox: sb } = t;
	// The window opens at the first whole minute at least two minutes from now (UTC), for 30 minutes.
	const opening = new Date(Math.ceil((Date.now() + 120_000) / 60_000) * 60_000);
	const window = {
		start: hhmm(opening),
		end: hhmm(new Date(opening.getTime() + 30 * 60_000)),
		timeZone: 'UTC',
	};
	await t.importWorkflow(windowWorkflow(window, t.credential));
	const texts = [0, 1, 2].map((i) => `window ${opening.toISOString()} msg ${i}`);
	const ledgerBefore = sb.ledger().length;
	const startedAt = new Date(Date.now() - 1000);
	await report.timed('activate send-window-wait', () => srv.activateWorkflow(WORKFLOW_ID));
	try {
		const posted = await fetch(srv.webhookUrl(PATH), {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ messages: texts.map((text) => ({ phone: t.account.number, text })) }),
		});
		report.check("POST to the workflow's webhook is answered 200", posted.status === 200, {
			status: posted.status,
		});
		const waiting = await report.timed('execution waiting', () =>
			waitForExecution(
				srv,
				{ workflowId: WORKFLOW_ID },
				{ after: startedAt, timeoutMs: 30_000, predicate: (e) => e.status === 'waiting' },
			),
		);
		const waitingFull = await getExecution(srv, waiting.id);
		const waitTill = (waitingFull as { waitTill?: string | null }).waitTill ?? null;
		report.check(
			`the execution is "waiting" until the window opens (${opening.toISOString()}), nothing sent`,
			waiting.status === 'waiting' &&
				waitTill !== null &&
				new Date(waitTill).getTime() === opening.getTime() &&
				sb.ledger().length === ledgerBefore,
			{ id: waiting.id, waitTill, sent: sb.ledger().length - ledgerBefore },
		);

		// n8n restarted during the wait: the waiting execution is in its database, not in a worker.
		await report.timed('n8n restarted during the wait', async () => {
			await srv.stop();
			const restarted = await startN8n(t.userFolder, { port: srv.port });
			// The runner and later scenarios hold `srv`: it becomes the restarted server (getters too).
			Object.defineProperties(srv, Object.getOwnPropertyDescriptors(restarted));
		});
		const afterRestart = await getExecution(srv, waiting.id);
		report.check(
			'after the restart the execution is still waiting, and nothing was sent',
			afterRestart.status === 'waiting' && sb.ledger().length === ledgerBefore,
			{ status: afterRestart.status, sent: sb.ledger().length - ledgerBefore },
		);

		const done = await report.timed('resumed by n8n after the opening and finished', () =>
			waitForExecution(
				srv,
				{ workflowId: WORKFLOW_ID },
				{
					after: startedAt,
					timeoutMs: Math.max(0, opening.getTime() - Date.now()) + 150_000,
					predicate: (e) => e.id === waiting.id && (e.status === 'success' || e.status === 'error'),
				},
			),
		);
		const sent = sb
			.ledger()
			.slice(ledgerBefore)
			.filter((entry) => texts.includes(entry.text ?? ''));
		const full = await getExecution(srv, done.id);
		const out = full.data?.resultData.runData['Send Text']?.at(-1)?.data?.main?.[0] ?? [];
		report.check(
			'the resumed execution sent every message once, none before the opening',
			done.status === 'success' &&
				sent.length === texts.length &&
				new Set(sent.map((e) => e.text)).size === texts.length &&
				sent.every((e) => Date.parse(e.at) >= opening.getTime()) &&
				out.length === texts.length &&
				out.every((item) => item.json.sent === true && typeof item.json.sentAt === 'string'),
			{
				status: done.status,
				at: sent.map((e) => e.at),
				outputs: out.map((item) => ({ sent: item.json.sent, waitedMs: item.json.waitedMs })),
			},
		);
	} finally {
		await srv.deactivateWorkflow(WORKFLOW_ID);
	}
}
