/**
 * `npm run test:node-cli`: n8n's node CLI (`n8n-node build`, @n8n/node-cli, what n8n's starter and
 * its verification guidelines use) and `npm run build` (tsc + gulp) give the same dist/: the same
 * files, byte for byte. Each build runs in its own copy of the working tree (as a clone holds it,
 * this checkout's node_modules linked in); the CLI is installed once, pinned, into the real-n8n
 * cache (<N8N_E2E_CACHE>/node-cli-<version>). Not part of `npm test` (the install is ~600
 * packages); `.ci/run` runs it.
 */
import { createHash } from 'crypto';
import {
	existsSync,
	mkdirSync,
	readFileSync,
	readdirSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from 'fs';
import { homedir } from 'os';
import { join } from 'path';

import { REPO_ROOT, cleanEnv, copyWorkingTree, log, mustSucceed, runCommand } from './lib';

const NODE_CLI_VERSION = '0.48.3';
const CACHE = process.env.N8N_E2E_CACHE ?? join(homedir(), '.cache', 'n8n-nodes-messaging-rate');

async function nodeCli(): Promise<string> {
	const dir = join(CACHE, `node-cli-${NODE_CLI_VERSION}`);
	const bin = join(dir, 'node_modules', '.bin', 'n8n-node');
	if (existsSync(bin)) return bin;
	mkdirSync(dir, { recursive: true });
	writeFileSync(join(dir, 'package.json'), '{"name":"node-cli-install","private":true}\n');
	mustSucceed(
		`npm install @n8n/node-cli@${NODE_CLI_VERSION}`,
		await runCommand(
			'npm',
			[
				'install',
				`@n8n/node-cli@${NODE_CLI_VERSION}`,
				'--ignore-scripts',
				'--no-audit',
				'--no-fund',
			],
			{ cwd: dir, env: cleanEnv(), timeoutMs: 600_000 },
		),
	);
	return bin;
}

/** Every file under `dir` with the sha256 of its bytes, by relative path. */
function digests(dir: string, prefix = ''): Map<string, string> {
	const out = new Map<string, string>();
	for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
		const path = prefix ? `${prefix}/${entry.name}` : entry.name;
		if (entry.isDirectory()) for (const [p, d] of digests(dir, path)) out.set(p, d);
		else
			out.set(
				path,
				createHash('sha256')
					.update(readFileSync(join(dir, path)))
					.digest('hex'),
			);
	}
	return out;
}

async function build(label: string, command: string, args: string[]): Promise<Map<string, string>> {
	const copy = copyWorkingTree(`node-cli-build-${label}-`);
	try {
		symlinkSync(join(REPO_ROOT, 'node_modules'), join(copy, 'node_modules'));
		mustSucceed(
			`${label}: ${command} ${args.join(' ')}`,
			await runCommand(command, args, { cwd: copy, env: cleanEnv(), timeoutMs: 600_000 }),
		);
		return digests(join(copy, 'dist'));
	} finally {
		rmSync(copy, { recursive: true, force: true });
	}
}

async function main(): Promise<void> {
	const cli = await nodeCli();
	const gulp = await build('npm-run-build', 'npm', ['run', 'build']);
	const n8nNode = await build('n8n-node-build', cli, ['build']);
	const paths = [...new Set([...gulp.keys(), ...n8nNode.keys()])].sort();
	const differences = paths.flatMap((path) => {
		const a = gulp.get(path);
		const b = n8nNode.get(path);
		if (a === b) return [];
		if (!a) return [`only n8n-node build: dist/${path}`];
		if (!b) return [`only npm run build: dist/${path}`];
		return [`different bytes: dist/${path}`];
	});
	log(
		`npm run build: ${gulp.size} files; n8n-node build ${NODE_CLI_VERSION}: ${n8nNode.size} files; ${differences.length} differences`,
	);
	for (const line of differences) log(`  ${line}`);
	if (gulp.size === 0 || differences.length > 0) process.exit(1);
	log('PASS the same dist/ from both builds');
}

main().catch((error: unknown) => {
	log(error instanceof Error ? (error.stack ?? error.message) : String(error));
	process.exit(1);
});
