/**
 * The editor shows Skip Repeats Within (n8n 2.x only: the selectors are 2.x's): in a Send Text,
 * Options → Add option lists "Skip Repeats Within (Hours)" and "Idempotency Key" and one delay,
 * Delay Between Messages; added, Skip Repeats Within shows 8 and its hint. A read (Number →
 * Check) offers Delay Between Requests and none of the send options.
 * Screenshot: docs/.images/messaging-skip-repeats.png (written with --doc-images).
 */
import { closeNodePanel, docImage, openNodePanel, openWorkflow, withEditor } from '../editor';
import { NODE_TYPES, log, type ScenarioContext } from '../lib';

const SEND_OPTIONS = ['Skip Repeats Within (Hours)', 'Idempotency Key'];
const SEND_TEXT = 'Send Text';
const CHECK_NUMBER = 'Check Number';

function messagingNode(name: string, x: number, parameters: object, credential: unknown) {
	return {
		id: name.toLowerCase().replace(/ /g, '-'),
		name,
		type: NODE_TYPES.messaging,
		typeVersion: 1,
		position: [x, 0],
		parameters: { ...parameters, options: {} },
		credentials: { messagingRateApi: credential },
	};
}

export async function editorShowsSkipRepeatsWithin(t: ScenarioContext): Promise<void> {
	if (!t.options.editor || t.target.major < 2) {
		log(
			`editor Skip Repeats Within scenario not run for ${t.target.label} (${t.options.editor ? "the editor selectors are n8n 2.x's" : '--no-editor'})`,
		);
		return;
	}
	const { report, server: srv } = t;
	const created = await srv.rest<{ id: string }>('POST', '/workflows', {
		name: 'Editor: Skip Repeats Within',
		active: false,
		settings: {},
		nodes: [
			messagingNode(
				SEND_TEXT,
				0,
				{
					resource: 'message',
					operation: 'sendText',
					phone: '+62 812-8877-6713',
					text: 'Your order is ready',
				},
				{ ...t.credential },
			),
			messagingNode(
				CHECK_NUMBER,
				300,
				{ resource: 'number', operation: 'check', phone: '+62 812-8877-6713' },
				{ ...t.credential },
			),
		],
		connections: {},
	});
	const seen = await report.timed('editor: the Options of Send Text and of Number → Check', () =>
		withEditor(srv, async (s) => {
			const { page } = s;
			await openWorkflow(page, srv, created.id);
			const listed: Record<string, string[]> = {};
			let shown = { value: '', description: '' };
			for (const name of [CHECK_NUMBER, SEND_TEXT]) {
				await openNodePanel(page, name);
				// The Options collection's "Add option" select (n8n 2.x: data-test-id collection-parameter-add).
				await page.getByTestId('collection-parameter-add').first().click();
				await page.waitForTimeout(400);
				listed[name] = await page
					.locator('.el-select-dropdown__item')
					.evaluateAll((els) =>
						els
							.filter((e) => (e as HTMLElement).offsetParent !== null)
							.map((e) => (e.textContent ?? '').trim()),
					);
				if (name === SEND_TEXT) {
					await page
						.locator('.el-select-dropdown__item')
						.filter({ hasText: 'Skip Repeats Within (Hours)', visible: true })
						.first()
						.click();
					await page.waitForTimeout(500);
					const input = page.locator(
						'[data-test-id="parameter-input-skipRepeatsHours"] input, [data-test-id="parameter-input-field"][title*="Skip"]',
					);
					shown = {
						value: (await input.count()) ? await input.first().inputValue() : '',
						description: await page
							.locator('[data-test-id="ndv"]')
							.evaluateAll((els) => els.map((el) => (el as HTMLElement).innerText).join('\n')),
					};
					await docImage(s, 'messaging-skip-repeats');
				} else {
					await page.keyboard.press('Escape');
				}
				await closeNodePanel(page);
			}
			return { listed, shown, errors: s.errors };
		}),
	);
	const sendOptions = seen.listed[SEND_TEXT] ?? [];
	const checkOptions = seen.listed[CHECK_NUMBER] ?? [];
	const delays = (options: string[]) =>
		options.filter((option) => option.startsWith('Delay Between'));
	report.check(
		`editor: Send Text: Options → Add option lists ${SEND_OPTIONS.join(' and ')}`,
		SEND_OPTIONS.every((option) => sendOptions.includes(option)),
		sendOptions,
	);
	report.check(
		'editor: Send Text offers one delay (Delay Between Messages); Number → Check offers Delay Between Requests and no send option',
		JSON.stringify(delays(sendOptions)) === '["Delay Between Messages"]' &&
			JSON.stringify(delays(checkOptions)) === '["Delay Between Requests (Ms)"]' &&
			!SEND_OPTIONS.some((option) => checkOptions.includes(option)),
		{ sendText: delays(sendOptions), check: checkOptions },
	);
	report.check(
		'editor: Skip Repeats Within (Hours), once added, shows 8 and its hint under it',
		seen.shown.value === '8' &&
			seen.shown.description.includes(
				'Not sent again within this many hours: the same message to the same number from the same event (a Retry, a re-run, a redelivery). 0: send every time.',
			),
		{ value: seen.shown.value },
	);
	await srv.rest('DELETE', `/workflows/${created.id}`).catch(() => undefined);
}
