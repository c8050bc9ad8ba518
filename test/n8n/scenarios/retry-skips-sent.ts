/**
 * n8n's retries of a Send Text with its defaults (Skip Repeats Within 8 h, a pause between
 * messages) under `n8n start`, five items each, every message once:
 *
 * - n8n's own Retry of a failed execution (POST /rest/executions/:id/retry, the execution list's
 *   "Retry" button), on n8n's database store: the gateway processes the third message and its
 *   answer is lost, so the run stops with "may have been delivered"; the Retry skips the two sent
 *   items and the one that may have been delivered, in place and paired, and sends the last two.
 * - Retry On Fail (the node's setting, n8n's tries within one execution): the gateway refuses the
 *   third message (not sent); n8n's second try skips the two the first try sent, saying so, and
 *   sends the other three.
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

function webhookToSendText(
	t: ScenarioContext,
	id: string,
	path: string,
	name: string,
	nodeSettings: Record<string, unknown> = {},
): WorkflowJson {
	return {
		id,
		name,
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
				typeVersion: 1,
				position: [440, 0],
				...nodeSettings,
				parameters: {
					resource: 'message',
					operation: 'sendText',
					phone: '={{ $json.phone }}',
					text: '={{ $json.text }}',
					options: {},
				},
				credentials: { messagingRateApi: t.credential },
			},
		],
		connections: {
			'Webhook': { main: [[{ node: 'Split Messages', type: 'main', index: 0 }]] },
			'Split Messages': { main: [[{ node: 'Send Text', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	} as unknown as WorkflowJson;
}

/** Posts five distinct messages to the workflow's webhook; returns their texts. */
async function postFive(t: ScenarioContext, path: string, label: string): Promise<string[]> {
	const texts = [0, 1, 2, 3, 4].map((i) => `${label} ${Date.now()}: order ${i}`);
	await fetch(t.server.webhookUrl(path), {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ messages: texts.map((text) => ({ phone: t.account.number, text })) }),
	});
	return texts;
}

/** How often each text is in the sandbox's ledger after `from`. */
function ledgerCounts(t: ScenarioContext, texts: string[], from: number): number[] {
	const ledger = t.sandbox.ledger().slice(from);
	return texts.map((text) => ledger.filter((entry) => entry.text === text).length);
}

const outcome = (item: Record<string, unknown>) =>
	item.skipped === true ? 'skipped' : item.sent === true ? 'sent' : '?';

export async function retrySkipsWhatWasSent(t: ScenarioContext): Promise<void> {
	await retryOfAFailedExecution(t);
	await retryOnFail(t);
}

async function retryOfAFailedExecution(t: ScenarioContext): Promise<void> {
	const { report, server: srv, sandbox: sb } = t;
	const id = 'E2eRetryExec';
	const path = 'retry-skips-sent';
	await t.importWorkflow(
		webhookToSendText(t, id, path, 'E2E: Retry of a stopped send (n8n Retry)'),
	);
	await report.timed('Retry: activate webhook → Send Text', () => srv.activateWorkflow(id));
	const ledgerBefore = sb.ledger().length;
	try {
		sb.addFaults([
			{ kind: 'dropAfterProcessing', match: { rpcMethod: 'sendMessage' }, skip: 2, times: 1 },
		]);
		const startedAt = new Date(Date.now() - 1000);
		const texts = await postFive(t, path, 'Retry scenario');
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
		report.check(
			"Retry: the stopped run's error says what a Retry skips and sends",
			description.includes(
				"Running the same input again within 8 h (n8n's Retry, a re-run) skips items 0–1 (sent), item 2 (may have been delivered: check the recipient) and sends items 3–4",
			),
			description,
		);

		await report.timed(`Retry: POST /rest/executions/${failed.id}/retry`, () =>
			srv.rest('POST', `/executions/${failed.id}/retry`, { loadWorkflow: false }),
		);
		const retried = (await listExecutions(srv, { workflowId: id })).find(
			(e) => String(e.retryOf ?? '') === String(failed.id),
		);
		const retryRun = retried ? await getExecution(srv, retried.id) : undefined;
		const out = retryRun ? nodeOutput(retryRun as never, 'Send Text') : [];
		report.check(
			'Retry: the Retry succeeded, skipping items 0–2 in place (paired) and sending items 3–4',
			retried?.status === 'success' &&
				out.map(outcome).join() === 'skipped,skipped,skipped,sent,sent' &&
				String(out[2]?.reason).includes('may have been delivered by execution'),
			{ status: retried?.status, out: out.map((item) => item.reason ?? item.sent) },
		);
		const counts = ledgerCounts(t, texts, ledgerBefore);
		report.check(
			'Retry: the ledger holds each of the five messages once',
			counts.every((count) => count === 1),
			counts,
		);
	} finally {
		sb.clearFaults();
		await srv.deactivateWorkflow(id);
	}
}

async function retryOnFail(t: ScenarioContext): Promise<void> {
	const { report, server: srv, sandbox: sb } = t;
	const id = 'E2eRetryOnFail';
	const path = 'retry-on-fail-skips-sent';
	await t.importWorkflow(
		webhookToSendText(t, id, path, 'E2E: Retry On Fail of a refused send', {
			retryOnFail: true,
			maxTries: 2,
			waitBetweenTries: 0,
		}),
	);
	await report.timed('Retry On Fail: activate webhook → Send Text', () => srv.activateWorkflow(id));
	const ledgerBefore = sb.ledger().length;
	const sendsBefore = sb.requests().filter((r) => r.params?.method === 'sendMessage').length;
	try {
		sb.addFaults([
			{
				kind: 'sentFalse',
				message: 'Try again later',
				match: { rpcMethod: 'sendMessage' },
				skip: 2,
				times: 1,
			},
		]);
		const startedAt = new Date(Date.now() - 1000);
		const texts = await postFive(t, path, 'Retry On Fail scenario');
		const done = await report.timed('Retry On Fail: the execution finished', () =>
			waitForExecution(
				srv,
				{ workflowId: id },
				{
					after: startedAt,
					timeoutMs: 90_000,
					predicate: (e) => e.status === 'success' || e.status === 'error',
				},
			),
		);
		const run = await getExecution(srv, done.id);
		const out = nodeOutput(run as never, 'Send Text');
		const sends = sb.requests().filter((r) => r.params?.method === 'sendMessage').length;
		report.check(
			"Retry On Fail: n8n's second try skips the two messages the first sent (saying so) and sends the other three",
			done.status === 'success' &&
				out.map(outcome).join() === 'skipped,skipped,sent,sent,sent' &&
				out
					.slice(0, 2)
					.every((item) =>
						String(item.reason).includes(
							'sent by an earlier try of this execution (Retry On Fail)',
						),
					) &&
				// The first try's three requests (the third refused), then the second try's three.
				sends - sendsBefore === 6,
			{
				status: done.status,
				out: out.map((item) => item.reason ?? item.sent),
				sendRequests: sends - sendsBefore,
			},
		);
		const counts = ledgerCounts(t, texts, ledgerBefore);
		report.check(
			'Retry On Fail: the ledger holds each of the five messages once',
			counts.every((count) => count === 1),
			counts,
		);
	} finally {
		sb.clearFaults();
		await srv.deactivateWorkflow(id);
	}
}
