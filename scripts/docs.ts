/**
 * The operation tables of README.md and docs/*.md, generated from the nodes' resource
 * definitions and the endpoints their operations declare, so that a new operation shows up in
 * them without anyone remembering to add it:
 *
 *   npm run docs            rewrites every generated block in place
 *   test/docs.test.ts       fails when a block is out of date, an operation has no section with
 *                           an example, or a link points at a file or heading that does not exist
 *
 * A generated block sits between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`.
 * Also used by the real-n8n editor test for the option lists the editor must show.
 */
import { existsSync, readFileSync, writeFileSync } from 'fs';
import type { INodeType, INodeTypeDescription } from 'n8n-workflow';
import { join } from 'path';

import { resources as currencyRateResources } from '../nodes/CurrencyRate/CurrencyRate.node';
import { resources as messagingResources } from '../nodes/Messaging/Messaging.node';
import type { ResourceDefinition } from '../nodes/shared/execution/router';
import { tokenEndpoint, type Endpoint } from '../nodes/shared/transport';

export const ROOT = join(__dirname, '..');

/** The nodes with resources and operations, and the file that documents each. */
export const OPERATION_NODES: ReadonlyArray<{
	node: string;
	doc: string;
	resources: ReadonlyArray<ResourceDefinition<never>>;
}> = [
	{ node: 'Messaging', doc: 'docs/messaging.md', resources: messagingResources },
	{ node: 'Currency Rate', doc: 'docs/currency-rate.md', resources: currencyRateResources },
];

export interface OperationRow {
	node: string;
	/** The file that documents it, relative to the repository root. */
	doc: string;
	resource: string;
	resourceValue: string;
	operation: string;
	operationValue: string;
	description: string;
	/** The heading of its section in `doc`: `Message → Send Text`. */
	heading: string;
	/** `POST /api/wa/2.0/post, method=sendMessage`. */
	request: string;
	/** Whether the request carries the bearer token (`—` for the token request itself). */
	token: 'yes' | 'no' | '—';
}

/** Every operation of every node, in selector order. */
export function operationCatalog(): OperationRow[] {
	return OPERATION_NODES.flatMap(({ node, doc, resources }) =>
		resources.flatMap((resource) =>
			resource.operations.map((operation) => ({
				node,
				doc,
				resource: resource.option.name,
				resourceValue: resource.option.value,
				operation: operation.name,
				operationValue: operation.value,
				description: operation.description,
				heading: `${resource.option.name} → ${operation.name}`,
				request: requestOf(operation.module.endpoint),
				token: tokenOf(operation.module.endpoint),
			})),
		),
	);
}

function requestOf(endpoint: Endpoint | undefined): string {
	if (!endpoint) return 'none (no request)';
	const selector = Object.entries(endpoint.fixed ?? {}).map(([name, value]) => `${name}=${value}`);
	return [`${endpoint.httpMethod} ${endpoint.path}`, ...selector].join(', ');
}

function tokenOf(endpoint: Endpoint | undefined): OperationRow['token'] {
	if (!endpoint) return '—';
	if (Object.values(tokenEndpoint).includes(endpoint)) return '—';
	return endpoint.bearer ? 'yes' : 'no';
}

/**
 * The anchor GitHub gives a heading: lower case, everything but letters, digits, `_`, `-` and
 * spaces dropped, spaces turned into `-` (`Message → Send Text` → `message--send-text`). Headings
 * that repeat in one file get `-1`, `-2`, … (see `headingAnchors`).
 */
export function githubSlug(heading: string): string {
	return heading
		.trim()
		.toLowerCase()
		.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
		.replace(/ /g, '-');
}

/** Every heading of a Markdown text with its GitHub anchor (headings inside code blocks are not headings). */
export function headings(markdown: string): Array<{ text: string; anchor: string }> {
	const found: Array<{ text: string; anchor: string }> = [];
	const seen = new Map<string, number>();
	let inCode = false;
	for (const line of markdown.split('\n')) {
		if (/^\s*(```|~~~)/.test(line)) inCode = !inCode;
		const heading = inCode ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
		if (!heading) continue;
		const slug = githubSlug(heading[1].replace(/`/g, ''));
		const count = seen.get(slug) ?? 0;
		seen.set(slug, count + 1);
		found.push({ text: heading[1], anchor: count === 0 ? slug : `${slug}-${count}` });
	}
	return found;
}

/** Every heading anchor of a Markdown text. */
export function headingAnchors(markdown: string): Set<string> {
	return new Set(headings(markdown).map((heading) => heading.anchor));
}

/** The repository's address, from package.json's `repository.url` (what the nodes and the docs link). */
export const REPOSITORY = (
	JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { repository: { url: string } }
).repository.url
	.replace(/^git\+/, '')
	.replace(/\.git$/, '');

/**
 * Where a link into the repository's default branch leads: the file, the anchor, and the text of
 * the heading with that anchor (undefined when the file has none). Undefined for other links.
 */
export function repositoryTarget(
	url: string,
): { file: string; anchor?: string; heading?: string } | undefined {
	const match = new RegExp(
		`^${REPOSITORY.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(?:blob|tree)/main/([^#?]+)(?:#(.*))?$`,
	).exec(url);
	if (!match) return undefined;
	const [, file, anchor] = match;
	const path = join(ROOT, file);
	const heading =
		anchor !== undefined && file.endsWith('.md') && existsSync(path)
			? headings(readFileSync(path, 'utf8')).find((h) => h.anchor === anchor)?.text
			: undefined;
	return { file, anchor, heading };
}

/** Every node of the package (package.json's `n8n.nodes`), with its description, from the sources. */
export function packageNodeDescriptions(): Array<{
	source: string;
	description: INodeTypeDescription;
}> {
	const built = (
		JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { n8n: { nodes: string[] } }
	).n8n.nodes;
	return built.map((file) => {
		const source = file.replace(/^dist\//, '').replace(/\.js$/, '.ts');
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const exported = require(join(ROOT, source)) as Record<string, unknown>;
		const NodeClass = Object.values(exported).find(
			(value): value is new () => INodeType => typeof value === 'function',
		);
		if (!NodeClass) throw new Error(`${source} exports no node class`);
		return { source, description: new NodeClass().description };
	});
}

const escapeCell = (text: string) => text.replace(/\|/g, '\\|');

/** README: one row per operation, linked to its section. */
export function readmeOperationsTable(): string {
	const rows = operationCatalog().map(
		(row) =>
			`| ${row.node} | [${row.heading}](${row.doc}#${githubSlug(row.heading)}) | ${escapeCell(row.description)} |`,
	);
	return ['| Node | Operation | What it does |', '|---|---|---|', ...rows].join('\n');
}

/** A node's reference: one row per operation with the request it makes. */
export function nodeOperationsTable(node: string): string {
	const rows = operationCatalog()
		.filter((row) => row.node === node)
		.map(
			(row) =>
				`| [${row.heading}](#${githubSlug(row.heading)}) | ${escapeCell(row.description)} | \`${row.request}\` | ${row.token} |`,
		);
	return ['| Operation | What it does | Request | Token |', '|---|---|---|---|', ...rows].join(
		'\n',
	);
}

/** Every generated block: the file it is in, its name, and what it holds. */
export const GENERATED_BLOCKS: ReadonlyArray<{ file: string; name: string; render: () => string }> =
	[
		{ file: 'README.md', name: 'operations', render: readmeOperationsTable },
		...OPERATION_NODES.map(({ node, doc }) => ({
			file: doc,
			name: 'operations',
			render: () => nodeOperationsTable(node),
		})),
	];

/** `text` with the named block's content replaced; an error when the file has no such block. */
export function withBlock(text: string, name: string, content: string, file = 'the file'): string {
	const start = `<!-- generated:${name} -->`;
	const end = `<!-- /generated:${name} -->`;
	const from = text.indexOf(start);
	const to = text.indexOf(end);
	if (from === -1 || to < from) throw new Error(`${file} has no block ${start} … ${end}`);
	return `${text.slice(0, from + start.length)}\n${content}\n${text.slice(to)}`;
}

/** What `file` should hold: its current text with every generated block brought up to date. */
export function expectedText(file: string): string {
	let text = readFileSync(join(ROOT, file), 'utf8');
	for (const block of GENERATED_BLOCKS.filter((b) => b.file === file))
		text = withBlock(text, block.name, block.render(), file);
	return text;
}

function main(): void {
	const files = [...new Set(GENERATED_BLOCKS.map((block) => block.file))];
	for (const file of files) {
		const current = readFileSync(join(ROOT, file), 'utf8');
		const expected = expectedText(file);
		if (expected !== current) writeFileSync(join(ROOT, file), expected);
		console.log(`${expected === current ? 'up to date' : 'updated   '}  ${file}`);
	}
}

if (require.main === module) main();
