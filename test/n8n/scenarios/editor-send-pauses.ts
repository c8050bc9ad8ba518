/**
 * What a newcomer sees of a new Send Text's defaults, n8n 2.x editor: the panel says that
 * messages after the first wait 2–6 s; after a 3-item run from the panel the output's execution
 * hint says how long the run paused and why; run again, the hint says that nothing was sent and
 * why. Screenshots: docs/.images/messaging-send-pause-notice.png, messaging-pause-hint.png and
 * messaging-nothing-sent-hint.png (written with --doc-images).
 */
import { docImage, openNodePanel, openWorkflow, withEditor, type PwPage } from '../editor';
import { NODE_TYPES, log, type ScenarioContext } from '../lib';

const PHONES = ['6281300000031', '6281300000032', '6281300000033'];

/** The panel's text as the person reads it. */
async function panelText(page: PwPage): Promise<string> {
	return await page
		.locator('[data-test-id="ndv"]')
		.evaluateAll((els) => els.map((el) => (el as HTMLElement).innerText).join('\n'));
}

/** Runs the open panel's node ("Execute step") and waits until its output shows a hint with `words`. */
async function executeUntilHint(page: PwPage, words: RegExp): Promise<string> {
	await page.getByTestId('node-execute-button').first().click();
	for (let i = 0; i < 120; i++) {
		await page.waitForTimeout(500);
		const text = await panelText(page);
		if (words.test(text)) return text;
	}
	return await panelText(page);
}

export async function editorShowsSendPauses(t: ScenarioContext): Promise<void> {
	if (!t.options.editor || t.target.major < 2) {
		log(`editor send-pause scenario not run for ${t.target.label} (n8n 2.x's selectors)`);
		return;
	}
	const { report, server: srv } = t;
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
				const first = await executeUntilHint(page, /paused \d+ s in all/);
				await docImage(s, 'messaging-pause-hint');
				const second = await executeUntilHint(page, /Nothing was sent/);
				await docImage(s, 'messaging-nothing-sent-hint');
				return { before, first, second };
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
			),
			{ panel: seen.first.slice(0, 1200) },
		);
		report.check(
			'editor: run again, the hint says that nothing was sent and why',
			/Nothing was sent: all 3 messages are repeats of messages sent by execution \d+, within 8 h/.test(
				seen.second,
			),
			{ panel: seen.second.slice(0, 1200) },
		);
	} finally {
		await srv
			.rest('POST', `/workflows/${created.id}/archive`)
			.catch((error: unknown) => log(`could not archive the workflow: ${String(error)}`));
	}
}
