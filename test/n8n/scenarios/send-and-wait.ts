/**
 * Message → Send and Wait for Response under `n8n start`, with examples/approval-before-broadcast.json:
 * a POST to its webhook asks the approver by WhatsApp (the sandbox records the question and its
 * links); the execution waits (status `waiting`); a changed link is refused by n8n (401) and the
 * execution keeps waiting; opening the approve link (GET) as link scanners and previewers do
 * (python-requests, curl, Go, Outlook) shows a page and decides nothing; pressing the page's
 * button (a form post to the same signed link) resumes it; the IF node sees `approved: true`;
 * the broadcast sends only as many messages as the usage limit leaves (the sandbox's counter runs
 * out), the others come out as error items marked `notAttempted`.
 */
import {
	BROWSER,
	SCANNERS,
	getExecution,
	listExecutions,
	openLink,
	pressAnswerButton,
	waitForExecution,
	type ScenarioContext,
} from '../lib';

const EXAMPLE_ID = 'ApproveBroadcast';
const RECIPIENTS = [
	'6281300000011',
	'6281300000012',
	'6281300000013',
	'6281300000014',
	'6281300000015',
];

export async function sendAndWaitApprovalGatesBroadcast(t: ScenarioContext): Promise<void> {
	const { report, server: srv, sandbox: sb } = t;
	const { wf } = t.workflow(EXAMPLE_ID);
	const ledgerBefore = sb.ledger().length;
	// The approval question plus 3 broadcast messages fit; the 4th and 5th recipients do not.
	const used = sb.usage().used;
	sb.setUsage({ limit: used + 4 });

	const startedAt = new Date(Date.now() - 1000);
	await report.timed('activate approval-before-broadcast', () => srv.activateWorkflow(wf.id));
	try {
		const text = 'March price list: 10 % off all rice until Friday.';
		const posted = await fetch(srv.webhookUrl('approval-before-broadcast'), {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ text, recipients: RECIPIENTS }),
		});
		report.check("POST to the workflow's webhook is answered 200", posted.status === 200, {
			status: posted.status,
			body: await posted.text(),
		});

		const waiting = await report.timed('execution waiting', () =>
			waitForExecution(
				srv,
				{ workflowId: wf.id },
				{ after: startedAt, timeoutMs: 30_000, predicate: (e) => e.status === 'waiting' },
			),
		);
		report.check('GET /rest/executions: the execution is "waiting"', waiting.status === 'waiting', {
			id: waiting.id,
			status: waiting.status,
		});

		const question = sb
			.ledger()
			.slice(ledgerBefore)
			.find((entry) => entry.kind === 'text' && entry.phone === t.account.number);
		const links = Object.fromEntries(
			[...(question?.text ?? '').matchAll(/^(.+): (http\S+)$/gm)].map((m) => [m[1], m[2]]),
		);
		report.check(
			'the approver got the question with two signed links',
			!!question?.text?.startsWith(`Broadcast this message to 5 customers?\n\n${text}`) &&
				/[?&]signature=[0-9a-f]{64}/.test(links['Yes, broadcast it'] ?? '') &&
				!!links.No,
			question,
		);
		// The links carry n8n's configured address; the path and query are what n8n signs.
		const onServer = (link: string) => {
			const url = new URL(link);
			return `${srv.url}${url.pathname}${url.search}`;
		};

		const forged = await fetch(onServer(links.No.replace('approved=false', 'approved=true')), {
			headers: { 'user-agent': BROWSER },
		});
		report.check(
			'a changed link (approved=false → true) is refused with 401',
			forged.status === 401,
			{ status: forged.status },
		);
		const still = (await listExecutions(srv, { workflowId: wf.id })).find(
			(e) => e.id === waiting.id,
		);
		report.check(
			'after the refused link the execution is still waiting',
			still?.status === 'waiting',
			still,
		);

		const scanned = [];
		for (const agent of SCANNERS)
			scanned.push({ agent, ...(await openLink(onServer(links['Yes, broadcast it']), agent)) });
		const afterScans = (await listExecutions(srv, { workflowId: wf.id })).find(
			(e) => e.id === waiting.id,
		);
		report.check(
			'GET on the approve link by python-requests, curl, Go and Outlook: a page with a button, nothing decided (still waiting)',
			scanned.every(
				(s) => s.status === 200 && s.page.includes('name="decision" value="approve"'),
			) && afterScans?.status === 'waiting',
			{
				scanned: scanned.map((s) => ({ agent: s.agent, status: s.status })),
				execution: afterScans?.status,
			},
		);

		const approve = await pressAnswerButton(onServer(links['Yes, broadcast it']));
		report.check(
			'pressing the page\'s button (a form post to the signed link): 200 with the "Approved" page',
			approve.pressed && approve.status === 200 && approve.page.includes('<h1>Approved</h1>'),
			{ status: approve.status, page: approve.page.slice(0, 300) },
		);

		const done = await report.timed('execution resumed and finished', () =>
			waitForExecution(
				srv,
				{ workflowId: wf.id },
				{
					after: startedAt,
					timeoutMs: 60_000,
					predicate: (e) => e.id === waiting.id && (e.status === 'success' || e.status === 'error'),
				},
			),
		);
		report.check('the resumed execution succeeded', done.status === 'success', {
			id: done.id,
			status: done.status,
		});
		const full = await getExecution(srv, done.id);
		const runData = full.data?.resultData.runData ?? {};
		const answer = runData['Ask for Approval']?.at(-1)?.data?.main?.[0]?.[0]?.json ?? {};
		report.check(
			"Send and Wait output: approved true, answered by the approver, the question's message id",
			answer.approved === true &&
				answer.answered === true &&
				answer.respondedBy === t.account.number &&
				answer.timedOut === false &&
				answer.id === question?.id,
			answer,
		);
		const ifTrue = runData['Approved?']?.at(-1)?.data?.main?.[0] ?? [];
		report.check(
			'the IF node saw approved: true (its "true" output has the item)',
			ifTrue.length === 1 && ifTrue[0].json.approved === true,
			ifTrue[0]?.json,
		);

		const broadcast = (runData.Broadcast?.at(-1)?.data?.main?.[0] ?? []).map((item) => item.json);
		report.check(
			'Broadcast: 3 sent, then 2 error items marked notAttempted (Stop at the Usage Limit)',
			// Error items carry their facts under `details` (n8n routes only error/message/details items to the error output).
			broadcast.length === 5 &&
				broadcast.slice(0, 3).every((j) => j.sent === true) &&
				broadcast.slice(3).every((j) => notAttempted(j) && String(j.error).includes('usage limit')),
			broadcast.map((j) => ({
				sent: j.sent,
				phone: j.phone,
				notAttempted: notAttempted(j),
				error: j.error,
			})),
		);
		const sentTexts = sb
			.ledger()
			.slice(ledgerBefore)
			.filter((entry) => entry.text === text);
		report.check(
			'the sandbox recorded exactly 3 broadcast messages, to the first 3 recipients',
			JSON.stringify(sentTexts.map((e) => e.phone)) === JSON.stringify(RECIPIENTS.slice(0, 3)),
			sentTexts,
		);

		const late = await pressAnswerButton(onServer(links.No));
		report.check(
			'after the answer the other link changes nothing (200, no new execution data)',
			late.status === 200 && sb.ledger().slice(ledgerBefore).length === 4,
			{ status: late.status },
		);
	} finally {
		await srv.deactivateWorkflow(wf.id);
		sb.setUsage({ limit: 10_000, used: 0 });
	}
}

function notAttempted(json: Record<string, unknown>): boolean {
	return (json.details as { notAttempted?: unknown } | undefined)?.notAttempted === true;
}
