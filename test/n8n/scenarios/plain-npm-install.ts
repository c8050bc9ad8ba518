/**
 * The README's manual install path, on this n8n version's Node (20 for n8n 1.x, 24 for 2.x):
 * `cd ~/.n8n/nodes && npm install n8n-nodes-messaging-rate` (the packed tarball in place of the
 * registry name) in a fresh folder succeeds without flags, does not pull n8n-workflow (an optional
 * peer: n8n provides it) or isolated-vm, and a fresh `n8n start` on that folder loads the nodes.
 */
import { existsSync } from 'fs';
import { join } from 'path';
import {
	NODE_TYPES,
	installPackageWithNpm,
	makeUserFolder,
	startN8n,
	type ScenarioContext,
} from '../lib';

export async function readmeNpmInstallLoadsInN8n(t: ScenarioContext): Promise<void> {
	const { report } = t;
	const folder = makeUserFolder(`n8n-e2e-plain-npm-${t.target.key}-`, t.install);
	const npm = await report.timed(
		`README install: npm install <tgz> in a fresh .n8n/nodes on Node ${t.target.nodeVersion}`,
		() => installPackageWithNpm(folder, t.packageTarball, t.install.node),
	);
	const modules = join(folder, '.n8n', 'nodes', 'node_modules');
	const runtimeDeps = ['undici', 'libphonenumber-js', 'mime-types', 'qrcode'];
	report.check(
		`README install on Node ${t.target.nodeVersion}: the package and its runtime dependencies installed`,
		existsSync(join(npm.dir, 'dist')) &&
			runtimeDeps.every((d) => existsSync(join(modules, d, 'package.json'))),
		{ dir: npm.dir, ms: npm.ms },
	);
	report.check(
		`README install on Node ${t.target.nodeVersion}: no n8n-workflow and no isolated-vm pulled in (the peer is optional; n8n provides it)`,
		!existsSync(join(modules, 'n8n-workflow')) && !existsSync(join(modules, 'isolated-vm')),
		{ stderr: npm.stderr.slice(-600) },
	);
	const srv = await report.timed('n8n start on the README-installed folder', () =>
		startN8n(folder),
	);
	try {
		const res = await fetch(`${srv.url}/types/nodes.json`, {
			headers: { cookie: `n8n-auth=${srv.authCookie}` },
		});
		const types = (await res.json()) as Array<{ name: string }>;
		const missing = Object.values(NODE_TYPES).filter((type) => !types.some((x) => x.name === type));
		report.check(
			`README install on Node ${t.target.nodeVersion}: n8n loads Messaging, Currency Rate and Messaging Trigger`,
			missing.length === 0,
			{ missing, total: types.length },
		);
	} finally {
		await srv.stop();
	}
}
