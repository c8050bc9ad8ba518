/**
 * The Messaging Trigger's panel as a newcomer meets it (issue 15, item 3), n8n 2.x only:
 * - the notice about the gateway's one webhook per account is visible in the panel;
 * - listening for a test event ("Execute step") shows the trigger's own instruction (not n8n's generic "Go to …
 *   and create an event"), and a message the sandbox then delivers appears in the panel.
 * Screenshots: docs/.images/messaging-trigger-panel.png and messaging-trigger-listening.png
 * (written with --doc-images).
 */
import { closeNodePanel, docImage, openNodePanel, openWorkflow, withEditor } from '../editor';
import { NODE_TYPES, log, sleep, type ScenarioContext } from '../lib';

const MESSAGE = 'Halo from the editor test';

export async function editorShowsTheTriggerNoticeAndListens(t: ScenarioContext): Promise<void> {
	if (!t.options.editor || t.target.major < 2) {
		log(
			`editor trigger-panel scenario not run for ${t.target.label} (${t.options.editor ? "the editor selectors are n8n 2.x's" : '--no-editor'})`,
		);
		return;
	}
	const { report, server: srv, sandbox } = t;
	const created = await srv.rest<{ id: string }>('POST', '/workflows', {
		name: 'Editor: Messaging Trigger panel',
		active: false,
		settings: {},
		nodes: [
			{
				id: 'trigger',
				name: 'Messaging Trigger',
				type: NODE_TYPES.messagingTrigger,
				typeVersion: 1,
				position: [0, 0],
				webhookId: 'c6a1f8e2-5b0d-4f7e-9a43-0e2d6b7c1a55',
				parameters: { accountNumber: `+${t.account.number}` },
				credentials: { messagingRateApi: { ...t.credential } },
			},
		],
		connections: {},
	});

	const webhookBefore = sandbox.accounts()[0]?.whatsappWebhook;
	try {
		const seen = await report.timed(
			'editor: Messaging Trigger panel, listening for a test event',
			() =>
				withEditor(srv, async (s) => {
					const { page } = s;
					await openWorkflow(page, srv, created.id);
					await openNodePanel(page, 'Messaging Trigger');
					const notice = page.getByText('one webhook per account', { exact: false }).first();
					const noticeVisible = (await notice.count()) > 0 && (await notice.isVisible());
					const noticeText = noticeVisible
						? ((await notice.textContent()) ?? '').replace(/\s+/g, ' ').trim()
						: '';
					await docImage(s, 'messaging-trigger-panel');

					// "Execute step" on a webhook trigger listens for a test event.
					await page.getByTestId('node-execute-button').first().click();
					await page
						.getByText('Listening for test event', { exact: false })
						.first()
						.waitFor({ timeout: 60_000 })
						.catch(() => undefined);
					await page.waitForTimeout(1000);
					const header = page
						.getByText('Send a WhatsApp message to the account number', { exact: false })
						.first();
					const headerVisible = (await header.count()) > 0 && (await header.isVisible());
					const genericShown = (await page.getByText(/Go to .* and create an event/).count()) > 0;
					await docImage(s, 'messaging-trigger-listening');

					// The account's webhook now points at n8n's test URL: the sandbox's message goes there.
					let delivered: { status: number; url: string } | undefined;
					for (let i = 0; i < 20 && !delivered; i++) {
						const webhook = sandbox.accounts()[0]?.whatsappWebhook ?? '';
						if (webhook.includes('/webhook-test/'))
							delivered = await sandbox.deliverIncoming({
								type: 'text',
								message: MESSAGE,
								sender: '6281300000002@c.us',
								senderName: 'Budi',
							});
						else await sleep(500);
					}
					const received = page.getByText(MESSAGE, { exact: false }).first();
					await received.waitFor({ timeout: 60_000 }).catch(() => undefined);
					const receivedVisible = (await received.count()) > 0;
					await closeNodePanel(page);
					return {
						noticeVisible,
						noticeText,
						headerVisible,
						genericShown,
						delivered,
						receivedVisible,
					};
				}),
		);
		report.check(
			'editor: the trigger panel shows the one-webhook-per-account notice, saying publish and activate',
			seen.noticeVisible && /Publishing \(n8n 2\.x\) or activating \(1\.x\)/.test(seen.noticeText),
			{ notice: seen.noticeText },
		);
		// n8n 2.40.7's panel shows the trigger's own instruction (triggerPanel.header) until listening
		// starts; while listening it shows its fixed "Go to Messaging and create an event", which a
		// node cannot change (recorded as a fact, not asserted).
		report.check(
			"editor: the trigger panel shows the trigger's own instruction",
			seen.headerVisible,
			seen,
		);
		report.fact(
			'editor: n8n still shows its generic listening hint while listening',
			seen.genericShown,
		);
		report.check(
			'editor: a message the gateway posts while listening shows up in the panel',
			seen.delivered?.status === 200 && seen.receivedVisible,
			seen.delivered,
		);
		// n8n removes the test webhook after the test event: the account gets its webhook back.
		let webhookAfter = sandbox.accounts()[0]?.whatsappWebhook;
		for (let i = 0; i < 30 && webhookAfter !== webhookBefore; i++) {
			await sleep(500);
			webhookAfter = sandbox.accounts()[0]?.whatsappWebhook;
		}
		report.check(
			'editor: after the test event the account has its webhook of before listening back',
			webhookAfter === webhookBefore,
			{ webhookBefore, webhookAfter },
		);
	} finally {
		await srv
			.rest('POST', `/workflows/${created.id}/archive`)
			.catch((error: unknown) =>
				log(`could not archive the trigger-panel workflow: ${String(error)}`),
			);
	}
}
