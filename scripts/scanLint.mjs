/**
 * `npm run lint:scan`: the lint legs of n8n's package scanner (@n8n/scan-community-package, what n8n
 * runs on a package before it is listed or verified), run as the scanner runs them: its own ESLint
 * configuration (`buildScanConfig`: @n8n/eslint-plugin-community-nodes `recommended`, `no-console`,
 * eslint-plugin-n8n-nodes-base's community, credentials and nodes sets), inline configuration off,
 * first on the sources (`SOURCE_FILE_PATTERNS`), then on the files of the packed tarball
 * (`**\/*.js` and package.json). Its provenance step needs a published version and is left out.
 *
 * One difference: the messages ALLOWED lists are dropped, each for a reason that the runtime
 * dependencies make the rule impossible to meet. Every entry must still match something (a stale
 * entry fails the run), and anything else fails it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
	buildScanConfig,
	SOURCE_FILE_PATTERNS,
} from '@n8n/scan-community-package/scanner/scanner.mjs';

const root = resolve(fileURLToPath(import.meta.url), '..', '..');
// The scanner's own ESLint and file finder, resolved from where it resolves them.
const fromScanner = createRequire(
	fileURLToPath(import.meta.resolve('@n8n/scan-community-package/scanner/scanner.mjs')),
);
const { ESLint } = fromScanner('eslint');
const glob = fromScanner('fast-glob');

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const RUNTIME_DEPENDENCIES = Object.keys(pkg.dependencies ?? {});
const IMPORT = /^(?:Import|Require|Dynamic import) of '([^']+)'/;
const GLOBAL = /restricted global '([^']+)'/;
const moduleName = (path) =>
	(path.startsWith('@') ? path.split('/').slice(0, 2) : path.split('/'))[0];

/** What is dropped, and why. `file` is matched against the path relative to the linted folder. */
const ALLOWED = [
	{
		rule: '@n8n/community-nodes/no-runtime-dependencies',
		file: /^package\.json$/,
		why: "the package has runtime dependencies: n8n's HTTP helpers drop the JSON body this API takes on GET requests, so the nodes use undici; the README's table justifies each",
	},
	{
		rule: '@n8n/community-nodes/no-restricted-imports',
		file: /^(nodes|dist\/nodes)\//,
		module: (path) => RUNTIME_DEPENDENCIES.includes(moduleName(path)),
		why: `imports of the runtime dependencies (${RUNTIME_DEPENDENCIES.join(', ')})`,
	},
	{
		rule: '@n8n/community-nodes/no-restricted-imports',
		file: /^(nodes|dist\/nodes)\/Messaging\/helpers\/privateAddresses\.(ts|js)$/,
		module: (path) => path === 'dns' || path === 'net',
		why: "Block Private Addresses resolves a download's host and compares its addresses with the non-public ranges, which no node API does: dns and net, in this one file",
	},
	{
		rule: '@n8n/community-nodes/no-restricted-imports',
		file: /^(nodes|dist\/nodes)\/shared\/store\.(ts|js)$/,
		module: (path) => path === 'fs',
		why: "n8n's *_FILE settings (queue mode's Redis password from a Docker secret): no node API gives them; store.ts is the one file that reads the process",
	},
	{
		rule: '@n8n/community-nodes/no-restricted-globals',
		file: /^(nodes|dist\/nodes)\/shared\/store\.(ts|js)$/,
		global: 'process',
		why: 'queue mode (EXECUTIONS_MODE, QUEUE_BULL_REDIS_*, `n8n worker`) and the proxy variables for undici: no node API gives them; store.ts is the one file that reads the process',
	},
];

function allowed(file, message) {
	return ALLOWED.find((entry) => {
		if (entry.rule !== message.ruleId || !entry.file.test(file)) return false;
		if (entry.module) {
			const path = IMPORT.exec(message.message)?.[1];
			return path !== undefined && entry.module(path);
		}
		if (entry.global) return GLOBAL.exec(message.message)?.[1] === entry.global;
		return true;
	});
}

/** The scanner's analyzePackage, with the allow-list applied to its results. */
async function lintLeg(name, dir, patterns, used) {
	const eslint = new ESLint({
		cwd: dir,
		allowInlineConfig: false,
		overrideConfigFile: true,
		overrideConfig: await buildScanConfig(),
	});
	const files = glob.sync(patterns, {
		cwd: dir,
		absolute: true,
		ignore: ['node_modules/**', '**/package-lock.json'],
	});
	if (files.length === 0) throw new Error(`${name}: no files to lint in ${dir}`);
	const results = await eslint.lintFiles(files);
	let dropped = 0;
	for (const result of results) {
		const file = relative(dir, result.filePath);
		result.messages = result.messages.filter((message) => {
			const entry = allowed(file, message);
			if (entry) used.add(entry);
			if (entry) dropped++;
			return !entry;
		});
		result.errorCount = result.messages.filter((m) => m.severity === 2).length;
		result.warningCount = result.messages.filter((m) => m.severity === 1).length;
		result.fixableErrorCount = 0;
		result.fixableWarningCount = 0;
	}
	const errors = results.reduce((n, r) => n + r.errorCount, 0);
	const output = await (await eslint.loadFormatter('stylish')).format(results);
	process.stdout.write(
		`n8n scanner lint, ${name}: ${files.length} files, ${errors} errors, ${dropped} allowed\n${output}${output ? '' : '\n'}`,
	);
	return errors;
}

const used = new Set();
let errors = await lintLeg('sources', root, SOURCE_FILE_PATTERNS, used);

const work = mkdtempSync(join(tmpdir(), 'scan-lint-'));
try {
	execFileSync('npm', ['run', '--silent', 'package'], {
		cwd: root,
		stdio: ['ignore', 'ignore', 'inherit'],
	});
	const tgz = join(root, `${pkg.name}-${pkg.version}.tgz`);
	execFileSync('tar', ['-xzf', tgz, '-C', work, '--strip-components=1']);
	rmSync(tgz);
	errors += await lintLeg('packed files', work, ['**/*.js', 'package.json'], used);
} finally {
	rmSync(work, { recursive: true, force: true });
}

const stale = ALLOWED.filter((entry) => !used.has(entry));
for (const entry of stale) {
	process.stdout.write(
		`allow-list entry matched nothing (remove it): ${entry.rule} ${entry.file}\n`,
	);
}
if (errors > 0 || stale.length > 0) process.exit(1);
