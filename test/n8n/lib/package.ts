/**
 * The package under test: build, pack, and install it into an n8n user folder.
 */
import { execFileSync } from 'child_process';
import { existsSync, mkdirSync, writeFileSync } from 'fs';
import { dirname, join, resolve } from 'path';
import { REPO_ROOT, cleanEnv, mustSucceed, runCommand, tempFolder } from './util';

/**
 * `npm run build` then `npm pack` in the repository (or in `dir`, for a fixture package).
 * Returns the absolute path of the .tgz (in a fresh temp folder).
 */
export async function packPackage(opts: { dir?: string; build?: boolean } = {}): Promise<string> {
	const dir = opts.dir ?? REPO_ROOT;
	const dest = tempFolder('n8n-e2e-pack-');
	if (opts.build ?? true) {
		mustSucceed(
			'npm run build',
			await runCommand('npm', ['run', 'build'], { cwd: dir, timeoutMs: 600_000 }),
		);
	}
	// --ignore-scripts: the build already ran; prepack would only repeat it.
	const r = mustSucceed(
		'npm pack',
		await runCommand('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dest], {
			cwd: dir,
			timeoutMs: 300_000,
		}),
	);
	const info = JSON.parse(r.stdout.slice(r.stdout.indexOf('['))) as Array<{ filename: string }>;
	const tgz = join(dest, info[0].filename.replace(/^@/, '').replace(/\//g, '-'));
	if (!existsSync(tgz))
		throw new Error(`npm pack reported ${info[0].filename} but ${tgz} does not exist`);
	return tgz;
}

/** package.json inside a packed .tgz. */
export function tarballPackageJson(tgz: string): {
	name: string;
	version: string;
	[k: string]: unknown;
} {
	return JSON.parse(
		execFileSync('tar', ['-xzOf', tgz, 'package/package.json'], { encoding: 'utf8' }),
	) as { name: string; version: string };
}

/**
 * Installs a packed community package the way a user does by hand:
 * `npm install <tgz>` in <userFolder>/.n8n/nodes (n8n scans nodes/node_modules/n8n-nodes-* at start).
 * Peer dependencies (n8n-workflow) are not installed: the package must use n8n's own copy, which
 * is also what n8n's in-app installer does (it strips peerDependencies).
 * Returns the installed package folder.
 */
export async function installPackageIntoN8n(userFolder: string, tgz: string): Promise<string> {
	const nodesDir = join(userFolder, '.n8n', 'nodes');
	mkdirSync(nodesDir, { recursive: true });
	const pkgJson = join(nodesDir, 'package.json');
	if (!existsSync(pkgJson)) {
		writeFileSync(
			pkgJson,
			JSON.stringify({ name: 'installed-nodes', private: true, dependencies: {} }, null, 2) + '\n',
		);
	}
	const env = cleanEnv();
	mustSucceed(
		`npm install ${tgz}`,
		await runCommand(
			'npm',
			[
				'install',
				resolve(tgz),
				'--ignore-scripts',
				'--legacy-peer-deps',
				'--no-audit',
				'--no-fund',
				'--no-package-lock',
				'--loglevel=error',
			],
			{ cwd: nodesDir, env, timeoutMs: 300_000 },
		),
	);
	const { name } = tarballPackageJson(tgz);
	const dir = join(nodesDir, 'node_modules', name);
	if (!existsSync(join(dir, 'package.json')))
		throw new Error(`${name} from ${tgz} not found under ${nodesDir}/node_modules`);
	return dir;
}

/**
 * The README's manual install, copied as written: `cd ~/.n8n/nodes && npm install <package>`, with
 * the tarball in place of the registry name, in `<userFolder>/.n8n/nodes` (created empty when
 * missing), with no flags and with `node` (the Node binary npm runs with and builds for) first on
 * PATH. Only the caller's exported npm configuration is dropped; the user's own npm config applies
 * as it would for them. Returns the installed package folder and npm's output.
 */
export async function installPackageWithNpm(
	userFolder: string,
	tgz: string,
	node: string,
): Promise<{ dir: string; stdout: string; stderr: string; ms: number }> {
	const nodesDir = join(userFolder, '.n8n', 'nodes');
	mkdirSync(nodesDir, { recursive: true });
	const env = cleanEnv();
	env.PATH = `${dirname(node)}:${env.PATH ?? ''}`;
	const r = mustSucceed(
		`npm install ${tgz} (on ${node})`,
		await runCommand('npm', ['install', resolve(tgz)], { cwd: nodesDir, env, timeoutMs: 600_000 }),
	);
	const { name } = tarballPackageJson(tgz);
	const dir = join(nodesDir, 'node_modules', name);
	if (!existsSync(join(dir, 'package.json')))
		throw new Error(`${name} from ${tgz} not found under ${nodesDir}/node_modules`);
	return { dir, stdout: r.stdout, stderr: r.stderr, ms: r.ms };
}
