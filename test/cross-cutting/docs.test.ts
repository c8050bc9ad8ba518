/**
 * The documentation against the code: the generated operation tables are up to date, every
 * operation has a section with an example, and every link a user or the editor follows (README,
 * CONTRIBUTING, docs/, the nodes' codex files, the credential) points at an existing file and
 * heading.
 */
import { existsSync, readFileSync, readdirSync } from 'fs';
import { dirname, join, normalize, relative } from 'path';

import { MessagingRateApi } from '../../credentials/MessagingRateApi.credentials';
import {
	GENERATED_BLOCKS,
	OPERATION_NODES,
	REPOSITORY,
	ROOT,
	expectedText,
	headingAnchors,
	operationCatalog,
	packageNodeDescriptions,
	repositoryTarget,
} from '../../scripts/docs';
import { PROVIDER_FROM_AI } from '../harness/currencyRateNode';
import { OWNER } from '../n8n/lib/server';
import { ApiError, endpoints } from '../../nodes/shared/transport';

/** Where every Docs link points: the package's docs/ folder on GitHub. */
const DOCUMENTATION_URL = `${REPOSITORY}/blob/main/docs/`;

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const MARKDOWN_FILES = [
	'README.md',
	'CONTRIBUTING.md',
	...readdirSync(join(ROOT, 'docs'))
		.filter((f) => f.endsWith('.md'))
		.map((f) => `docs/${f}`),
];

/** Where a link leads inside the repository, or undefined for a link elsewhere. */
function localTarget(
	fromFile: string,
	href: string,
): { file: string; anchor?: string } | undefined {
	const [path, anchor] = href.split('#', 2) as [string, string | undefined];
	if (href.startsWith(REPOSITORY)) {
		const rest = path.slice(REPOSITORY.length);
		if (rest === '' || rest === '/') return { file: 'README.md', anchor };
		const blob = /^\/(?:blob|tree)\/main\/(.+)$/.exec(rest);
		if (!blob) throw new Error(`A link into the repository that is not a file: ${href}`);
		return { file: blob[1], anchor };
	}
	if (/^[a-z]+:/i.test(href)) return undefined;
	if (path === '') return { file: fromFile, anchor };
	return { file: normalize(relative(ROOT, join(ROOT, dirname(fromFile), path))), anchor };
}

/** The problem with a link, or undefined when it leads to an existing file and heading. */
function brokenLink(fromFile: string, href: string): string | undefined {
	const target = localTarget(fromFile, href);
	if (!target) return undefined;
	const file = target.file.replace(/\/$/, '');
	if (!existsSync(join(ROOT, file))) return `${fromFile}: ${href} → no file ${file}`;
	if (target.anchor === undefined) return undefined;
	if (!file.endsWith('.md'))
		return `${fromFile}: ${href} → an anchor in a file that is not Markdown`;
	return headingAnchors(read(file)).has(target.anchor)
		? undefined
		: `${fromFile}: ${href} → no heading #${target.anchor} in ${file}`;
}

/** Markdown links and images outside code blocks and inline code. */
function linksOf(markdown: string): string[] {
	const prose = markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
	return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]);
}

/** The Markdown between a heading and the next heading of the same or a higher level. */
function section(markdown: string, heading: string): string | undefined {
	const lines = markdown.split('\n');
	const start = lines.findIndex(
		(line) => /^(#+)\s/.test(line) && line.replace(/^#+\s+/, '').trim() === heading,
	);
	if (start === -1) return undefined;
	const level = /^#+/.exec(lines[start])![0].length;
	const end = lines.findIndex((line, i) => i > start && new RegExp(`^#{1,${level}}\\s`).test(line));
	return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}

describe('generated operation tables', () => {
	it.each([...new Set(GENERATED_BLOCKS.map((block) => block.file))])(
		'%s is up to date (run `npm run docs`)',
		(file) => {
			expect(read(file)).toBe(expectedText(file));
		},
	);

	it('list every operation of every node, once', () => {
		const readme = read('README.md');
		for (const row of operationCatalog()) {
			expect(readme.split(`[${row.heading}](${row.doc}#`).length - 1).toBeGreaterThanOrEqual(1);
			expect(read(row.doc).split(`| [${row.heading}](#`).length - 1).toBe(1);
		}
		// Messaging 11 + Currency Rate 3 today; a new operation must appear without editing this test.
		expect(operationCatalog().length).toBe(
			OPERATION_NODES.flatMap((n) => n.resources.flatMap((r) => r.operations)).length,
		);
	});
});

describe('reference', () => {
	it.each(operationCatalog().map((row) => [row.heading, row.doc] as const))(
		'%s has a section with an example in %s',
		(heading, doc) => {
			const text = section(read(doc), heading);
			expect(text).toBeDefined();
			expect(text).toMatch(/```json\n[\s\S]+?\n```/);
		},
	);

	it.each(['docs/currency-rate.md', 'docs/ai-agents.md'])(
		'%s shows the exact $fromAI line that fills the Provider',
		(doc) => {
			expect(read(doc)).toContain(`\`${PROVIDER_FROM_AI}\``);
		},
	);

	it.each([
		'docs/messaging.md',
		'docs/currency-rate.md',
		'docs/messaging-trigger.md',
		'docs/messaging-account-trigger.md',
	])('%s has its troubleshooting', (doc) => {
		expect(section(read(doc), 'Troubleshooting') ?? section(read(doc), 'Errors')).toMatch(/\|.*\|/);
	});

	it.each(['README.md', 'docs/delivery-and-scale.md', 'docs/messaging.md'])(
		'%s quotes the exact words a "may have been delivered" error ends with',
		(doc) => {
			const flat = read(doc).replace(/\s+/g, ' ');
			// What a send's error says when its answer was lost, as the error itself words it.
			const lost = new ApiError(endpoints.sendMessage, {
				kind: 'network',
				reason: 'lost',
				answer: 'lost',
			});
			expect(flat).toContain(lost.message.split('; ').slice(1).join('; '));
		},
	);

	it('keeps the README the front door: short, with the two set-up commands', () => {
		const readme = read('README.md');
		// About 10 KB, with room for the compatibility table; the reference lives in docs/.
		expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(12_000);
		expect(readme).toContain('npm ci && npm run demo');
		expect(readme).toMatch(/^npm test\b/m);
	});

	it('gives the login `npm run n8n` creates, and how long the set-up commands take', () => {
		const readme = read('README.md').replace(/\s+/g, ' ');
		expect(readme).toContain(`\`${OWNER.email}\` / \`${OWNER.password}\``);
		expect(readme).toMatch(/npm test .*\(\d+–\d+ min/);
		expect(readme).toMatch(
			/`npm run n8n` starts real n8n.{0,120}\(about a minute; its first run installs n8n/,
		);
	});
});

describe('links', () => {
	it.each(MARKDOWN_FILES)('every link in %s leads to an existing file and heading', (file) => {
		const broken = linksOf(read(file))
			.map((href) => brokenLink(file, href))
			.filter((problem) => problem !== undefined);
		expect(broken).toEqual([]);
	});

	const codexFiles = readdirSync(join(ROOT, 'nodes'))
		.map((folder) => `nodes/${folder}/${folder}.node.json`)
		.filter((file) => existsSync(join(ROOT, file)));

	it.each(codexFiles)('%s links existing docs, the primary one without an anchor', (file) => {
		const codex = JSON.parse(read(file)) as { resources: Record<string, Array<{ url: string }>> };
		const { primaryDocumentation, credentialDocumentation } = codex.resources;
		expect(primaryDocumentation).toHaveLength(1);
		// n8n appends its tracking query after this URL: an anchor would break.
		expect(primaryDocumentation[0].url).not.toContain('#');
		expect(primaryDocumentation[0].url).toMatch(/\/docs\/[a-z-]+\.md$/);
		for (const { url } of [...primaryDocumentation, ...credentialDocumentation]) {
			expect(localTarget(file, url)).toBeDefined();
			expect(brokenLink(file, url)).toBeUndefined();
		}
	});

	it.each(
		packageNodeDescriptions().map(({ source, description }) => [source, description] as const),
	)("%s: the editor's Docs link leads to the node's heading in docs/", (_source, description) => {
		const url = description.documentationUrl ?? '';
		// n8n uses an http… documentationUrl as written (a codex link gets a query after its #anchor).
		expect(url).toMatch(/^https:\/\//);
		expect(url.startsWith(`${REPOSITORY}/blob/main/docs/`)).toBe(true);
		expect(brokenLink('nodes', url)).toBeUndefined();
		// The node's own section: the heading with that anchor names the node.
		expect(repositoryTarget(url)?.heading).toBe(description.displayName);
	});

	it.each(['messaging', 'currencyRate'] as const)(
		"%s: each operation's panel links its own section of the node's page",
		(type) => {
			const { description } = packageNodeDescriptions().find(
				({ description }) => description.name === type,
			)!;
			const nameOf = (name: string, value: unknown) =>
				description.properties
					.filter((property) => property.name === name)
					.flatMap((property) => property.options ?? [])
					.find((option) => 'value' in option && option.value === value)?.name;
			const notices = description.properties.filter((p) => p.name === 'operationDocsNotice');
			const operations = description.properties
				.filter((p) => p.name === 'operation')
				.flatMap((p) => p.options ?? []);
			expect(notices).toHaveLength(operations.length);
			for (const notice of notices) {
				const show = notice.displayOptions?.show ?? {};
				const [resource] = show.resource as string[];
				const [operation] = show.operation as string[];
				const url = /href="([^"]+)"/.exec(notice.displayName)![1];
				expect(brokenLink('nodes', url)).toBeUndefined();
				expect(repositoryTarget(url)?.heading).toBe(
					`${nameOf('resource', resource)} → ${nameOf('operation', operation)}`,
				);
			}
		},
	);

	it("every Docs link is under the one documentation address, package.json's homepage", () => {
		const homepage = (JSON.parse(read('package.json')) as { homepage: string }).homepage;
		expect(homepage).toBe(`${DOCUMENTATION_URL}README.md`);
		expect(brokenLink('package.json', homepage)).toBeUndefined();
		const links = [
			new MessagingRateApi().documentationUrl,
			...packageNodeDescriptions().flatMap(({ description }) => [
				description.documentationUrl ?? '',
				...description.properties
					.filter((p) => p.name === 'operationDocsNotice')
					.map((p) => /href="([^"]+)"/.exec(p.displayName)![1]),
			]),
			...readdirSync(join(ROOT, 'nodes'))
				.filter((dir) => existsSync(join(ROOT, 'nodes', dir, `${dir}.node.json`)))
				.flatMap((dir) =>
					[...read(`nodes/${dir}/${dir}.node.json`).matchAll(/"url": "([^"]+)"/g)].map((m) => m[1]),
				),
		];
		expect(links.length).toBeGreaterThan(20);
		expect(links.filter((url) => !url.startsWith(DOCUMENTATION_URL))).toEqual([]);
	});

	it('the credential links its section', () => {
		const url = new MessagingRateApi().documentationUrl;
		expect(localTarget('credentials', url)).toEqual({
			file: 'docs/credential.md',
			anchor: 'fields',
		});
		expect(brokenLink('credentials', url)).toBeUndefined();
	});

	it('finds a broken link (so that the checks above can fail)', () => {
		expect(brokenLink('README.md', 'docs/messaging.md#no-such-heading')).toMatch(/no heading/);
		expect(brokenLink('README.md', 'docs/nothing.md')).toMatch(/no file/);
		expect(
			brokenLink('README.md', `${REPOSITORY}/blob/main/docs/messaging.md#message--send-text`),
		).toBeUndefined();
	});
});
