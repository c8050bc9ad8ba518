/**
 * Message → Send and Wait for Response when nobody answers, under `n8n start`: a question with
 * Limit Wait Time (0.1 minutes) is sent once; the execution waits; when the limit passes, n8n's
 * wait tracker resumes it (it looks for due executions once a minute, so this takes up to about
 * 70 s) and the node's output says `timedOut: true`, `answered: false`, with the question's message
 * id; the IF node sends the item down its "false" branch; the question was sent exactly once (the
 * node is not run again on resume), and a late click on a link resumes nothing. A link scanner
 * that opens the "Yes" link while the execution waits (python-requests, Outlook) decides nothing:
 * the execution still times out.
 */
import {
	SCANNERS,
	getExecution,
	openLink,
	pressAnswerButton,
	waitForExecution,
	type ScenarioContext,
} from '../lib';

const WORKFLOW_ID = 'E2eWaitTimeout';

export async function sendAndWaitTimesOut(t: ScenarioContext): Promise<void> {
	const { report, server: srv, sandbox: sb } = t;
	const { wf } = t.workflow(WORKFLOW_ID);
	const ledgerBefore = sb.ledger().length;
	const question = `Nobody will answer this (${Date.now()})`;
	const startedAt = new Date(Date.now() - 1000);
	await report.timed('activate send-and-wait-timeout', () => srv.activateWorkflow(wf.id));
	try {
		const posted = await fetch(srv.webhookUrl('send-and-wait-timeout'), {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ question }),
		});
		report.check("POST to the workflow's webhook is answered 200", posted.status === 200, {
			status: posted.status,
		});

		const waiting = await report.timed('execution waiting', () =>
			waitForExecution(
				srv,
				{ workflowId: wf.id },
				{ after: startedAt, timeoutMs: 30_000, predicate: (e) => e.status === 'waiting' },
			),
		);
		report.check('the execution is "waiting"', waiting.status === 'waiting', {
			id: waiting.id,
			status: waiting.status,
		});

		// Link scanners open the "Yes" link while the execution waits: that must decide nothing.
		const asked = sb
			.ledger()
			.slice(ledgerBefore)
			.find((entry) => entry.text?.startsWith(question));
		const yes = /^Yes: (http\S+)$/m.exec(asked?.text ?? '')?.[1];
		const onServer = (link: string) => {
			const url = new URL(link);
			return `${srv.url}${url.pathname}${url.search}`;
		};
		const scanned = yes
			? await Promise.all(SCANNERS.map(async (agent) => await openLink(onServer(yes), agent)))
			: [];
		report.check(
			'link scanners opening "Yes" while it waits get a page (200), not an answer',
			scanned.length === SCANNERS.length && scanned.every((s) => s.status === 200),
			scanned.map((s) => s.status),
		);

		const done = await report.timed('execution resumed by the wait limit and finished', () =>
			waitForExecution(
				srv,
				{ workflowId: wf.id },
				{
					after: startedAt,
					timeoutMs: 150_000,
					predicate: (e) => e.id === waiting.id && (e.status === 'success' || e.status === 'error'),
				},
			),
		);
		report.check('the timed-out execution succeeded', done.status === 'success', {
			id: done.id,
			status: done.status,
		});

		const sent = sb
			.ledger()
			.slice(ledgerBefore)
			.filter((entry) => entry.text?.startsWith(question));
		report.check(
			'the question was sent exactly once (nothing sent again on resume)',
			sent.length === 1,
			sent.map((e) => ({ phone: e.phone, id: e.id })),
		);

		const full = await getExecution(srv, done.id);
		const runData = full.data?.resultData.runData ?? {};
		const answer = runData.Ask?.at(-1)?.data?.main?.[0]?.[0]?.json ?? {};
		report.check(
			"Send and Wait output: timedOut true, answered false, no approval, the question's message id",
			answer.timedOut === true &&
				answer.answered === false &&
				answer.approved !== true &&
				answer.id === sent[0]?.id,
			answer,
		);
		const noAnswer = runData['No Answer']?.at(-1)?.data?.main?.[0] ?? [];
		report.check(
			'the IF node sent the item down its "false" branch',
			noAnswer.length === 1 && noAnswer[0].json.timedOut === true,
			noAnswer[0]?.json,
		);

		// A click after the time limit: the wait is over, so nothing resumes and nothing is sent.
		const link = /^Yes: (http\S+)$/m.exec(sent[0]?.text ?? '')?.[1];
		if (link) {
			// The button of a page opened before the limit, pressed after it.
			const late = await pressAnswerButton(onServer(link), { decision: 'approve' });
			const after = await getExecution(srv, done.id);
			report.check(
				'a click on "Yes" after the limit changes nothing (the execution stays finished, nothing new is sent)',
				after.status === 'success' && sb.ledger().slice(ledgerBefore).length === 1,
				{ status: late.status, execution: after.status },
			);
		} else {
			report.check('the question holds a "Yes" link', false, sent[0]?.text);
		}
	} finally {
		await srv.deactivateWorkflow(wf.id);
	}
}
