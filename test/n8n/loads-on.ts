/**
 * Does the packed package load and run in another n8n version than the two the tests pin?
 *
 *   npx ts-node --transpile-only test/n8n/loads-on.ts <n8n version> [<n8n version> …]
 *
 * Per version: `npm install n8n@<version>` (no lockfile: what a user of that version gets today;
 * cached under <N8N_E2E_CACHE>/loads-on/<version>, sqlite3's native module taken from the pinned
 * installs' shared build), run on this machine's Node; the package installed into a fresh user
 * folder as n8n's GUI installer does; `n8n start`: every node type of the package and its
 * credential type are served; then `n8n execute` of examples/daily-rates-to-chat.json against the
 * sandbox: rates read, the message sent. Not part of CI (a cold install is several minutes per
 * version); the README's compatibility line names what it found.
 */
import { execFileSync } from 'child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'fs';
import { homedir } from 'os';
import { join } from 'path';

import { startSandbox } from '../../sandbox/server';
import {
	ENV_BY_MAJOR,
	NODE_TYPES,
	REPO_ROOT,
	Report,
	cleanEnv,
	executeWorkflow,
	importCredential,
	importWorkflow,
	installPackageIntoN8n,
	log,
	makeUserFolder,
	messagingRateCredential,
	packPackage,
	runCommand,
	startN8n,
	type N8nInstall,
	type WorkflowJson,
} from './lib';

const versions = process.argv.slice(2).filter((arg) => /^\d+\.\d+\.\d+$/.test(arg));
const report = new Report('loads-on');
const CACHE = process.env.N8N_E2E_CACHE ?? join(homedir(), '.cache', 'n8n-nodes-messaging-rate');
const EXAMPLE = join(REPO_ROOT, 'examples', 'daily-rates-to-chat.json');

async function installVersion(version: string): Promise<N8nInstall> {
	const dir = join(CACHE, 'loads-on', version);
	const n8nBin = join(dir, 'node_modules', 'n8n', 'bin', 'n8n');
	if (!existsSync(join(dir, '.complete'))) {
		mkdirSync(dir, { recursive: true });
		writeFileSync(
			join(dir, 'package.json'),
			// xlsx: n8n 1.x fetches it from outside the npm registry; the same code is published on it as @e965/xlsx.
			JSON.stringify(
				{
					name: `n8n-${version}`,
					private: true,
					dependencies: { n8n: version },
					overrides: { xlsx: 'npm:@e965/xlsx@0.20.2' },
				},
				null,
				2,
			),
		);
		log(`npm install n8n@${version} into ${dir} (minutes when cold)`);
		const r = await runCommand(
			'npm',
			['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
			{ cwd: dir, env: cleanEnv(), timeoutMs: 1_200_000 },
		);
		if (r.code !== 0)
			throw new Error(`npm install n8n@${version} failed: ${r.stderr.slice(-2000)}`);
		const sqlite = JSON.parse(
			readFileSync(join(dir, 'node_modules', 'sqlite3', 'package.json'), 'utf8'),
		) as { version: string };
		const sharedDir = join(CACHE, 'shared');
		const shared = existsSync(sharedDir)
			? readdirSync(sharedDir).find(
					(f) => f.startsWith(`sqlite3-${sqlite.version}-napi`) && f.endsWith('.node'),
				)
			: undefined;
		if (shared) {
			mkdirSync(join(dir, 'node_modules', 'sqlite3', 'build', 'Release'), { recursive: true });
			copyFileSync(
				join(sharedDir, shared),
				join(dir, 'node_modules', 'sqlite3', 'build', 'Release', 'node_sqlite3.node'),
			);
		} else {
			// Another sqlite3 than the pinned installs': built here (python3, make and a C++ compiler needed).
			log(`building sqlite3 ${sqlite.version} for n8n ${version}`);
			const built = await runCommand(
				'npm',
				['rebuild', 'sqlite3', '--ignore-scripts=false', '--loglevel=error'],
				{ cwd: dir, env: cleanEnv(), timeoutMs: 900_000 },
			);
			if (built.code !== 0)
				throw new Error(`sqlite3 ${sqlite.version} did not build: ${built.stderr.slice(-2000)}`);
		}
		execFileSync(process.execPath, ['-e', "require('sqlite3')"], { cwd: dir, stdio: 'inherit' });
		writeFileSync(join(dir, '.complete'), `${new Date().toISOString()}\n`);
	}
	const major = Number(version.split('.')[0]);
	return {
		target: {
			key: `loads-on-${version}`,
			major,
			n8nVersion: version,
			nodeVersion: process.version.slice(1),
			label: `n8n ${version} on Node ${process.version.slice(1)}`,
			env: ENV_BY_MAJOR[major] ?? {},
		},
		dir,
		node: process.execPath,
		n8nBin,
		chromium: '',
	};
}

async function checkVersion(version: string, tgz: string): Promise<void> {
	const r = report.scoped(`[n8n ${version}] `);
	const install = await r.timed('install', () => installVersion(version));
	const userFolder = makeUserFolder(`n8n-loads-on-${version}-`, install);
	await installPackageIntoN8n(userFolder, tgz);
	const sandbox = await startSandbox({ host: '127.0.0.1' });
	try {
		await importCredential(
			userFolder,
			messagingRateCredential({
				id: 'sandbox-credential',
				name: 'Sandbox',
				baseUrl: sandbox.url,
				clientId: 'demo-client',
				clientSecret: 'demo-secret',
			}),
		);
		const example = JSON.parse(readFileSync(EXAMPLE, 'utf8')) as WorkflowJson;
		await importWorkflow(userFolder, example);

		const server = await r.timed('n8n start', () => startN8n(userFolder));
		try {
			const served = await fetch(`${server.url}/types/nodes.json`, {
				headers: { cookie: `n8n-auth=${server.authCookie}` },
			});
			const names = new Set(
				((await served.json()) as Array<{ name: string }>).map((type) => type.name),
			);
			const ours = Object.values(NODE_TYPES);
			r.check(
				'n8n start serves every node type of the package',
				ours.every((name) => names.has(name)),
				{ missing: ours.filter((name) => !names.has(name)) },
			);
			const credentials = await fetch(`${server.url}/types/credentials.json`, {
				headers: { cookie: `n8n-auth=${server.authCookie}` },
			});
			r.check(
				'and its credential type',
				credentials.ok && (await credentials.text()).includes('"messagingRateApi"'),
				{ status: credentials.status },
			);
		} finally {
			await server.stop();
		}

		const ledgerBefore = sandbox.ledger().length;
		const ex = await r.timed('n8n execute examples/daily-rates-to-chat.json', () =>
			executeWorkflow(userFolder, example.id),
		);
		const runData = (ex.run?.data?.resultData?.runData ?? {}) as Record<
			string,
			Array<{ error?: unknown }>
		>;
		const nodesRun = Object.keys(runData);
		const ours = (example.nodes as Array<{ name: string; type: string }>).filter((node) =>
			node.type.startsWith('n8n-nodes-messaging-rate.'),
		);
		const oursRanClean = ours.every(
			(node) =>
				runData[node.name]?.length > 0 &&
				runData[node.name].every((run) => run.error === undefined),
		);
		// n8n 1.50.0 and 1.82.3 print the run of `execute` with status "running" (and finished: true):
		// what counts is that the run finished without an error and every node of the package ran cleanly.
		const succeeded =
			ex.ok || (ex.run?.finished === true && !ex.run.data?.resultData?.error && oursRanClean);
		r.check(
			'n8n execute of the daily-rates example runs every node without an error and sends its message',
			succeeded && sandbox.ledger().length === ledgerBefore + 1,
			{
				status: ex.run?.status,
				finished: ex.run?.finished,
				nodesRun,
				error: ex.run?.data?.resultData?.error?.message,
				sent: sandbox.ledger().length - ledgerBefore,
				stderr: ex.ok ? undefined : ex.stderr.slice(-1500),
			},
		);
	} finally {
		await sandbox.close();
	}
}

async function main(): Promise<void> {
	if (versions.length === 0)
		throw new Error('usage: test/n8n/loads-on.ts <n8n version> [<n8n version> …]');
	const tgz = await packPackage();
	for (const version of versions) {
		try {
			await checkVersion(version, tgz);
		} catch (error) {
			report.check(
				`[n8n ${version}] ran to the end`,
				false,
				error instanceof Error ? error.message : String(error),
			);
		}
	}
}

main()
	.catch((error: unknown) => report.check('loads-on ran', false, String(error)))
	.finally(() => process.exit(report.summarise({ versions })));
