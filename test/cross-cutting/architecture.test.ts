/**
 * The shape of the node code, checked so that it stays the shape CONTRIBUTING.md describes
 * (Layout): code lives with who uses it — a node's own code in its folder, what two or more nodes
 * use in nodes/shared/ — nodes never reach into test/, scripts/ or sandbox/ or into each other,
 * actions/ holds only resources and operations, every operation file is registered, an operation
 * file is imported only by its resource and its node, and operations read parameters only
 * through the run object.
 */
import { readFileSync } from 'fs';
import { join } from 'path';

import { OPERATION_NODES } from '../../scripts/docs';
import { ROOT, closureOf, filesUnder, importsOf } from '../harness/importGraph';

const NODE_FILES = filesUnder('nodes').filter((file) => file.endsWith('.ts'));
const SHARED_FILES = NODE_FILES.filter((file) => file.startsWith('nodes/shared/'));

/** `Messaging`, `shared`, … : the folder under nodes/ a path belongs to. */
const nodeFolderOf = (path: string) => path.split('/')[1];
const NODES = [...new Set(NODE_FILES.map(nodeFolderOf))].filter((folder) => folder !== 'shared');

describe('node code', () => {
	it('imports only from its own node folder and nodes/shared (nodes/shared from itself)', () => {
		const outside = NODE_FILES.flatMap((file) =>
			importsOf(file)
				.map(({ target }) => target)
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

	it('keeps in nodes/shared/ only what two or more nodes use (what one node uses lives in that node)', () => {
		const usedBy = new Map<string, Set<string>>(SHARED_FILES.map((file) => [file, new Set()]));
		for (const node of NODES) {
			for (const file of NODE_FILES.filter((f) => nodeFolderOf(f) === node)) {
				for (const reached of closureOf(file)) usedBy.get(reached)?.add(node);
			}
		}
		const oneNodeOrNone = [...usedBy]
			.filter(([, nodes]) => nodes.size < 2)
			.map(([file, nodes]) => `${file}: used by ${[...nodes].join(', ') || 'no node'}`);
		expect(NODES.sort()).toEqual([
			'CurrencyRate',
			'CurrencyRateTrigger',
			'Messaging',
			'MessagingAccountTrigger',
			'MessagingTrigger',
		]);
		expect(oneNodeOrNone).toEqual([]);
	});

	it('holds only <resource>.resource.ts and <operation>.operation.ts files in actions/', () => {
		const others = NODE_FILES.filter(
			(file) => file.includes('/actions/') && !/\.(resource|operation)\.ts$/.test(file),
		);
		expect(others).toEqual([]);
	});

	const operationFiles = NODE_FILES.filter(
		(file) => file.endsWith('.operation.ts') && file.includes('/actions/'),
	);

	it('registers every operation file in its resource', () => {
		const registered = new Set(
			OPERATION_NODES.flatMap(({ resources }) =>
				resources.flatMap((r) => r.operations.map((o) => o.module as object)),
			),
		);
		// eslint-disable-next-line @typescript-eslint/no-require-imports -- the module object itself, as the resource registered it
		const moduleOf = (file: string) => require(join(ROOT, file)) as object;
		const unregistered = operationFiles.filter((file) => !registered.has(moduleOf(file)));
		expect(operationFiles.length).toBeGreaterThan(0);
		expect(unregistered).toEqual([]);
	});

	it('imports an operation file at run time only from its resource and its node file (helpers never depend on an operation)', () => {
		const wrong = NODE_FILES.flatMap((file) =>
			importsOf(file)
				.filter(({ target, typeOnly }) => !typeOnly && target.endsWith('.operation.ts'))
				.filter(({ target }) => {
					const sameResource =
						file.endsWith('.resource.ts') &&
						file.split('/').slice(0, -1).join('/') === target.split('/').slice(0, -1).join('/');
					const ownNode = file.endsWith('.node.ts') && nodeFolderOf(file) === nodeFolderOf(target);
					// An operation both nodes offer (Auth → Get Token) is registered by each node's resource.
					const sharedOperation =
						file.endsWith('.resource.ts') && target.startsWith('nodes/shared/');
					return !sameResource && !ownNode && !sharedOperation;
				})
				.map(({ target }) => `${file} → ${target}`),
		);
		expect(wrong).toEqual([]);
	});

	it('reads parameters in actions/ only through the run object', () => {
		const direct = NODE_FILES.filter(
			(file) =>
				file.includes('/actions/') &&
				/\bgetNodeParameter\s*\(/.test(readFileSync(join(ROOT, file), 'utf8')),
		);
		expect(direct).toEqual([]);
	});

	it("keeps a run's state on the run object, never in a module-level map keyed by a run", () => {
		const keyedByRun = NODE_FILES.flatMap((file) =>
			[
				...readFileSync(join(ROOT, file), 'utf8').matchAll(
					/^(?:export )?const \w+ = new Weak(?:Map|Set)<\s*(\w+)/gm,
				),
			]
				.filter((match) => /Run$/.test(match[1]))
				.map((match) => `${file}: ${match[0]}`),
		);
		expect(keyedByRun).toEqual([]);
	});
});
