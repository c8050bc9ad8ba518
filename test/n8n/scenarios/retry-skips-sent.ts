/**
 * n8n's own Retry of a failed execution (POST /rest/executions/:id/retry, the execution list's
 * "Retry" button) under `n8n start`, on n8n's database store: five Send Text items, the gateway
 * processes the third and its answer is lost, so the run stops with "may have been delivered".
 *
 * - Messaging version 2 (a new node, Skip Repeats Within 8 h by default): the Retry skips the
 *   two sent items and the one that may have been delivered, in place and paired, and sends the
 *   last two. The ledger holds each message once.
 * - Messaging version 1 (a workflow saved before version 2): loads and behaves as it always did:
 *   the Retry sends the first three again.
 */
import { randomUUID } from 'crypto';

import {
	NODE_TYPES,
	getExecution,
	listExecutions,
	nodeOutput,
	waitForExecution,
	type ScenarioContext,
	type WorkflowJson,
} from '../lib';

function webhookToSendText(id: string, path: string, typeVersion: number): WorkflowJson {
	return {
		id,
		name: `E2E: Retry of a stopped send, Messaging version ${typeVersion}`,
		active: false,
		nodes: [
			{
				id: randomUUID(),
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: randomUUID(),
				parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
			},
			{
				id: randomUUID(),
				name: 'Split Messages',
				type: 'n8n-nodes-base.splitOut',
				typeVersion: 1,
				position: [220, 0],
				parameters: { fieldToSplitOut: 'body.messages', include: 'noOtherFields', options: {} },
			},
			{
				id: randomUUID(),
				name: 'Send Text',
				type: NODE_TYPES.messaging,
				typeVersion,
				position: [440, 0],
				parameters: {
					resource: 'message',
					operation: 'sendText',
					phone: '={{ $json.phone }}',
					text: '={{ $json.text }}',
					options: {},
				},
			},
		],
		connections: {
			'Webhook': { main: [[{ node: 'Split Messages', type: 'main', index: 0 }]] },
			'Split Messages': { main: [[{ node: 'Send Text', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	} as unknown as WorkflowJson;
}

export async function retrySkipsWhatWasSent(t: ScenarioContext): Promise<void> {
	for (const typeVersion of [2, 1]) await retryOnce(t, typeVersion);
}

async function retryOnce(t: ScenarioContext, typeVersion: number): Promise<void> {
	const { report, server: srv, sandbox: sb } = t;
	const id = `E2eRetrySentV${typeVersion}`;
	const path = `retry-skips-sent-v${typeVersion}`;
	const workflow = webhookToSendText(id, path, typeVersion);
	for (const node of workflow.nodes as Array<{ type: string; credentials?: unknown }>)
		if (node.type === NODE_TYPES.messaging) node.credentials = { messagingRateApi: t.credential };
	await t.importWorkflow(workflow);
	await report.timed(`version ${typeVersion}: activate webhook → Send Text`, () =>
		srv.activateWorkflow(id),
	);
	const texts = [0, 1, 2, 3, 4].map((i) => `Retry scenario, version ${typeVersion}: order ${i}`);
	const ledgerBefore = sb.ledger().length;
	try {
		sb.addFaults([
			{ kind: 'dropAfterProcessing', match: { rpcMethod: 'sendMessage' }, skip: 2, times: 1 },
		]);
		const startedAt = new Date(Date.now() - 1000);
		await fetch(srv.webhookUrl(path), {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ messages: texts.map((text) => ({ phone: t.account.number, text })) }),
		});
		const failed = await waitForExecution(
			srv,
			{ workflowId: id },
			{ after: startedAt, timeoutMs: 60_000, predicate: (e) => e.status === 'error' },
		);
		sb.clearFaults();
		const failedRun = await getExecution(srv, failed.id);
		const description = String(
			(failedRun.data?.resultData.error as { description?: unknown } | undefined)?.description ??
				'',
		);
		if (typeVersion === 2)
			report.check(
				"version 2: the stopped run's error says what a Retry skips and sends",
				description.includes(
					"Running the same input again within 8 h (n8n's Retry, a re-run) skips items 0–1 (sent), item 2 (may have been delivered: check the recipient) and sends items 3–4",
				),
				description,
			);

		await report.timed(`version ${typeVersion}: POST /rest/executions/${failed.id}/retry`, () =>
			srv.rest('POST', `/executions/${failed.id}/retry`, { loadWorkflow: false }),
		);
		const retried = (await listExecutions(srv, { workflowId: id })).find(
			(e) => String(e.retryOf ?? '') === String(failed.id),
		);
		const retryRun = retried ? await getExecution(srv, retried.id) : undefined;
		const out = retryRun ? nodeOutput(retryRun as never, 'Send Text') : [];
		const counts = texts.map(
			(text) =>
				sb
					.ledger()
					.slice(ledgerBefore)
					.filter((entry) => entry.text === text).length,
		);
		if (typeVersion === 2) {
			report.check(
				'version 2: the Retry succeeded, skipping items 0–2 in place (paired) and sending items 3–4',
				retried?.status === 'success' &&
					out
						.map((item) => (item.skipped === true ? 'skipped' : item.sent === true ? 'sent' : '?'))
						.join() === 'skipped,skipped,skipped,sent,sent' &&
					String(out[2]?.reason).includes('may have been delivered by execution'),
				{ status: retried?.status, out: out.map((item) => item.reason ?? item.sent) },
			);
			report.check(
				'version 2: the ledger holds each of the five messages once',
				counts.every((count) => count === 1),
				counts,
			);
		} else {
			report.check(
				'version 1: unchanged, the Retry sends all five again (items 0–2 twice in the ledger)',
				retried?.status === 'success' && counts.join() === '2,2,2,1,1',
				{ status: retried?.status, counts },
			);
		}
	} finally {
		sb.clearFaults();
		await srv.deactivateWorkflow(id);
	}
}
