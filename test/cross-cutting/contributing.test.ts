/**
 * CONTRIBUTING.md names what exists: every repository path it writes in backticks is there, and
 * every code name it writes as code — `name()` for an exported function or a method, `run.x()` / `client.x()` /
 * `sandbox.x` / `t.x` for a member of what those are, `PascalCase` for a type or class,
 * `SCREAMING_CASE` for a constant — is declared in the repository (a function or type: exported;
 * a class may also be n8n's). Bare lower-case words in backticks are data (field names, options) and are not checked.
 * Its "Follow Send Text" list holds at most ten files, and everything Send Text's operation file
 * loads at run time inside the Messaging node and nodes/shared/execution/ is named in that section.
 */
import { execFileSync } from 'child_process';
import { existsSync, readFileSync } from 'fs';
import { join } from 'path';
import * as n8nCore from 'n8n-core';
import * as n8nWorkflow from 'n8n-workflow';
import ts from 'typescript';

import { ROOT, sendTextClosure } from '../harness/importGraph';

const CONTRIBUTING = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');
const TRACKED = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
	.split('\n')
	.filter(Boolean);

/** Inline code spans outside fenced blocks (a span may wrap onto the next line). */
function codeSpans(markdown: string): string[] {
	const prose = markdown.replace(/^```[\s\S]*?^```/gm, '');
	return [...prose.matchAll(/`([^`]+)`/g)].map((match) => match[1].replace(/\s*\n\s*/g, ''));
}

/** The section under a `## heading`, up to the next `## `. */
function section(markdown: string, heading: string): string {
	const start = markdown.indexOf(`\n## ${heading}\n`);
	if (start === -1) throw new Error(`CONTRIBUTING.md has no "## ${heading}"`);
	const end = markdown.indexOf('\n## ', start + 1);
	return markdown.slice(start, end === -1 ? undefined : end);
}

// ---------------------------------------------------------------------------------------------
// What the repository declares

interface Declarations {
	/** Names declared at the top level of a module (exported or not). */
	topLevel: Set<string>;
	/** Names a module exports. */
	exported: Set<string>;
	/** Members of each class and interface, with the names it extends. */
	members: Map<string, { names: Set<string>; extends: string[] }>;
}

function declarations(): Declarations {
	const topLevel = new Set<string>();
	const exported = new Set<string>();
	const members = new Map<string, { names: Set<string>; extends: string[] }>();
	const files = TRACKED.filter(
		(file) => file.endsWith('.ts') && !file.startsWith('test/n8n/installs/'),
	);
	for (const file of files) {
		const source = ts.createSourceFile(
			file,
			readFileSync(join(ROOT, file), 'utf8'),
			ts.ScriptTarget.Latest,
			false,
		);
		for (const statement of source.statements) {
			const isExported =
				ts.canHaveModifiers(statement) &&
				(ts.getModifiers(statement) ?? []).some(
					(modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword,
				);
			const names: string[] = [];
			if (ts.isVariableStatement(statement)) {
				for (const declaration of statement.declarationList.declarations)
					if (ts.isIdentifier(declaration.name)) names.push(declaration.name.text);
			} else if (
				(ts.isFunctionDeclaration(statement) ||
					ts.isClassDeclaration(statement) ||
					ts.isInterfaceDeclaration(statement) ||
					ts.isTypeAliasDeclaration(statement)) &&
				statement.name
			) {
				names.push(statement.name.text);
			} else if (
				ts.isExportDeclaration(statement) &&
				statement.exportClause &&
				ts.isNamedExports(statement.exportClause)
			) {
				for (const element of statement.exportClause.elements) exported.add(element.name.text);
			}
			for (const name of names) {
				topLevel.add(name);
				if (isExported) exported.add(name);
			}
			if (
				(ts.isClassDeclaration(statement) || ts.isInterfaceDeclaration(statement)) &&
				statement.name
			) {
				const names = new Set<string>();
				for (const member of statement.members)
					if (member.name && (ts.isIdentifier(member.name) || ts.isStringLiteral(member.name)))
						names.add(member.name.text);
				const heritage = (statement.heritageClauses ?? []).flatMap((clause) =>
					clause.types.map((type) => type.expression.getText(source)),
				);
				const known = members.get(statement.name.text);
				members.set(statement.name.text, {
					names: new Set([...(known?.names ?? []), ...names]),
					extends: [...(known?.extends ?? []), ...heritage],
				});
			}
		}
	}
	return { topLevel, exported, members };
}

const DECLARED = declarations();
const ALL_MEMBERS = new Set([...DECLARED.members.values()].flatMap((type) => [...type.names]));

function hasMember(type: string, member: string, seen = new Set<string>()): boolean {
	const declared = DECLARED.members.get(type);
	if (!declared || seen.has(type)) return false;
	seen.add(type);
	return (
		declared.names.has(member) || declared.extends.some((parent) => hasMember(parent, member, seen))
	);
}

/** What the receivers CONTRIBUTING writes stand for. */
const RECEIVERS: Record<string, string[]> = {
	run: ['OperationRun', 'MessagingRun', 'CurrencyRateRun'],
	client: ['ApiClient'],
	sandbox: ['Sandbox', 'UsedSandbox'],
	t: ['ScenarioContext'],
};

function n8nExports(name: string): boolean {
	return name in n8nWorkflow || name in n8nCore;
}

/** Why a code span names nothing that exists, or undefined when it does (or is not a code name). */
function codeNameProblem(span: string): string | undefined {
	const call = /^([A-Za-z_$][\w$]*)\((?:.*)\)$/.exec(span);
	if (call)
		return DECLARED.exported.has(call[1]) || ALL_MEMBERS.has(call[1])
			? undefined
			: `no exported function or method "${call[1]}"`;
	const member = /^([a-z]\w*)\.([A-Za-z_$][\w$]*)(?:\.[\w$.]+)?(?:\(.*\))?$/.exec(span);
	if (member && RECEIVERS[member[1]]) {
		return RECEIVERS[member[1]].some((type) => hasMember(type, member[2]))
			? undefined
			: `${RECEIVERS[member[1]].join(' / ')} has no "${member[2]}"`;
	}
	if (/^[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$/.test(span))
		return DECLARED.exported.has(span) || n8nExports(span)
			? undefined
			: `no exported type or class "${span}"`;
	if (/^[A-Z][A-Z0-9_]{2,}$/.test(span))
		return DECLARED.topLevel.has(span) ? undefined : `no constant "${span}"`;
	return undefined;
}

// ---------------------------------------------------------------------------------------------
// Paths

/** Places outside a fresh clone that CONTRIBUTING names: an n8n user folder, what builds and test runs write. */
const OUTSIDE_REPOSITORY = ['.n8n/', 'test-artifacts/', 'dist/'];

function isPath(span: string): boolean {
	if (/[\s<>*…$={}~:"'|]/.test(span) || span.startsWith('/') || span.startsWith('-')) return false;
	return span.includes('/') || /\.(ts|js|json|md|sh|yml|png|svg)$/.test(span);
}

function pathProblem(span: string): string | undefined {
	const path = span.replace(/\/$/, '');
	if (OUTSIDE_REPOSITORY.some((prefix) => span.startsWith(prefix))) return undefined;
	if (existsSync(join(ROOT, path))) return undefined;
	// Written relative to the folder the text is about (`lib/scenario.ts` in the real-n8n section), or a bare file name.
	if (
		TRACKED.some(
			(file) =>
				file.endsWith(`/${path}`) || file.includes(`/${path}/`) || file.split('/').pop() === path,
		)
	)
		return undefined;
	return 'no such file or folder';
}

/** The example of "Add an operation" names files that do not exist on purpose. */
const EXAMPLE_OPERATION = /sendLocation|Send Location/;

describe('CONTRIBUTING.md', () => {
	const spans = [...new Set(codeSpans(CONTRIBUTING))].filter(
		(span) => !EXAMPLE_OPERATION.test(span),
	);

	it('names only repository paths that exist', () => {
		const paths = spans.filter(isPath);
		expect(paths.length).toBeGreaterThan(30);
		expect(paths.map((span) => [span, pathProblem(span)]).filter(([, problem]) => problem)).toEqual(
			[],
		);
	});

	it('names only functions, members, types and constants that exist', () => {
		const names = spans.filter((span) => !isPath(span) && codeNameProblem(span) !== undefined);
		expect(names.map((span) => [span, codeNameProblem(span)])).toEqual([]);
	});

	it('would notice a name that no longer exists (run.text(), prepare())', () => {
		expect(codeNameProblem('run.text()')).toBe(
			'OperationRun / MessagingRun / CurrencyRateRun has no "text"',
		);
		expect(codeNameProblem('prepare(this, itemIndex, run)')).toBe(
			'no exported function or method "prepare"',
		);
		expect(codeNameProblem('sendResultJson()')).toBe(
			'no exported function or method "sendResultJson"',
		);
		expect(codeNameProblem('run.parameter()')).toBeUndefined();
		expect(pathProblem('nodes/shared/runItems.ts')).toBe('no such file or folder');
	});
});

describe('CONTRIBUTING.md → Follow Send Text', () => {
	const text = section(CONTRIBUTING, 'Follow Send Text');
	const listed = [...text.matchAll(/^\d+\. `([^`]+)`/gm)].map((match) => match[1]);
	const named = new Set(codeSpans(text).filter(isPath));

	it('follows Send Text through at most ten product files, each of them there', () => {
		expect(listed.length).toBeGreaterThanOrEqual(5);
		expect(listed.length).toBeLessThanOrEqual(10);
		expect(listed.filter((file) => !existsSync(join(ROOT, file)))).toEqual([]);
		expect(listed).toContain('nodes/Messaging/actions/message/sendText.operation.ts');
	});

	it('names every file Send Text loads at run time inside the Messaging node and nodes/shared/execution/', () => {
		const loaded = [...sendTextClosure()].filter(
			(file) => file.startsWith('nodes/Messaging/') || file.startsWith('nodes/shared/execution/'),
		);
		expect(loaded.length).toBeGreaterThan(3);
		expect(loaded.filter((file) => !named.has(file)).sort()).toEqual([]);
	});
});
