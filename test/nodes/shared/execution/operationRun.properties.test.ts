/**
 * The parameter reader (nodes/shared/execution/operationRun.ts) gives n8n's results: random items and
 * random mappings through n8n's engine, read both ways by a probe node and compared
 * (test/harness/parameterEquivalence.ts), under n8n's `legacy` expression engine (in this process) and its
 * `quickjs` engine (n8n's in-isolate runtime; in a child process, because jest refuses the dynamic
 * `import()` it loads with). Real n8n's `vm` engine is checked by `npm run bench:n8n`.
 */
import { execFile } from 'child_process';
import { join } from 'path';
import { promisify } from 'util';

import '../../../harness/env';
import {
	checkEquivalence,
	probe,
	assertSameOutcome,
	type EquivalenceReport,
} from '../../../harness/parameterEquivalence';
import { CurrencyRate } from '../../../../nodes/CurrencyRate/CurrencyRate.node';
import { Messaging } from '../../../../nodes/Messaging/Messaging.node';
import { plainJsonPath } from '../../../../nodes/shared/execution/operationRun';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);
const ROOT = join(__dirname, '..', '..', '..', '..');

describe("ParameterReader gives n8n's results", () => {
	it('under the legacy expression engine: random items, random mappings, collections, typed-in values, missing parameters', async () => {
		const report = await checkEquivalence(RUNS);
		expect(report.engine).toBe('legacy');
		// The direct read is exercised, not only the hand-over to n8n.
		expect(report.direct).toBeGreaterThan(report.reads / 10);
	});

	it("under the quickjs expression engine (n8n's isolate runtime)", async () => {
		const { stdout } = await promisify(execFile)(
			process.execPath,
			[
				'-r',
				'ts-node/register/transpile-only',
				join(ROOT, 'test', 'harness', 'parameterEquivalence.ts'),
				'quickjs',
				String(Math.ceil(RUNS / 2)),
			],
			{ cwd: ROOT, timeout: 180_000, env: { ...process.env, TS_NODE_TRANSPILE_ONLY: 'true' } },
		);
		const line = stdout.split('\n').find((l) => l.startsWith('EQUIVALENCE ')) ?? 'EQUIVALENCE {}';
		const report = JSON.parse(line.slice('EQUIVALENCE '.length)) as EquivalenceReport;
		expect(report.engine).toBe('quickjs');
		expect(report.direct).toBeGreaterThan(report.reads / 10);
	}, 200_000);

	it('reads plain mappings of present fields straight from the item, and typed-in values once per run', async () => {
		const items = Array.from({ length: 5 }, (_, i) => ({
			'phone': `+62 812-0000-${1000 + i}`,
			'Phone Number': `0812${i}`,
			'n': 40 + i,
			'ok': i % 2 === 0,
			'none': null,
			'customer': { phone: `62${i}`, tags: ['vip', i] },
			"it's": 'quoted',
		}));
		const mappings = [
			'={{ $json.phone }}',
			'={{ $json["Phone Number"] }}',
			'={{$json.n}}',
			'={{ $json.ok }}',
			'={{ $json.none }}',
			'={{ $json.customer.phone }}',
			"={{ $json.customer['tags'][1] }}",
			'={{ $json["it\'s"] }}',
		];
		for (const value of mappings) {
			const records = await probe({ value, number: 7 }, items, [
				{ name: 'value', fallback: '' },
				{ name: 'number', fallback: 1 },
			]);
			records.forEach(assertSameOutcome);
			expect(records.filter((r) => r.name === 'value' && r.readerAskedN8n)).toEqual([]);
			expect(
				records.filter((r) => r.name === 'number' && r.readerAskedN8n).map((r) => r.itemIndex),
			).toEqual([0]);
		}
	});
});

describe('what the reader relies on', () => {
	it("no parameter of the package's nodes has a value n8n would validate or convert per item (validateType, resource mapper)", () => {
		// For such parameters n8n's getNodeParameter changes the value after evaluating it, which a
		// value read once per run or straight from the item would skip.
		const offenders: string[] = [];
		const visit = (node: string, properties: unknown[], path: string) => {
			for (const property of properties as Array<Record<string, unknown>>) {
				const name = `${path}${String(property.name)}`;
				if (property.validateType || property.type === 'resourceMapper')
					offenders.push(`${node}: ${name}`);
				for (const key of ['options', 'values']) {
					const nested = property[key];
					if (Array.isArray(nested)) visit(node, nested, `${name}.`);
				}
			}
		};
		for (const nodeType of [new Messaging(), new CurrencyRate()]) {
			visit(nodeType.description.name, nodeType.description.properties, '');
		}
		expect(offenders).toEqual([]);
	});
});

describe('plainJsonPath', () => {
	it('recognises whole-value $json paths only', () => {
		expect(plainJsonPath('={{ $json.phone }}')).toEqual(['phone']);
		expect(plainJsonPath('={{$json["Phone Number"]}}')).toEqual(['Phone Number']);
		expect(plainJsonPath("={{ $json.customer['phone'][0] }}")).toEqual(['customer', 'phone', 0]);
		const others = [
			'={{ $json.phone }} ',
			'=x{{ $json.phone }}',
			'={{ $json.a.constructor }}',
			'={{ $json["a\\"b"] }}',
			'={{ $json[01] }}',
			'={{ $json }}',
			'{{ $json.a }}',
			'={{ $json.a() }}',
			`={{ $json${'.a'.repeat(600)} }}`,
		];
		for (const other of others) {
			expect({ other, steps: plainJsonPath(other) }).toEqual({ other, steps: undefined });
		}
	});
});
