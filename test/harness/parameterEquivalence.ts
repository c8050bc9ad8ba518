/**
 * Property checks of the parameter reader (nodes/shared/execution/operationRun.ts) against n8n's own
 * evaluation: random items and random mappings run through n8n's engine (n8n-core's
 * WorkflowExecute), where a probe node (test/harness/parameterProbe.ts) reads every parameter of every
 * item both through the reader and through n8n's `getNodeParameter`; both outcomes (the value,
 * or the error's message and class) must be the same: same type, `undefined` kept, -0 is not 0,
 * objects deep and key by key.
 *
 * n8n-workflow 2.41 has three expression engines: `legacy` (Tournament in the process: the
 * library's default, so what the engine tests use on Node 20), `vm` (an isolated-vm isolate: real
 * n8n 2.x's default; its native module needs Node 24) and `quickjs` (n8n's in-isolate runtime in
 * WebAssembly QuickJS, which runs on Node 20). test/parameterReader.properties.test.ts runs these
 * checks under `legacy` in jest and under `quickjs` in a child process
 * (`ts-node test/harness/parameterEquivalence.ts quickjs`: jest's module sandbox refuses the dynamic
 * `import()` the quickjs engine loads with); `npm run bench:n8n` compares outputs under real n8n's `vm`.
 */
import './env';

import fc from 'fast-check';
import {
	Expression,
	type IDataObject,
	type INodeExecutionData,
	type INodeParameters,
} from 'n8n-workflow';

import { runWorkflow } from './engine';
import { probeReads, probeRecords, type ProbeOutcome, type ProbeRecord } from './parameterProbe';

export type EngineName = 'legacy' | 'quickjs';

/** Runs the probe node as the start node on `items` with `parameters`, reading `reads`. */
export async function probe(
	parameters: INodeParameters,
	items: IDataObject[],
	reads: Array<{ name: string; fallback?: unknown }>,
): Promise<ProbeRecord[]> {
	probeRecords.length = 0;
	probeReads.length = 0;
	probeReads.push(...reads.map(({ name, fallback }) => ({ name, fallback })));
	const startItems: INodeExecutionData[] = items.map((json) => ({ json }));
	const run = await runWorkflow(
		{
			nodes: [
				{
					id: '1',
					name: 'Probe',
					type: 'test.parameterProbe',
					typeVersion: 1,
					position: [0, 0],
					parameters,
				},
			],
			connections: {},
		},
		{},
		{ startNode: 'Probe', startItems },
	);
	if (run.error) throw run.error;
	if (probeRecords.length !== items.length * reads.length) {
		throw new Error(
			`probe recorded ${probeRecords.length} reads, expected ${items.length * reads.length}`,
		);
	}
	return [...probeRecords];
}

/** Throws, describing both outcomes, unless the reader and n8n gave the same value or the same error. */
export function assertSameOutcome(record: ProbeRecord): void {
	const { reader, n8n } = record;
	const same =
		'error' in n8n
			? 'error' in reader && reader.error === n8n.error && reader.errorClass === n8n.errorClass
			: 'value' in reader && sameValue(reader.value, n8n.value);
	if (!same) {
		throw new Error(
			`"${record.name}" of item ${record.itemIndex}: reader ${describeOutcome(reader)}, n8n ${describeOutcome(n8n)}`,
		);
	}
}

/** Same type and value; -0 is not 0; arrays and objects key by key (a key holding undefined is not a missing key). */
export function sameValue(a: unknown, b: unknown, depth = 0): boolean {
	if (Object.is(a, b)) return true;
	if (depth > 50 || a === null || b === null || typeof a !== 'object' || typeof b !== 'object')
		return false;
	if (Array.isArray(a) !== Array.isArray(b)) return false;
	if (a instanceof Date || b instanceof Date)
		return a instanceof Date && b instanceof Date && Object.is(a.getTime(), b.getTime());
	const keysA = Object.keys(a).sort();
	const keysB = Object.keys(b).sort();
	if (keysA.length !== keysB.length || keysA.some((key, i) => key !== keysB[i])) return false;
	return keysA.every((key) =>
		sameValue((a as IDataObject)[key], (b as IDataObject)[key], depth + 1),
	);
}

function describeOutcome(outcome: ProbeOutcome): string {
	return 'error' in outcome
		? `threw ${outcome.errorClass}: ${outcome.error}`
		: `gave ${typeof outcome.value} ${safeJson(outcome.value)}`;
}

function safeJson(value: unknown): string {
	try {
		return JSON.stringify(value) ?? String(value);
	} catch {
		return String(value);
	}
}

// ---- generators -----------------------------------------------------------------------------

/** Keys people's data has: identifiers, spaces, quotes, digits, unicode, empty, and names n8n's sandbox refuses. */
const keys = fc.oneof(
	fc.constantFrom('phone', 'text', 'n', 'customer', 'lines', 'a', 'b', '$x', '_id'),
	fc.constantFrom(
		'Phone Number',
		"it's",
		'say "hi"',
		'0',
		'1',
		'12',
		'ünïcode',
		'',
		'a.b',
		'a b c',
		' lead',
		'x}}y',
		'back\\slash',
	),
	fc.constantFrom(
		'constructor',
		'__proto__',
		'prototype',
		'toString',
		'length',
		'hasOwnProperty',
		'valueOf',
	),
	fc.string({ maxLength: 6 }),
);

const primitives = fc.oneof(
	fc.string({ maxLength: 12 }),
	// Whole UTF-16 code units: NULs, lone surrogates and pairs among them.
	fc.string({ unit: 'binary', maxLength: 6 }),
	fc.constantFrom('a\u0000b', 'x\uD800', '\uDC00y'),
	fc.constantFrom(
		'',
		' ',
		'42',
		'+62 812-8877-6713',
		'=not an expression',
		'{{ $json.x }}',
		'true',
	),
	fc.integer(),
	fc.double(),
	fc.constantFrom(0, -0, 42, 1.5, -7, Number.MAX_SAFE_INTEGER, 1e21, NaN, Infinity, -Infinity),
	fc.boolean(),
	fc.constant(null),
	fc.constant(undefined),
);

const { json: jsonValue } = fc.letrec((tie) => ({
	json: fc.oneof(
		{ depthSize: 'small', withCrossShrink: true },
		primitives,
		tie('object'),
		tie('array'),
		fc.constant(new Date(0)),
	),
	object: fc.dictionary(keys, tie('json'), { maxKeys: 5 }),
	array: fc.array(tie('json'), { maxLength: 4 }),
}));

export const itemJson = fc.dictionary(keys, jsonValue, { maxKeys: 6 }) as fc.Arbitrary<IDataObject>;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** One step of a path, written the ways users write it (some of which the reader must refuse). */
const step = fc.oneof(
	keys.chain((key) => {
		const forms: string[] = [`["${key}"]`, `['${key}']`];
		if (IDENTIFIER.test(key)) forms.push(`.${key}`);
		return fc.constantFrom(...forms);
	}),
	fc.nat({ max: 4 }).map((index) => `[${index}]`),
);

export const plainMapping = fc
	.tuple(
		fc.array(step, { minLength: 1, maxLength: 3 }),
		fc.constantFrom('', ' ', '  '),
		fc.constantFrom('', ' ', '\n'),
	)
	.map(([steps, before, after]) => `={{${before}$json${steps.join('')}${after}}}`);

/** Expressions that are not a plain path: the reader must hand them to n8n and give its result. */
const otherExpression = fc.oneof(
	plainMapping.map((mapping) => `${mapping} `),
	plainMapping.map((mapping) => `=Order ${mapping.slice(1)}`),
	plainMapping.map((mapping) => mapping.replace('}}', ' ?? "none" }}')),
	plainMapping.map((mapping) => mapping.replace('}}', '.length }}')),
	fc.constantFrom(
		'={{ $json.text.toUpperCase() }}',
		'={{ $json["a\\"b"] }}',
		'={{ $json.a?.b }}',
		'={{ 1 + 1 }}',
		'={{ $json }}',
		'=plain',
		'={{ $json.a }}{{ $json.b }}',
	),
);

export const mapping = fc.oneof(
	{ weight: 3, arbitrary: plainMapping },
	{ weight: 1, arbitrary: otherExpression },
);

// ---- the checks -------------------------------------------------------------------------------

/** Reads that went straight to the item, and reads in all, over every check: the direct path must be exercised. */
export interface EquivalenceReport {
	engine: string;
	reads: number;
	direct: number;
}

/** Runs every property; throws on the first difference (fast-check's report: seed, counterexample, shrunk). */
export async function checkEquivalence(runs: number): Promise<EquivalenceReport> {
	const report: EquivalenceReport = {
		engine: Expression.getActiveImplementation(),
		reads: 0,
		direct: 0,
	};
	const check = (records: ProbeRecord[]) => {
		for (const record of records) {
			assertSameOutcome(record);
			report.reads++;
			if (!record.readerAskedN8n) report.direct++;
		}
	};

	// Cases a random run may miss, each once: fields named like Object.prototype's members, which
	// n8n's quickjs engine reads as the inherited function (and fails) where legacy reads the field.
	for (const key of ['valueOf', 'toString', 'hasOwnProperty', 'constructor', 'length']) {
		check(
			await probe(
				{ value: `={{ $json.${key} }}`, options: { inner: `={{$json["${key}"]}}` } },
				[{ [key]: 0 }, { [key]: 'text' }, {}],
				[
					{ name: 'value', fallback: '' },
					{ name: 'options.inner', fallback: '' },
				],
			),
		);
	}

	// Texts n8n's engines read differently from JavaScript: a NUL ("a\u0000b" is "a" under quickjs,
	// whose strings end there), lone surrogates (not well-formed UTF-16), in values and in keys.
	const oddTexts = [
		'a\u0000b',
		'\u0000',
		'x\uD800',
		'\uDC00y',
		'p\uDFFF\uD800q',
		'ok \uD83D\uDE00',
	];
	for (const text of oddTexts) {
		check(
			await probe(
				{ value: '={{ $json.v }}', options: { inner: '={{ $json.list[0] }}' } },
				[
					{ v: text, list: [text] },
					{ v: `${text}${text}`, list: [text] },
				],
				[
					{ name: 'value', fallback: '' },
					{ name: 'options.inner', fallback: '' },
				],
			),
		);
		check(
			await probe(
				{ value: `={{ $json["${text}"] }}` },
				[{ [text]: 'found' }, { [text]: text }],
				[{ name: 'value', fallback: '' }],
			),
		);
	}

	// Top-level mappings: random items, random paths.
	await fc.assert(
		fc.asyncProperty(
			fc.array(itemJson, { minLength: 1, maxLength: 4 }),
			mapping,
			async (items, value) => {
				check(await probe({ value }, items, [{ name: 'value', fallback: '' }]));
			},
		),
		{ numRuns: runs },
	);

	// Mappings inside a collection (read whole and by dotted name) and a fixed collection.
	await fc.assert(
		fc.asyncProperty(
			fc.array(itemJson, { minLength: 1, maxLength: 3 }),
			mapping,
			fc.string({ maxLength: 5 }),
			async (items, inner, typed) => {
				check(
					await probe(
						{ options: { inner, count: 3 }, fields: { entry: [{ name: typed, value: inner }] } },
						items,
						[
							{ name: 'options.inner', fallback: '' },
							{ name: 'options.count', fallback: 0 },
							{ name: 'options', fallback: {} },
							{ name: 'fields', fallback: {} },
							{ name: 'fields.entry', fallback: [] },
						],
					),
				);
			},
		),
		{ numRuns: Math.ceil(runs / 2) },
	);

	// Typed-in values, defaults and missing parameters.
	await fc.assert(
		fc.asyncProperty(
			fc.array(itemJson, { minLength: 1, maxLength: 3 }),
			fc.string({ maxLength: 8 }),
			fc.integer(),
			async (items, value, number) => {
				check(
					await probe({ value, number, options: { inner: value } }, items, [
						{ name: 'value', fallback: '' },
						{ name: 'number', fallback: 1 },
						{ name: 'options', fallback: {} },
						{ name: 'options.inner', fallback: '' },
						{ name: 'options.count', fallback: 5 },
						{ name: 'notAParameter', fallback: 'fallback' },
						{ name: 'notAParameter' },
					]),
				);
			},
		),
		{ numRuns: Math.ceil(runs / 2) },
	);
	return report;
}

/**
 * Starts n8n's quickjs engine as `Expression.initExpressionEngine({ engine: 'quickjs' })` does
 * (n8n-workflow 2.41), for a process that is not under jest.
 */
export async function startQuickJs(): Promise<void> {
	await Expression.initExpressionEngine({
		engine: 'quickjs',
		bridgeTimeout: 5000,
		bridgeMemoryLimit: 128,
		poolSize: 1,
		maxCodeCacheSize: 1024,
	} as never);
	if (Expression.getActiveImplementation() !== 'quickjs')
		throw new Error(`quickjs did not start: ${Expression.getActiveImplementation()}`);
}

/** `ts-node test/harness/parameterEquivalence.ts quickjs [runs]`: prints the report as one JSON line, exits 1 on a difference. */
if (require.main === module) {
	(async () => {
		const engine = (process.argv[2] ?? 'legacy') as EngineName;
		if (engine === 'quickjs') await startQuickJs();
		try {
			const report = await checkEquivalence(Number(process.argv[3] ?? 40));
			console.log(`EQUIVALENCE ${JSON.stringify(report)}`);
		} finally {
			await Expression.disposeExpressionEngine();
		}
	})().catch((error: unknown) => {
		console.error(error instanceof Error ? error.message : error);
		process.exit(1);
	});
}
