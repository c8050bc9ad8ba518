/**
 * `npm run bench:startup`: what n8n pays when it loads this package. Builds `dist/` (what n8n
 * loads), then, in a fresh Node process per measurement (nothing cached), with n8n-workflow
 * already loaded (n8n has it before any community node): requires the five nodes and the
 * credential from `dist/` and makes one of each (n8n reads their descriptions), and measures the
 * time and the heap it added (after a forced GC). Median of several processes, against the goal
 * (issue 26: <= 50 ms, <= 3 MB). Also lists the packages the load pulled in from node_modules
 * (what lazy loading keeps out until an operation needs it).
 *
 * Run: npm run bench:startup [-- --runs 7 --no-build]
 */
import { execFileSync, spawnSync } from 'child_process';
import { readFileSync } from 'fs';
import { join } from 'path';

const ROOT = join(__dirname, '..');
const args = process.argv.slice(2);
const at = args.indexOf('--runs');
const RUNS = at >= 0 ? Number(args[at + 1]) : 7;
const TIME_GOAL_MS = 50;
const HEAP_GOAL_BYTES = 3 * 1024 * 1024;

interface Pkg {
	n8n: { nodes: string[]; credentials: string[] };
}

/** The child: n8n-workflow first, then the package as n8n loads it (require, new, description). */
const CHILD = `
const { performance } = require('perf_hooks');
const Module = require('module');
require('n8n-workflow');
const before = new Set(Object.keys(require.cache));
const files = JSON.parse(process.argv[1]);
global.gc(); global.gc();
const heap0 = process.memoryUsage().heapUsed;
const t0 = performance.now();
for (const file of files) {
	const exported = require(file);
	for (const value of Object.values(exported)) {
		if (typeof value === 'function' && value.prototype) {
			const made = new value();
			void (made.description ?? made.properties ?? made.name);
		}
	}
}
const ms = performance.now() - t0;
global.gc(); global.gc();
const heap = process.memoryUsage().heapUsed - heap0;
const packages = {};
for (const path of Object.keys(require.cache)) {
	if (before.has(path)) continue;
	const match = /node_modules[\\\\/]((?:@[^\\\\/]+[\\\\/])?[^\\\\/]+)/.exec(path.slice(path.lastIndexOf('node_modules')));
	if (match) packages[match[1]] = (packages[match[1]] || 0) + 1;
}
process.stdout.write(JSON.stringify({ ms, heap, packages }));
`;

function main(): void {
	if (!args.includes('--no-build')) {
		console.log('Building dist/ (npm run build)…');
		execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
	}
	const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Pkg;
	const files = [...pkg.n8n.nodes, ...pkg.n8n.credentials].map((file) => join(ROOT, file));
	const results: Array<{ ms: number; heap: number; packages: Record<string, number> }> = [];
	for (let run = 0; run < RUNS; run++) {
		const child = spawnSync(process.execPath, ['--expose-gc', '-e', CHILD, JSON.stringify(files)], {
			cwd: ROOT,
			encoding: 'utf8',
		});
		if (child.status !== 0) throw new Error(`The load failed:\n${child.stderr}`);
		results.push(JSON.parse(child.stdout) as (typeof results)[number]);
	}
	const ms = median(results.map((r) => r.ms));
	const heap = median(results.map((r) => r.heap));
	console.log(
		`\nbench:startup: ${files.length - pkg.n8n.credentials.length} nodes and ${pkg.n8n.credentials.length} credential from dist/, n8n-workflow already loaded, Node ${process.version}, ${RUNS} fresh processes`,
	);
	console.log(
		`load time: ${ms.toFixed(1)} ms (median; runs ${results.map((r) => r.ms.toFixed(0)).join(', ')}) (goal <= ${TIME_GOAL_MS} ms: ${ms <= TIME_GOAL_MS ? 'met' : 'NOT met'})`,
	);
	console.log(
		`heap added: ${(heap / 1024 / 1024).toFixed(2)} MB (median, after a forced GC) (goal <= ${HEAP_GOAL_BYTES / 1024 / 1024} MB: ${heap <= HEAP_GOAL_BYTES ? 'met' : 'NOT met'})`,
	);
	const packages = Object.entries(results[0].packages)
		.sort((a, b) => b[1] - a[1])
		.map(([name, count]) => `${name} (${count} files)`);
	console.log(`packages loaded from node_modules: ${packages.join(', ') || 'none'}`);
}

function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.floor(sorted.length / 2)];
}

main();
