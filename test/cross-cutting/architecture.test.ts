/**
 * The shape of the node code, checked so that it stays the shape CONTRIBUTING.md describes:
 * nodes share code only through nodes/shared, never reach into test/, scripts/ or sandbox/, every
 * operation file is registered, and operations read parameters only through the run object.
 */
import { readFileSync, readdirSync, statSync } from 'fs';
import { dirname, join, relative, sep } from 'path';

import { OPERATION_NODES, ROOT } from '../../scripts/docs';

function filesUnder(folder: string): string[] {
	return readdirSync(join(ROOT, folder)).flatMap((name) => {
		const path = `${folder}/${name}`;
		return statSync(join(ROOT, path)).isDirectory() ? filesUnder(path) : [path];
	});
}

const NODE_FILES = filesUnder('nodes').filter((file) => file.endsWith('.ts'));

/** The repository-relative files a source file imports (relative imports only). */
function importsOf(file: string): string[] {
	const source = readFileSync(join(ROOT, file), 'utf8');
	return [...source.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((match) =>
		relative(ROOT, join(ROOT, dirname(file), match[1])).split(sep).join('/'),
	);
}

/** `Messaging`, `shared`, … : the folder under nodes/ a path belongs to. */
const nodeFolderOf = (path: string) => path.split('/')[1];

describe('node code', () => {
	it('imports only from its own node folder and nodes/shared (nodes/shared from itself)', () => {
		const outside = NODE_FILES.flatMap((file) =>
			importsOf(file)
				.filter((target) => {
					if (!target.startsWith('nodes/')) return true;
					const from = nodeFolderOf(file);
					const to = nodeFolderOf(target);
					return from === 'shared' ? to !== 'shared' : to !== from && to !== 'shared';
				})
				.map((target) => `${file} → ${target}`),
		);
		expect(NODE_FILES.length).toBeGreaterThan(0);
		expect(outside).toEqual([]);
	});

	const operationFiles = NODE_FILES.filter((file) => file.endsWith('.operation.ts') && file.includes('/actions/'));

	it('registers every operation file in its resource', () => {
		const registered = new Set(OPERATION_NODES.flatMap(({ resources }) => resources.flatMap((r) => r.operations.map((o) => o.module as object))));
		const unregistered = operationFiles.filter((file) => !registered.has(require(join(ROOT, file)) as object));
		expect(operationFiles.length).toBeGreaterThan(0);
		expect(unregistered).toEqual([]);
	});

	it('reads parameters in actions/ only through the run object', () => {
		const direct = NODE_FILES.filter(
			(file) => file.includes('/actions/') && /\bgetNodeParameter\s*\(/.test(readFileSync(join(ROOT, file), 'utf8')),
		);
		expect(direct).toEqual([]);
	});
});
