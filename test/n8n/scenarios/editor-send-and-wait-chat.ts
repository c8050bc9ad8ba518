/**
 * The Send and Wait panel with Response By → Reply in the Chat (n8n 2.x only: the selectors are
 * 2.x's): the field shows "Reply in the Chat" and "Also Send Answer Links", shown only for it, is
 * in the panel. Screenshot: docs/.images/messaging-send-and-wait-chat.png (written with
 * --doc-images).
 */
import { docImage, openNodePanel, openWorkflow, withEditor } from '../editor';
import { NODE_TYPES, log, type ScenarioContext } from '../lib';

const ASK = 'Ask for Approval';

export async function editorShowsReplyInTheChat(t: ScenarioContext): Promise<void> {
	if (!t.options.editor || t.target.major < 2) {
		log(
			`editor Reply in the Chat scenario not run for ${t.target.label} (${t.options.editor ? "the editor selectors are n8n 2.x's" : '--no-editor'})`,
		);
		return;
	}
	const { report, server: srv } = t;
	const credentials = { messagingRateApi: { ...t.credential } };
	const created = await srv.rest<{ id: string }>('POST', '/workflows', {
		name: 'Editor: Send and Wait, Reply in the Chat',
		active: false,
		settings: {},
		nodes: [
			{
				id: 'trigger',
				name: 'On Message',
				type: NODE_TYPES.messagingTrigger,
				typeVersion: 1,
				position: [0, 0],
				webhookId: '3f0c2b9e-7d41-4c55-8a1e-5b6f0d2c9e17',
				parameters: { accountNumber: `+${t.account.number}` },
				credentials,
			},
			{
				id: 'ask',
				name: ASK,
				type: NODE_TYPES.messaging,
				typeVersion: 1,
				position: [260, 0],
				webhookId: '8b2d6e1a-4c3f-4f90-b7a2-1e9d5c0f3a68',
				parameters: {
					resource: 'message',
					operation: 'sendAndWait',
					phone: '={{ $json.sender }}',
					message: 'Send the March price list to 1,200 customers?',
					responseBy: 'chatReply',
				},
				credentials,
			},
		],
		connections: { 'On Message': { main: [[{ node: ASK, type: 'main', index: 0 }]] } },
	});
	const seen = await report.timed('editor: the Send and Wait panel, Reply in the Chat', () =>
		withEditor(srv, async (s) => {
			const { page } = s;
			await openWorkflow(page, srv, created.id);
			await openNodePanel(page, ASK);
			const field = page.getByTestId('parameter-input-responseBy');
			await field.first().hover();
			const input = field.locator('input');
			const responseBy = (await input.count()) ? await input.first().inputValue() : '';
			const panelText = await page
				.getByTestId('ndv')
				.evaluateAll((els) => els.map((el) => (el as HTMLElement).innerText).join('\n'));
			const path = await docImage(s, 'messaging-send-and-wait-chat');
			return { responseBy, panelText, path };
		}),
	);
	report.check(
		'editor: Response By shows "Reply in the Chat"',
		seen.responseBy === 'Reply in the Chat',
		{ responseBy: seen.responseBy },
	);
	report.check(
		'editor: the panel shows Response By and Also Send Answer Links (shown only for a reply in the chat)',
		seen.panelText.includes('Response By') && seen.panelText.includes('Also Send Answer Links'),
		seen.panelText.slice(0, 1500),
	);
	log(`screenshot ${seen.path}`);
}
