/**
 * The node picker as a newcomer meets it (issue 48, item 1), n8n 2.x only: after a Manual
 * Trigger, a search for "Currency Rate" and one for "Messaging" list the package's entries, each
 * under its own name (nothing cut to "Messaging Account ") and with its own node's description
 * (n8n shows a merged trigger's description for the pair: Currency Rate showed its trigger's).
 * Names are read as the DOM holds them, so a space at either end shows.
 * Screenshot: docs/.images/node-picker.png (written with --doc-images).
 */
import { packageNodeDescriptions } from '../../../scripts/docs';
import { docImage, openWorkflow, withEditor, type PwPage } from '../editor';
import { log, type ScenarioContext } from '../lib';

const OWN_DESCRIPTION = Object.fromEntries(
	packageNodeDescriptions().map(({ description }) => [
		description.displayName,
		description.description,
	]),
);
const SEARCHES: Record<string, string[]> = {
	'Currency Rate': ['Currency Rate'],
	'Messaging': ['Messaging', 'Messaging Account Trigger'],
};

type Entry = { name: string; description: string };

/** The visible entries of the open node picker, name and description as the DOM holds them. */
async function entries(page: PwPage): Promise<Entry[]> {
	return await page.locator('[data-test-id="item-iterator-item"]').evaluateAll((els) =>
		els
			.filter((e) => (e as HTMLElement).offsetParent !== null)
			.map((e) => ({
				name: e.querySelector('[data-test-id="node-creator-item-name"]')?.textContent ?? '',
				description:
					e.querySelector('[data-test-id="node-creator-item-description"]')?.textContent ?? '',
			})),
	);
}

async function search(page: PwPage, text: string): Promise<Entry[]> {
	const input = page.getByTestId('node-creator-search-bar');
	await input.fill('');
	await input.click();
	await page.keyboard.type(text, { delay: 20 });
	await page.getByTestId('node-creator-item-name').first().waitFor({ timeout: 30_000 });
	await page.waitForTimeout(500); // results settle after the debounce
	return await entries(page);
}

export async function editorNodePickerNamesAndDescriptions(t: ScenarioContext): Promise<void> {
	if (!t.options.editor || t.target.major < 2) {
		log(
			`editor node-picker scenario not run for ${t.target.label} (${t.options.editor ? "the editor selectors are n8n 2.x's" : '--no-editor'})`,
		);
		return;
	}
	const { report, server: srv } = t;
	const found = await report.timed('editor: the node picker, searched as a newcomer does', () =>
		withEditor(srv, async (s) => {
			const { page } = s;
			await openWorkflow(page, srv, 'new');
			await page.getByTestId('canvas-plus-button').click();
			await search(page, 'Manual Trigger');
			await page
				.getByTestId('node-creator-item-name')
				.filter({ hasText: 'Manual Trigger' })
				.first()
				.click();
			await page.getByTestId('canvas-trigger-node').first().waitFor({ timeout: 30_000 });
			await page.getByTestId('node-creator-plus-button').click();
			const seen: Record<string, Entry[]> = {};
			for (const text of Object.keys(SEARCHES)) {
				seen[text] = await search(page, text);
				if (text === 'Messaging') await docImage(s, 'node-picker');
				else await s.screenshot(`node-picker-${text.toLowerCase().replace(/\W+/g, '-')}`);
			}
			return seen;
		}),
	);
	for (const [text, expected] of Object.entries(SEARCHES)) {
		const ours = found[text].filter(({ name }) => /^\s*(Messaging|Currency Rate)\b/.test(name));
		report.check(
			`editor: "${text}" lists ${expected.join(' and ')}, each with its own description`,
			JSON.stringify(ours) ===
				JSON.stringify(expected.map((name) => ({ name, description: OWN_DESCRIPTION[name] }))),
			found[text],
		);
		report.check(
			`editor: no entry of the package found by "${text}" has a space at either end of its name`,
			ours.length > 0 && ours.every(({ name }) => name === name.trim()),
			ours.map(({ name }) => JSON.stringify(name)),
		);
	}
}
