/**
 * `npm run package`: the package from a checkout, complete or not at all. Builds, packs with
 * `npm pack --ignore-scripts` (the build already ran) and checks the tarball: every node and
 * credential file of package.json's "n8n" block, each node's codex file and every icon must be
 * in it, else it is deleted and the command fails naming what is missing.
 *
 * Why not plain `npm pack`: the repository's .npmrc sets ignore-scripts (n8n-workflow pulls
 * isolated-vm, whose build needs Node 24), so `prepack` never runs and npm packs a package without
 * dist/, silently; npm checks no file at pack time (a missing "main", "bin" or "files" entry does
 * not fail it, npm 11.19). `npm run <script>` runs whatever ignore-scripts says.
 *
 * `--prepack` (the prepack script, when scripts are on): build and check dist/ only.
 */
import { spawnSync } from 'child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'fs';
import { join, resolve } from 'path';

interface PackageJson {
	name: string;
	version: string;
	n8n?: { nodes?: string[]; credentials?: string[] };
}

/** The files a complete package must hold, relative to the package root. */
export function requiredFiles(pkg: PackageJson, icons: string[]): string[] {
	const nodes = pkg.n8n?.nodes ?? [];
	const credentials = pkg.n8n?.credentials ?? [];
	return [
		'package.json',
		...nodes,
		...nodes.map((file) => file.replace(/\.js$/, '.json')),
		...credentials,
		...icons.map((icon) => `dist/icons/${icon}`),
	];
}

/** What `listing` (paths relative to the package root) lacks; an empty "n8n" block is itself a lack. */
export function missingFiles(pkg: PackageJson, icons: string[], listing: string[]): string[] {
	const have = new Set(listing);
	const missing = requiredFiles(pkg, icons).filter((file) => !have.has(file));
	if (!pkg.n8n?.nodes?.length) missing.push('package.json: "n8n".nodes (empty)');
	if (!pkg.n8n?.credentials?.length) missing.push('package.json: "n8n".credentials (empty)');
	return missing;
}

function run(command: string, args: string[], root: string): string {
	const r = spawnSync(command, args, {
		cwd: root,
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'inherit'],
	});
	if (r.status !== 0) fail(`${command} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
	return r.stdout;
}

function fail(message: string): never {
	process.stderr.write(`npm run package: ${message}\n`);
	process.exit(1);
}

function listTree(dir: string, prefix = ''): string[] {
	if (!existsSync(dir)) return [];
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
		entry.isDirectory()
			? listTree(join(dir, entry.name), `${prefix}${entry.name}/`)
			: [`${prefix}${entry.name}`],
	);
}

function main(): void {
	const root = resolve(__dirname, '..');
	const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageJson;
	const icons = readdirSync(join(root, 'icons')).filter((f) => f.endsWith('.svg'));
	process.stdout.write(run('npm', ['run', 'build'], root));
	const built = missingFiles(pkg, icons, [
		'package.json',
		...listTree(join(root, 'dist'), 'dist/'),
	]);
	if (built.length) fail(`the build left out ${built.join(', ')}`);
	if (process.argv.includes('--prepack')) return;

	const packed = JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json'], root)) as Array<{
		filename: string;
	}>;
	const tgz = join(root, packed[0].filename.replace(/^@/, '').replace(/\//g, '-'));
	const listing = run('tar', ['-tzf', tgz], root)
		.split('\n')
		.filter(Boolean)
		.map((path) => path.replace(/^package\//, ''));
	const missing = missingFiles(pkg, icons, listing);
	if (missing.length) {
		rmSync(tgz, { force: true });
		fail(`${tgz} lacked ${missing.join(', ')}; deleted it`);
	}
	process.stdout.write(
		`${tgz}: ${listing.length} files, ${pkg.n8n?.nodes?.length} nodes and ${pkg.n8n?.credentials?.length} credential, checked\n`,
	);
}

if (require.main === module) main();
