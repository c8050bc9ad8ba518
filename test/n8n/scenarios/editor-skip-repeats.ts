/**
 * The editor shows Skip Repeats Within (n8n 2.x only: the selectors are 2.x's): in a Messaging
 * node of version 2 and in one saved with version 1, Options → Add option lists "Skip Repeats
 * Within (Hours)" and "Idempotency Key"; added, Skip Repeats Within shows 8 and its hint.
 * Screenshot: docs/.images/messaging-skip-repeats.png (written with --doc-images).
 */
import { closeNodePanel, docImage, openNodePanel, openWorkflow, withEditor } from '../editor';
import { NODE_TYPES, log, type ScenarioContext } from '../lib';

const NEW_OPTIONS = ['Skip Repeats Within (Hours)', 'Idempotency Key'];

function sendText(name: string, typeVersion: number, x: number, credential: unknown) {
	return {
		id: `send-text-v${typeVersion}`,
		name,
		type: NODE_TYPES.messaging,
		typeVersion,
		position: [x, 0],
		parameters: {
			resource: 'message',
			operation: 'sendText',
			phone: '+62 812-8877-6713',
			text: 'Your order is ready',
			options: {},
		},
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
			sendText('Send Text (version 2)', 2, 0, { ...t.credential }),
			sendText('Send Text (version 1)', 1, 300, { ...t.credential }),
		],
		connections: {},
	});
	const seen = await report.timed('editor: the Options of Send Text, version 2 and version 1', () =>
		withEditor(srv, async (s) => {
			const { page } = s;
			await openWorkflow(page, srv, created.id);
			const listed: Record<string, string[]> = {};
			let shown = { value: '', description: '' };
			for (const name of ['Send Text (version 1)', 'Send Text (version 2)']) {
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
				if (name === 'Send Text (version 2)') {
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
	for (const [name, options] of Object.entries(seen.listed))
		report.check(
			`editor: ${name}: Options → Add option lists ${NEW_OPTIONS.join(' and ')}`,
			NEW_OPTIONS.every((option) => options.includes(option)),
			options,
		);
	const delays = (name: string) =>
		(seen.listed[name] ?? []).filter((option) => option.startsWith('Delay Between'));
	report.check(
		'editor: a version 2 Send Text offers one delay (Delay Between Messages); version 1 keeps both',
		JSON.stringify(delays('Send Text (version 2)')) === '["Delay Between Messages"]' &&
			delays('Send Text (version 1)').length === 2,
		{ v2: delays('Send Text (version 2)'), v1: delays('Send Text (version 1)') },
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
