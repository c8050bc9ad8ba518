/**
 * Drives n8n's editor (2.40.x) with playwright-core and Debian's chromium.
 *
 * Never lets Playwright download a browser: playwright-core is loaded from the n8n cache folder
 * (see scripts/n8n-install.sh) and always launched with executablePath = Debian's chromium.
 * n8n's own markers are `data-test-id` attributes (not Playwright's default `data-testid`).
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { ARTIFACTS_DIR, REPO_ROOT, ensureInstall, log, type N8nServer } from './lib';

/* Minimal structural types for the parts of playwright-core used here (no compile-time dependency). */
interface PwLocator {
	click(o?: { timeout?: number }): Promise<void>;
	dblclick(o?: { timeout?: number }): Promise<void>;
	fill(value: string, o?: { timeout?: number }): Promise<void>;
	hover(o?: { timeout?: number }): Promise<void>;
	getAttribute(name: string): Promise<string | null>;
	screenshot(o: { path: string }): Promise<unknown>;
	first(): PwLocator;
	last(): PwLocator;
	nth(i: number): PwLocator;
	count(): Promise<number>;
	waitFor(o?: {
		state?: 'attached' | 'detached' | 'visible' | 'hidden';
		timeout?: number;
	}): Promise<void>;
	isVisible(): Promise<boolean>;
	allTextContents(): Promise<string[]>;
	textContent(): Promise<string | null>;
	inputValue(): Promise<string>;
	locator(sel: string): PwLocator;
	filter(o: { hasText?: string | RegExp; visible?: boolean }): PwLocator;
	evaluateAll<R, A = undefined>(fn: (els: Element[], arg: A) => R, arg?: A): Promise<R>;
}
export interface PwPage {
	goto(url: string, o?: { waitUntil?: string; timeout?: number }): Promise<unknown>;
	getByTestId(id: string): PwLocator;
	getByText(t: string | RegExp, o?: { exact?: boolean }): PwLocator;
	locator(sel: string): PwLocator;
	keyboard: {
		type(t: string, o?: { delay?: number }): Promise<void>;
		press(k: string): Promise<void>;
	};
	screenshot(o: { path: string; fullPage?: boolean }): Promise<unknown>;
	waitForTimeout(ms: number): Promise<void>;
	url(): string;
	evaluate<R, A>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
	on(ev: string, fn: (x: any) => void): void; // eslint-disable-line @typescript-eslint/no-explicit-any
}
interface PwRoute {
	request(): { url(): string };
	abort(code?: string): Promise<void>;
	continue(): Promise<void>;
}
interface PwContext {
	addCookies(c: Array<{ name: string; value: string; url: string }>): Promise<void>;
	route(url: string, handler: (r: PwRoute) => Promise<void>): Promise<void>;
	pages(): PwPage[];
	newPage(): Promise<PwPage>;
	close(): Promise<void>;
}
interface PlaywrightCore {
	chromium: {
		launchPersistentContext(dir: string, o: Record<string, unknown>): Promise<PwContext>;
	};
	selectors: { setTestIdAttribute(a: string): void };
}

const CHROMIUM_ARGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
];

export interface EditorSession {
	page: PwPage;
	/**
	 * Requests the page tried to make to hosts other than n8n. They are all blocked (aborted) so
	 * tests stay offline. Expected: for a community node the editor looks up
	 * https://registry.npmjs.org/<package> and api.npmjs.org download counts (see isExpectedExternal).
	 */
	externalRequests: string[];
	/** Uncaught page errors and console errors. */
	errors: string[];
	/** Saves test-artifacts/n8n/<name>.png and returns its path. */
	screenshot(name: string): Promise<string>;
}

/** External requests the editor makes by design for community nodes (npm metadata), blocked in tests. */
export function isExpectedExternal(url: string): boolean {
	return /^https:\/\/(registry|api)\.npmjs\.org\//.test(url);
}

function loadPlaywright(): PlaywrightCore {
	const path = ensureInstall().playwright;
	if (!path) throw new Error('the n8n install pins no playwright-core');
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const pw = require(path) as PlaywrightCore;
	pw.selectors.setTestIdAttribute('data-test-id');
	return pw;
}

/**
 * Opens a fresh chromium profile logged in as the owner (cookie from startN8n), runs `fn`, closes.
 */
export async function withEditor<T>(
	server: N8nServer,
	fn: (s: EditorSession) => Promise<T>,
	/** Other local origins the page may reach (the sandbox's phone page). */
	alsoAllow: string[] = [],
): Promise<T> {
	const inst = ensureInstall();
	const pw = loadPlaywright();
	mkdirSync(ARTIFACTS_DIR, { recursive: true });
	const profile = mkdtempSync(join(tmpdir(), 'n8n-e2e-chromium-'));
	const ctx = await pw.chromium.launchPersistentContext(profile, {
		executablePath: inst.chromium,
		headless: true,
		args: CHROMIUM_ARGS,
		viewport: { width: 1440, height: 900 },
		locale: 'en-US',
		timezoneId: 'UTC',
	});
	try {
		if (!server.authCookie) await server.login();
		await ctx.addCookies([server.playwrightCookie()]);
		const externalRequests: string[] = [];
		const errors: string[] = [];
		const origin = new URL(server.url).origin;
		await ctx.route('**/*', async (route) => {
			const u = route.request().url();
			if (
				[origin, ...alsoAllow].some((allowed) => u.startsWith(allowed)) ||
				/^(data|blob|about|chrome-extension):/.test(u)
			)
				return await route.continue();
			externalRequests.push(u);
			await route.abort('blockedbyclient');
		});
		const page = ctx.pages()[0] ?? (await ctx.newPage());
		page.on('pageerror', (e: Error) => errors.push(`pageerror: ${e.message}`));
		page.on('console', (m: { type(): string; text(): string }) => {
			// Aborted external requests show up as console errors; they are reported in externalRequests.
			if (m.type() === 'error' && !/ERR_BLOCKED_BY_CLIENT/.test(m.text()))
				errors.push(`console: ${m.text().slice(0, 300)}`);
		});
		const session: EditorSession = {
			page,
			externalRequests,
			errors,
			screenshot: async (name: string) => {
				const path = join(ARTIFACTS_DIR, `${name}.png`);
				await page.screenshot({ path });
				log(`screenshot ${path}`);
				return path;
			},
		};
		return await fn(session);
	} finally {
		await ctx.close();
		rmSync(profile, { recursive: true, force: true });
	}
}

/** Opens a workflow (or /workflow/new) and waits until the canvas is interactive. */
export async function openWorkflow(
	page: PwPage,
	server: N8nServer,
	workflowId = 'new',
): Promise<void> {
	await page.goto(`${server.url}/workflow/${workflowId}`, { timeout: 120_000 });
	if (/\/signin/.test(page.url()))
		throw new Error('editor redirected to /signin: the auth cookie was not accepted');
	await page.getByTestId('canvas-wrapper').waitFor({ timeout: 120_000 });
	// The empty canvas shows a "+" (canvas-plus-button); a populated one shows the top-right creator button.
	await page
		.locator('[data-test-id="canvas-plus-button"], [data-test-id="node-creator-plus-button"]')
		.first()
		.waitFor({ timeout: 60_000 });
}

async function visibleTexts(loc: PwLocator): Promise<string[]> {
	return await loc.evaluateAll((els) =>
		els
			.filter((e) => (e as HTMLElement).offsetParent !== null)
			.map((e) => ((e.querySelector('.option-headline') ?? e).textContent ?? '').trim())
			.filter(Boolean),
	);
}

/** Types into the node creator's search box and picks a result by exact name (else the first result). */
async function pickFromNodeCreator(
	page: PwPage,
	search: string,
	itemName?: string,
): Promise<string[]> {
	const input = page.getByTestId('node-creator-search-bar');
	await input.waitFor({ timeout: 30_000 });
	await input.click();
	await page.keyboard.type(search, { delay: 20 });
	const names = page.getByTestId('node-creator-item-name');
	await names.first().waitFor({ timeout: 30_000 });
	await page.waitForTimeout(300); // results settle after the debounce
	const results = await visibleTexts(names);
	const wanted = itemName ?? search;
	const idx = results.findIndex((r) => r === wanted);
	const target = idx >= 0 ? idx : 0;
	if (!results.length) throw new Error(`node creator: no results for "${search}"`);
	await names.filter({ visible: true }).nth(target).click();
	return results;
}

/** After picking a node with resource/operation, n8n lists its actions; pick one (default: the first). */
async function pickActionIfListed(page: PwPage, action?: string): Promise<string[]> {
	const actionItems = page.locator(
		'[data-test-id="item-iterator-item"][data-keyboard-nav-type="action"]',
	);
	const ndv = page.getByTestId('ndv');
	for (let i = 0; i < 40; i++) {
		if (await ndv.isVisible()) return [];
		if ((await actionItems.count()) > 0) break;
		await page.waitForTimeout(250);
	}
	if (await ndv.isVisible()) return [];
	const names = await visibleTexts(actionItems.locator('[data-test-id="node-creator-item-name"]'));
	if (!names.length)
		throw new Error('node creator: neither an action list nor the node panel appeared');
	const target = action ? actionItems.filter({ hasText: action }).first() : actionItems.first();
	await target.click();
	return names;
}

/** Opens a select parameter's dropdown and returns its option texts (headline only) and the selected one. */
async function readSelectOptions(
	page: PwPage,
	parameterName: string,
): Promise<{ options: string[]; selected?: string } | undefined> {
	const input = page.getByTestId(`parameter-input-${parameterName}`);
	if ((await input.count()) === 0 || !(await input.first().isVisible())) return undefined;
	await input.first().click();
	const items = page.getByTestId('parameter-input-item');
	for (let i = 0; i < 20; i++) {
		if ((await visibleTexts(items)).length) break;
		await page.waitForTimeout(150);
	}
	const options = await visibleTexts(items);
	const selected = (
		await visibleTexts(page.locator('[data-test-id="parameter-input-item"].selected'))
	)[0];
	await closeDropdowns(page, parameterName);
	return { options, selected };
}

/** Closes an open select dropdown without leaving the node panel (Escape may close the whole panel). */
async function closeDropdowns(page: PwPage, parameterName: string): Promise<void> {
	const items = page.getByTestId('parameter-input-item');
	await page.getByTestId(`parameter-input-${parameterName}`).first().click();
	for (let i = 0; i < 20 && (await visibleTexts(items)).length; i++) {
		if (i === 5)
			await page.locator(`label.n8n-input-label[for="${parameterName}"]`).first().click();
		await page.waitForTimeout(100);
	}
	if ((await visibleTexts(items)).length)
		throw new Error(`could not close the "${parameterName}" dropdown`);
}

export interface InspectNodeOptions {
	/** Text typed into the node panel's search box, e.g. "Messaging". */
	search: string;
	/** Exact result name to pick (default: the result equal to `search`, else the first). */
	itemName?: string;
	/** Action to pick when n8n lists the node's actions (substring; default: the first). */
	action?: string;
	/** The node is a trigger: it is added as the first node of the new workflow. */
	trigger?: boolean;
	/** Prefix of screenshot files in test-artifacts/n8n/ (default: derived from `search`). */
	screenshotPrefix?: string;
}

export interface InspectNodeResult {
	searchResults: string[];
	actions: string[];
	/** Node name shown in the panel's title (n8n names a node added from an action after the action). */
	nodeTitle: string;
	/** Visible parameters: `name` is the parameter's internal name, `label` its display name. */
	parameters: Array<{ name: string; label: string }>;
	/** Option texts of the Resource selector (undefined: the node has none). */
	resourceOptions?: string[];
	resourceSelected?: string;
	/** Option texts of the Operation selector shown for the selected resource. */
	operationOptions?: string[];
	operationSelected?: string;
	screenshots: string[];
	externalRequests: string[];
	errors: string[];
	ms: number;
}

/** New workflow → (Manual Trigger first, unless `trigger`) → node panel search → node (and action) → the Resource and Operation option lists from the open parameter panel, inside an open withEditor() session. */
export async function inspectNode(
	s: EditorSession,
	server: N8nServer,
	opts: InspectNodeOptions,
): Promise<InspectNodeResult> {
	const started = Date.now();
	const firstExternal = s.externalRequests.length;
	const firstError = s.errors.length;
	const prefix =
		opts.screenshotPrefix ?? `editor-${opts.search.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
	{
		const { page } = s;
		const screenshots: string[] = [];
		await openWorkflow(page, server, 'new');
		await page.getByTestId('canvas-plus-button').click();
		if (!opts.trigger) {
			// A new workflow's first panel lists only triggers; add one so the regular node list opens.
			await pickFromNodeCreator(page, 'Manual Trigger', 'Manual Trigger');
			await page.getByTestId('canvas-trigger-node').first().waitFor({ timeout: 30_000 });
			await page.getByTestId('node-creator-plus-button').click();
		}
		const searchResults = await pickFromNodeCreator(page, opts.search, opts.itemName);
		const actions = await pickActionIfListed(page, opts.action);
		await page.getByTestId('ndv').waitFor({ timeout: 30_000 });
		await page.getByTestId('node-parameters').waitFor({ timeout: 30_000 });
		await page.waitForTimeout(500);
		screenshots.push(await s.screenshot(`${prefix}-1-ndv`));
		const nodeTitle = (
			(await page
				.locator('[data-test-id="node-title-container"] [data-test-id="inline-edit-preview"]')
				.first()
				.textContent()) ?? ''
		).trim();
		const parameters = await page
			.locator('[data-test-id="ndv"] [data-test-id="node-parameters"] label.n8n-input-label')
			.evaluateAll((els) =>
				els
					.filter((e) => (e as HTMLElement).offsetParent !== null)
					.map((e) => ({
						name: e.getAttribute('for') ?? '',
						label: (e.querySelector('span.n8n-text')?.textContent ?? e.textContent ?? '').trim(),
					})),
			);
		const resource = await readSelectOptions(page, 'resource');
		if (resource) {
			await page.getByTestId('parameter-input-resource').first().click();
			await page.waitForTimeout(300);
			screenshots.push(await s.screenshot(`${prefix}-2-resource`));
			await closeDropdowns(page, 'resource');
		}
		const operation = await readSelectOptions(page, 'operation');
		if (operation) {
			await page.getByTestId('parameter-input-operation').first().click();
			await page.waitForTimeout(300);
			screenshots.push(await s.screenshot(`${prefix}-3-operation`));
			await closeDropdowns(page, 'operation');
		}
		return {
			searchResults,
			actions,
			nodeTitle,
			parameters,
			resourceOptions: resource?.options,
			resourceSelected: resource?.selected,
			operationOptions: operation?.options,
			operationSelected: operation?.selected,
			screenshots,
			externalRequests: s.externalRequests.slice(firstExternal),
			errors: s.errors.slice(firstError),
			ms: Date.now() - started,
		};
	}
}

export interface WorkflowShot {
	path: string;
	nodeCount: number;
	/** Node names on the canvas. */
	nodeNames: string[];
	externalRequests: string[];
	errors: string[];
}

/** Opens an existing workflow on the canvas and saves a screenshot (e.g. an imported example), inside an open withEditor() session. */
export async function screenshotWorkflowIn(
	s: EditorSession,
	server: N8nServer,
	workflowId: string,
	name: string,
): Promise<WorkflowShot> {
	const firstExternal = s.externalRequests.length;
	const firstError = s.errors.length;
	await openWorkflow(s.page, server, workflowId);
	await s.page.getByTestId('canvas-node').first().waitFor({ timeout: 60_000 });
	await s.page.waitForTimeout(800);
	const nodeCount = await s.page.getByTestId('canvas-node').count();
	const nodeNames = await s.page
		.getByTestId('canvas-node')
		.evaluateAll((els) =>
			els.map((e) => e.getAttribute('data-node-name') ?? (e.textContent ?? '').trim()),
		);
	const path = await s.screenshot(name);
	return {
		path,
		nodeCount,
		nodeNames,
		externalRequests: s.externalRequests.slice(firstExternal),
		errors: s.errors.slice(firstError),
	};
}

/** Opens a node of the open workflow in its panel (NDV), by its name on the canvas. */
export async function openNodePanel(page: PwPage, nodeName: string): Promise<void> {
	await page
		.locator(`[data-test-id="canvas-node"][data-node-name="${nodeName}"]`)
		.first()
		.dblclick();
	await page.getByTestId('ndv').waitFor({ timeout: 30_000 });
	await page.getByTestId('node-parameters').waitFor({ timeout: 30_000 });
	await page.waitForTimeout(300);
}

export async function closeNodePanel(page: PwPage): Promise<void> {
	await page.getByTestId('ndv-close-button').first().click();
	await page.getByTestId('ndv').waitFor({ state: 'hidden', timeout: 30_000 });
}

/** The href of the open panel's "Docs" link (top right), as the editor renders it. */
export async function panelDocsLink(page: PwPage): Promise<string | undefined> {
	return await panelLink(page, 'Docs');
}

/** The first link of the open panel whose text is `text`. */
async function panelLink(page: PwPage, text: string): Promise<string | undefined> {
	const hrefs = await page
		.locator('[data-test-id="ndv"] a')
		.evaluateAll(
			(els, wanted) =>
				els
					.filter((e) => (e.textContent ?? '').trim() === wanted)
					.map((e) => (e as HTMLAnchorElement).href),
			text,
		);
	return hrefs[0];
}

/** The link of the open panel's operation notice ("…: its fields, … in the docs"), if shown. */
export async function operationDocsLink(page: PwPage): Promise<string | undefined> {
	return await panelLink(page, 'docs');
}

/** Each canvas node's subtitle (the grey line under its name), by node name. */
export async function canvasSubtitles(page: PwPage): Promise<Record<string, string>> {
	const pairs = await page
		.getByTestId('canvas-node')
		.evaluateAll((els) =>
			els.map(
				(e) =>
					[
						e.getAttribute('data-node-name') ?? '',
						(e.querySelector('[class*="subtitle"]')?.textContent ?? '').trim(),
					] as [string, string],
			),
		);
	return Object.fromEntries(pairs);
}

/**
 * A screenshot the docs show: saved as test-artifacts/n8n/docs-images/<name>.png, and written over
 * docs/.images/<name>.png when the run was started with --doc-images (so that a normal run never
 * changes tracked files).
 */
export async function docImage(s: EditorSession, name: string): Promise<string> {
	const dir = join(ARTIFACTS_DIR, 'docs-images');
	mkdirSync(dir, { recursive: true });
	const path = join(dir, `${name}.png`);
	await s.page.screenshot({ path });
	if (process.argv.includes('--doc-images')) {
		copyFileSync(path, join(REPO_ROOT, 'docs', '.images', `${name}.png`));
		log(`docs/.images/${name}.png updated`);
	}
	return path;
}
