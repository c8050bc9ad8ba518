/**
 * 10,000 Currency Rate → Convert items in one execution through n8n's engine against the
 * sandbox. Prints:
 *   - the requests the sandbox received (goal: 2, one token and one rates request);
 *   - the node's items per second (its execution time as the engine records it) against a plain
 *     loop doing the same arithmetic on the same rates, measured in the same run, as a ratio.
 *
 * Amount, From and To are mapped `{{ $json.amount }}`…, evaluated by n8n per item. Two more
 * executions, in the same run: the same values as `{{ ($json.amount) }}`… (a check that both
 * spellings give the same results at the same cost) and fixed parameters (the node's own time).
 *
 * Run: npx ts-node --transpile-only bench/convert-bulk.ts [items]
 */
import '../test/harness/env';

import type { IDataObject } from 'n8n-workflow';
import { performance } from 'perf_hooks';

import { parseRateAnswer, type RateTable } from '../nodes/shared/rates/rateTable';
import {
	ApiClient,
	TokenCache,
	endpoints,
	parseCredentials,
	sharedTokenCache,
} from '../nodes/shared/transport';
import { startSandbox } from '../sandbox/server';
import type * as Engine from '../test/harness/engine';

const ITEMS = Number(process.argv[2] ?? 10_000);
const CODES = ['USD', 'eur', 'SGD', 'jpy', 'IDR', 'GBP', 'aud'];
const BASE = 'IDR';

interface ConvertItem {
	amount: number;
	from: string;
	to: string;
}

/** Half away from zero, as the decimal the number stands for: the node's rounding. */
function round2(value: number): number {
	const rounded =
		(Math.sign(value) * Math.round(Number((Math.abs(value) * 100).toPrecision(15)))) / 100;
	return rounded === 0 ? 0 : rounded;
}

/** The baseline: what the node computes per item, without n8n, parameters or checks. */
function plainLoop(items: ConvertItem[], table: RateTable): number[] {
	const rateOf = (code: string) =>
		code === BASE ? 1 : (table.quotes.get(code)?.average as number);
	const out: number[] = new Array(items.length);
	for (let i = 0; i < items.length; i++) {
		const { amount, from, to } = items[i];
		out[i] = round2((amount * rateOf(from.toUpperCase())) / rateOf(to.toUpperCase()));
	}
	return out;
}

async function main(): Promise<void> {
	const { runWorkflow, sandboxCredential, singleNodeWorkflow }: typeof Engine =
		await import('../test/harness/engine');
	const sandbox = await startSandbox();
	try {
		const items: ConvertItem[] = Array.from({ length: ITEMS }, (_, i) => ({
			amount: Math.round((i * 7.31 + 1) * 100) / 100,
			from: CODES[i % CODES.length],
			to: CODES[(i * 3 + 1) % CODES.length],
		}));
		/** `{{ $json.x }}` and `{{ ($json.x) }}`: two spellings of the same mapping. */
		const mappedWorkflow = (wrap: (field: string) => string) =>
			singleNodeWorkflow(
				'currencyRate',
				{
					resource: 'rate',
					operation: 'convert',
					provider: 'bca',
					amount: wrap('amount'),
					fromCurrency: wrap('from'),
					toCurrency: wrap('to'),
					rateType: 'average',
					decimalPlaces: 2,
				},
				items as unknown as IDataObject[],
			);
		const workflow = mappedWorkflow((field) => `={{ $json.${field} }}`);

		// Warm-up (JIT, the engine's first-run costs) with a tenth of the items, then a fresh sandbox log.
		const warmUp = singleNodeWorkflow(
			'currencyRate',
			workflow.nodes[2].parameters,
			items.slice(0, Math.ceil(ITEMS / 10)) as unknown as IDataObject[],
		);
		if ((await runWorkflow(warmUp, sandboxCredential(sandbox.url))).error)
			throw new Error('warm-up run failed');
		sandbox.reset();
		sharedTokenCache.clear();

		const wallStart = performance.now();
		const run = await runWorkflow(workflow, sandboxCredential(sandbox.url));
		const wallMs = performance.now() - wallStart;
		if (run.error) throw run.error;
		const output = run.output('Node');
		const nodeMs = run.run.data.resultData.runData.Node[0].executionTime;
		const requests = sandbox.requests();
		const stats = sandbox.stats();

		// The same rates, fetched outside the measurement, for the baseline.
		const client = new ApiClient(
			parseCredentials({
				baseUrl: sandbox.url,
				clientId: 'demo-client',
				clientSecret: 'demo-secret',
			}),
			new TokenCache(),
		);
		const table = parseRateAnswer(
			'bca',
			await client.call(endpoints.getKurs, { version: '1.0', currency_id_provider: 'bca' }),
			Date.now(),
		);
		const loopStart = performance.now();
		const expected = plainLoop(items, table);
		const loopMs = performance.now() - loopStart;

		// The same number of items with fixed parameters: no expression to evaluate per item.
		const fixed = singleNodeWorkflow(
			'currencyRate',
			{
				resource: 'rate',
				operation: 'convert',
				provider: 'bca',
				amount: 100,
				fromCurrency: 'USD',
				toCurrency: 'EUR',
				rateType: 'average',
				decimalPlaces: 2,
			},
			items as unknown as IDataObject[],
		);
		const fixedRun = await runWorkflow(fixed, sandboxCredential(sandbox.url));
		if (fixedRun.error) throw fixedRun.error;
		const fixedMs = fixedRun.run.data.resultData.runData.Node[0].executionTime;

		// The same mappings in another spelling.
		const evaluated = await runWorkflow(
			mappedWorkflow((field) => `={{ ($json.${field}) }}`),
			sandboxCredential(sandbox.url),
		);
		if (evaluated.error) throw evaluated.error;
		const evaluatedMs = evaluated.run.data.resultData.runData.Node[0].executionTime;
		const evaluatedMismatches = evaluated
			.output('Node')
			.filter((item, i) => item.json.convertedAmount !== expected[i]).length;

		const mismatches =
			output.filter((item, i) => item.json.convertedAmount !== expected[i]).length +
			evaluatedMismatches;
		const nodeRate = ITEMS / (nodeMs / 1000);
		const loopRate = ITEMS / (loopMs / 1000);

		console.log(
			`convert-bulk: ${ITEMS} convert items in one execution (provider bca, mixed currencies)`,
		);
		console.log(
			`requests made by the mapped run: ${requests.length} (rates token ${stats.tokensIssued.rate}, getkurs ${stats.requestsByPath['/api/rate/1.0/get'] ?? 0}) — goal 2`,
		);
		console.log(
			`output items: ${output.length}, results differing from the plain loop: ${mismatches}`,
		);
		console.log(
			`node (engine-recorded execution time): ${nodeMs} ms → ${Math.round(nodeRate).toLocaleString('en')} items/s`,
		);
		console.log(`whole workflow run (wall clock):        ${wallMs.toFixed(0)} ms`);
		console.log(
			`plain loop, same arithmetic and rates:  ${loopMs.toFixed(2)} ms → ${Math.round(loopRate).toLocaleString('en')} items/s`,
		);
		console.log(
			`same mappings spelled {{ ($json.x) }}: ${evaluatedMs} ms → ${Math.round(ITEMS / (evaluatedMs / 1000)).toLocaleString('en')} items/s`,
		);
		console.log(
			`same items, fixed parameters (no expressions): ${fixedMs} ms → ${Math.round(ITEMS / (fixedMs / 1000)).toLocaleString('en')} items/s`,
		);
		console.log(
			`ratio: the node does ${(nodeRate / loopRate).toFixed(4)}× the plain loop's items/s (the loop is ${(loopRate / nodeRate).toFixed(0)}× faster)`,
		);
		if (requests.length !== 2 || mismatches > 0 || output.length !== ITEMS) process.exitCode = 1;
	} finally {
		await sandbox.close();
	}
}

main().catch((error) => {
	console.error(error);
	process.exitCode = 1;
});
