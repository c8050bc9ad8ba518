/**
 * The repository's own import graph, read with TypeScript's parser: what a source file imports
 * (relative imports only, resolved to repository paths), whether only for types, and what a file
 * reaches at run time. Used by the architecture and CONTRIBUTING tests.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'fs';
import { dirname, join, relative, sep } from 'path';
import ts from 'typescript';

export const ROOT = join(__dirname, '..', '..');

export interface Import {
	/** Repository path of the imported file (`nodes/shared/errors.ts`). */
	target: string;
	/** `import type …`, or every name imported is a type: erased at run time. */
	typeOnly: boolean;
}

/** Every `.ts` file under a repository folder, as repository paths. */
export function filesUnder(folder: string): string[] {
	return readdirSync(join(ROOT, folder)).flatMap((name) => {
		const path = `${folder}/${name}`;
		return statSync(join(ROOT, path)).isDirectory() ? filesUnder(path) : [path];
	});
}

function resolve(from: string, specifier: string): string | undefined {
	const base = relative(ROOT, join(ROOT, dirname(from), specifier))
		.split(sep)
		.join('/');
	return [`${base}.ts`, `${base}/index.ts`, base].find(
		(candidate) => existsSync(join(ROOT, candidate)) && statSync(join(ROOT, candidate)).isFile(),
	);
}

const cache = new Map<string, Import[]>();

/** The repository files `file` imports or re-exports (relative specifiers only). */
export function importsOf(file: string): Import[] {
	const known = cache.get(file);
	if (known) return known;
	const source = ts.createSourceFile(
		file,
		readFileSync(join(ROOT, file), 'utf8'),
		ts.ScriptTarget.Latest,
		false,
	);
	const found: Import[] = [];
	const add = (specifier: ts.Expression | undefined, typeOnly: boolean) => {
		if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) return;
		const target = resolve(file, specifier.text);
		if (target) found.push({ target, typeOnly });
	};
	const visit = (node: ts.Node) => {
		if (ts.isImportDeclaration(node)) {
			const clause = node.importClause;
			const named =
				clause?.namedBindings && ts.isNamedImports(clause.namedBindings)
					? clause.namedBindings.elements
					: undefined;
			const typeOnly =
				clause !== undefined &&
				(clause.isTypeOnly ||
					(!clause.name &&
						named !== undefined &&
						named.length > 0 &&
						named.every((element) => element.isTypeOnly)));
			add(node.moduleSpecifier, typeOnly);
		} else if (ts.isExportDeclaration(node)) {
			const named =
				node.exportClause && ts.isNamedExports(node.exportClause)
					? node.exportClause.elements
					: undefined;
			add(
				node.moduleSpecifier,
				node.isTypeOnly ||
					(named !== undefined && named.length > 0 && named.every((element) => element.isTypeOnly)),
			);
		} else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
			add(node.arguments[0], false);
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	cache.set(file, found);
	return found;
}

/** Every file `file` reaches through imports (itself included); `runtimeOnly` skips type-only imports. */
export function closureOf(file: string, { runtimeOnly = false } = {}): Set<string> {
	const seen = new Set<string>([file]);
	const queue = [file];
	while (queue.length > 0) {
		for (const { target, typeOnly } of importsOf(queue.pop() as string)) {
			if ((runtimeOnly && typeOnly) || seen.has(target)) continue;
			seen.add(target);
			queue.push(target);
		}
	}
	return seen;
}

export const SEND_TEXT = 'nodes/Messaging/actions/message/sendText.operation.ts';

/** What Send Text loads at run time: its operation file and the run the node hands it. */
export function sendTextClosure(): Set<string> {
	return new Set([
		...closureOf(SEND_TEXT, { runtimeOnly: true }),
		...closureOf('nodes/Messaging/run.ts', { runtimeOnly: true }),
	]);
}
