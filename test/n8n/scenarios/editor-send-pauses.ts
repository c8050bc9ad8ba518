/**
 * What a newcomer sees of a new Send Text's defaults, n8n 2.x editor: the panel says that
 * messages after the first wait 2–6 s; after a 3-item run from the panel the output's execution
 * hint says how long the run paused and why; run again, the hint says that nothing was sent and
 * why. Screenshots: docs/.images/messaging-send-pause-notice.png, messaging-pause-hint.png and
 * messaging-nothing-sent-hint.png (written with --doc-images).
 */
import { docImage, openNodePanel, openWorkflow, withEditor, type PwPage } from '../editor';
import {
	NODE_TYPES,
	listExecutions,
	log,
	type ExecutionSummary,
	type N8nServer,
	type ScenarioContext,
} from '../lib';

const PHONES = ['6281300000031', '6281300000032', '6281300000033'];

/** The panel's text as the person reads it. */
async function panelText(page: PwPage): Promise<string> {
	return await page
		.locator('[data-test-id="ndv"]')
		.evaluateAll((els) => els.map((el) => (el as HTMLElement).innerText).join('\n'));
}

/**
 * Runs the open panel's node ("Execute step") and waits until the run it starts has finished and
 * the output shows a hint with `words`. A click that started no execution (the button was still
 * settling after the last run) is clicked again once.
 */
async function executeUntilHint(
	page: PwPage,
	srv: N8nServer,
	workflowId: string,
	words: RegExp,
): Promise<{ text: string; executions: string[] }> {
	const before = new Set((await listExecutions(srv, { workflowId })).map((e) => e.id));
	const button = page.getByTestId('node-execute-button').first();
	await button.click();
	let text = '';
	let executions: ExecutionSummary[] = [];
	for (let i = 0; i < 120; i++) {
		await page.waitForTimeout(500);
		executions = (await listExecutions(srv, { workflowId })).filter((e) => !before.has(e.id));
		if (executions.length === 0 && i === 40) await button.click();
		text = await panelText(page);
		if (words.test(text) && executions.length > 0 && executions.every((e) => e.stoppedAt)) break;
	}
	return { text, executions: executions.map((e) => `${e.id} ${e.status}`) };
}

export async function editorShowsSendPauses(t: ScenarioContext): Promise<void> {
	if (!t.options.editor || t.target.major < 2) {
		log(`editor send-pause scenario not run for ${t.target.label} (n8n 2.x's selectors)`);
		return;
	}
	const { report, server: srv, sandbox } = t;
	const sends = () =>
		sandbox.ledger().filter((entry) => PHONES.some((phone) => entry.phone.includes(phone))).length;
	const created = await srv.rest<{ id: string }>('POST', '/workflows', {
		name: 'Editor: a new Send Text to three numbers',
		active: false,
		settings: {},
		nodes: [
			{
				id: 'manual',
				name: 'Manual',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			{
				id: 'send',
				name: 'Send Text',
				type: NODE_TYPES.messaging,
				typeVersion: 1,
				position: [300, 0],
				parameters: {
					resource: 'message',
					operation: 'sendText',
					phone: '={{ $json.phone }}',
					text: 'Your order is ready for pick-up',
				},
				credentials: { messagingRateApi: { ...t.credential } },
			},
		],
		connections: { Manual: { main: [[{ node: 'Send Text', type: 'main', index: 0 }]] } },
		pinData: { Manual: PHONES.map((phone) => ({ json: { phone } })) },
	});
	try {
		const seen = await report.timed('editor: a new Send Text, run twice from its panel', () =>
			withEditor(srv, async (s) => {
				const { page } = s;
				await openWorkflow(page, srv, created.id);
				await openNodePanel(page, 'Send Text');
				const before = await panelText(page);
				await docImage(s, 'messaging-send-pause-notice');
				const first = await executeUntilHint(page, srv, created.id, /paused \d+ s in all/);
				const sentFirst = sends();
				await docImage(s, 'messaging-pause-hint');
				const second = await executeUntilHint(page, srv, created.id, /Nothing was sent/);
				await docImage(s, 'messaging-nothing-sent-hint');
				return {
					before,
					first: first.text,
					second: second.text,
					runs: [first.executions, second.executions],
					sent: [sentFirst, sends()],
				};
			}),
		);
		report.check(
			'editor: a new Send Text says that messages after the first wait 2–6 s',
			seen.before.includes('Messages after the first wait 2–6 s at random'),
			{ panel: seen.before.slice(0, 600) },
		);
		report.check(
			'editor: after a 3-item run the hint says how long the run paused and why',
			/This run paused \d+ s in all before 2 messages \(Delay Between Messages: 2–6 s at random/.test(
				seen.first,
			) && seen.sent[0] === PHONES.length,
			{ panel: seen.first.slice(0, 1200), runs: seen.runs[0], sent: seen.sent[0] },
		);
		report.check(
			'editor: run again, the hint says that nothing was sent and why',
			/Nothing was sent: all 3 messages are repeats of messages sent by execution \d+, within 8 h/.test(
				seen.second,
			) && seen.sent[1] === seen.sent[0],
			{ panel: seen.second.slice(0, 1200), runs: seen.runs[1], sent: seen.sent[1] },
		);
	} finally {
		await srv
			.rest('POST', `/workflows/${created.id}/archive`)
			.catch((error: unknown) => log(`could not archive the workflow: ${String(error)}`));
	}
}
