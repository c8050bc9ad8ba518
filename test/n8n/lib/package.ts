/**
 * The package under test: build, pack, and install it into an n8n user folder.
 */
import { execFileSync } from 'child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { basename, dirname, join, resolve } from 'path';
import { REPO_ROOT, cleanEnv, mustSucceed, runCommand, tempFolder } from './util';

/**
 * The package as a tarball in a fresh temp folder. From the repository: `npm run package` (build,
 * pack, check: scripts/package.ts). For a fixture package (`dir`): `npm pack --ignore-scripts`,
 * after `npm run build` unless `build: false`. Returns the absolute path of the .tgz.
 */
export async function packPackage(opts: { dir?: string; build?: boolean } = {}): Promise<string> {
	const dir = opts.dir ?? REPO_ROOT;
	const dest = tempFolder('n8n-e2e-pack-');
	if (dir === REPO_ROOT) {
		mustSucceed(
			'npm run package',
			await runCommand('npm', ['run', 'package'], { cwd: dir, timeoutMs: 600_000 }),
		);
		const { name, version } = packageJsonOf(dir);
		const tgz = join(dir, `${name}-${version}.tgz`);
		return moveFile(tgz, join(dest, basename(tgz)));
	}
	if (opts.build ?? true) {
		mustSucceed(
			'npm run build',
			await runCommand('npm', ['run', 'build'], { cwd: dir, timeoutMs: 600_000 }),
		);
	}
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

/** Moves a file, across file systems too (the repository and the temp folder may differ). */
function moveFile(from: string, to: string): string {
	copyFileSync(from, to);
	rmSync(from);
	return to;
}

function packageJsonOf(dir: string): { name: string; version: string } {
	return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
		name: string;
		version: string;
	};
}

/**
 * A copy of the working tree as a fresh clone of it would hold it: tracked and untracked files
 * git does not ignore (no node_modules, no dist/, no test-artifacts/), in a new temp folder.
 */
export function copyWorkingTree(prefix: string): string {
	const copy = tempFolder(prefix);
	const files = execFileSync(
		'git',
		['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
		{
			cwd: REPO_ROOT,
			encoding: 'utf8',
		},
	)
		.split('\0')
		// .gitignore's `node_modules/` matches a folder, not a symlink (a worktree sharing another's).
		.filter((file) => file && file !== 'node_modules' && existsSync(join(REPO_ROOT, file)));
	for (const file of files) {
		mkdirSync(dirname(join(copy, file)), { recursive: true });
		copyFileSync(join(REPO_ROOT, file), join(copy, file));
	}
	return copy;
}

/** The README's "From a checkout" line: the command to run in the checkout and the tarball it names. */
function readmeCheckoutInstall(): { command: string; tarball: string } {
	const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
	const m = /From a checkout: `([^`]+)`, then `npm install \/path\/to\/([^`/]+\.tgz)`/.exec(readme);
	if (!m)
		throw new Error(
			'README.md has no "From a checkout: `…`, then `npm install /path/to/….tgz`" line',
		);
	return { command: m[1], tarball: m[2] };
}

/**
 * The README's checkout install as a newcomer runs it: the working tree (tracked and untracked
 * files git does not ignore: no node_modules, no dist/) copied to a fresh folder, the README's
 * command run there by a shell with the caller's npm configuration dropped (the repository's
 * .npmrc applies, ignore-scripts included). Returns the tarball the README names, moved to a
 * temp folder, and how long the command took.
 */
export async function packFromCheckout(): Promise<{ tgz: string; command: string; ms: number }> {
	const { command, tarball } = readmeCheckoutInstall();
	const checkout = copyWorkingTree('n8n-e2e-checkout-');
	try {
		const r = mustSucceed(
			`README checkout install: ${command}`,
			await runCommand('sh', ['-c', command], {
				cwd: checkout,
				env: cleanEnv(),
				timeoutMs: 900_000,
			}),
		);
		const built = join(checkout, tarball);
		if (!existsSync(built)) throw new Error(`${command} did not produce ${tarball}`);
		const dest = join(tempFolder('n8n-e2e-pack-'), tarball);
		return { tgz: moveFile(built, dest), command, ms: r.ms };
	} finally {
		rmSync(checkout, { recursive: true, force: true });
	}
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
