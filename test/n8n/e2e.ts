/**
 * End-to-end tests of the packed package inside real n8n, `npm run test:n8n`.
 *
 * Once: `npm run build` + `npm pack`. Then for every n8n install under test/n8n/installs/ (n8n 2.x
 * on Node 24, n8n 1.x on Node 20):
 *   (the installs side by side, each in two lanes: the scenarios that mostly wait for n8n's clock in
 *   a second n8n of the same version, beside the others)
 *   1. the install (scripts/n8n-install.sh, cached), a fresh user folder, the tarball installed into
 *      <userFolder>/.n8n/nodes the way n8n's GUI installer does it;
 *   2. a sandbox gateway (127.0.0.1), the "Sandbox" credential pointing at it, every workflow in
 *      examples/ and test/n8n/workflows/ imported with the n8n CLI;
 *   3. `n8n start`, once;
 *   4. the lane's scenarios in test/n8n/scenarios/ (each file exports one named async function that
 *      gets a ScenarioContext, see lib/scenario.ts), in file-name order;
 *   5. n8n stopped, its log in test-artifacts/n8n/.
 *
 * Run from the repository root:
 *   npx ts-node --transpile-only test/n8n/e2e.ts [--only=<file name part>[,<another>]] [--n8n=n8n-2] [--no-editor] [--keep]
 * Last line: "N passed, M failed"; exit code 1 on any failure.
 */
import { execFileSync } from 'child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'fs';
import { join } from 'path';
import { startSandbox } from '../../sandbox/server';
import type { Sandbox } from '../../sandbox/types';
import {
	ALL_TARGETS,
	ARTIFACTS_DIR,
	PACKAGE_NAME,
	REPO_ROOT,
	Report,
	SANDBOX_ACCOUNT,
	SANDBOX_CREDENTIAL,
	ensureInstall,
	executeWorkflow,
	importCredential,
	importWorkflow,
	importWorkflows,
	installPackageIntoN8n,
	log,
	makeUserFolder,
	messagingRateCredential,
	packFromCheckout,
	packPackage,
	readWorkflowDir,
	startN8n,
	tarballPackageJson,
	type N8nServer,
	type Scenario,
	type ScenarioContext,
	type WorkflowFile,
} from './lib';

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(`--${name}`);
const opt = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

const SCENARIOS_DIR = join(__dirname, 'scenarios');
const report = new Report('e2e');

/** Every scenario file (optionally only those whose name contains --only) with its exported functions. */
function loadScenarios(): Array<{ file: string; name: string; run: Scenario }> {
	const only = opt('only');
	const out: Array<{ file: string; name: string; run: Scenario }> = [];
	for (const file of readdirSync(SCENARIOS_DIR)
		.filter((f) => f.endsWith('.ts'))
		.sort()) {
		if (only && !only.split(',').some((part) => file.includes(part))) continue;
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const mod = require(join(SCENARIOS_DIR, file)) as Record<string, unknown>;
		const fns = Object.entries(mod).filter(
			(e): e is [string, Scenario] => typeof e[1] === 'function',
		);
		if (fns.length === 0) throw new Error(`test/n8n/scenarios/${file} exports no function`);
		for (const [name, run] of fns) out.push({ file, name, run });
	}
	return out;
}

// Scenarios that mostly wait for n8n's clock (a poll's minute, the wait tracker, a restart): they run
// in a second n8n of the same version, beside the others, so that their waiting overlaps.
const CLOCK_LANE = [
	'currency-rate-trigger.ts',
	'messaging-account-trigger.ts',
	'send-and-wait-timeout.ts',
	'send-window-wait.ts',
];

/** One n8n of a version: install, prepare the user folder, start n8n once, run the lane's scenarios. */
async function runTarget(
	key: string,
	lane: 'main' | 'clock',
	tgz: string,
	scenarios: Array<{ file: string; name: string; run: Scenario }>,
): Promise<void> {
	const install = ensureInstall(key);
	const r = report.scoped(`[${install.target.label}${lane === 'clock' ? ', clock lane' : ''}] `);
	r.check(
		'install: its Node, n8n and chromium present (the installer checked that n8n starts)',
		[install.node, install.n8nBin, install.chromium].every((p) => existsSync(p)),
		install,
	);
	const userFolder = makeUserFolder(`n8n-e2e-${key}-${lane}-`, install);
	log(`${install.target.label}: user folder ${userFolder}`);
	let sandbox: Sandbox | undefined;
	let server: N8nServer | undefined;
	try {
		const installed = await r.timed(
			"install the tarball into .n8n/nodes (as n8n's GUI installer does)",
			() => installPackageIntoN8n(userFolder, tgz),
		);
		const missingDeps = ['undici', 'libphonenumber-js', 'mime-types', 'qrcode'].filter(
			(d) => !existsSync(join(userFolder, '.n8n', 'nodes', 'node_modules', d, 'package.json')),
		);
		r.check(
			'package installed into <userFolder>/.n8n/nodes with its runtime dependencies',
			missingDeps.length === 0,
			{ installed, missing: missingDeps },
		);

		sandbox = await startSandbox({
			host: '127.0.0.1',
			accounts: [
				{
					clientId: SANDBOX_ACCOUNT.clientId,
					clientSecret: SANDBOX_ACCOUNT.clientSecret,
					status: 'authenticated',
					whatsappNumber: SANDBOX_ACCOUNT.number,
					whatsappWebhook: SANDBOX_ACCOUNT.previousWebhook,
				},
			],
		});
		const sb = sandbox;
		log(`sandbox ${sb.url}`);
		await r.timed('n8n import:credentials', () =>
			importCredential(
				userFolder,
				messagingRateCredential({
					...SANDBOX_CREDENTIAL,
					baseUrl: sb.url,
					clientId: SANDBOX_ACCOUNT.clientId,
					clientSecret: SANDBOX_ACCOUNT.clientSecret,
				}),
			),
		);
		const workflows: WorkflowFile[] = [
			...readWorkflowDir(join(REPO_ROOT, 'examples'), REPO_ROOT),
			...readWorkflowDir(join(__dirname, 'workflows'), REPO_ROOT),
		];
		await r.timed(`n8n import:workflow x${workflows.length}`, async () => {
			await importWorkflows(
				userFolder,
				workflows.map(({ file }) => join(REPO_ROOT, file)),
			);
		});

		server = await r.timed('n8n start → healthy + owner setup', () => startN8n(userFolder));
		const srv = server;
		r.check('n8n start: healthy, owner logged in', srv.authCookie.length > 20, {
			url: srv.url,
			startupMs: srv.startupMs,
		});
		const listed = await srv.rest<Array<{ id: string }>>('GET', '/workflows');
		for (const { file, wf } of workflows)
			r.check(
				`import:workflow ${file} (id ${wf.id})`,
				listed.some((w) => w.id === wf.id),
			);

		const ctx: ScenarioContext = {
			target: install.target,
			install,
			userFolder,
			server: srv,
			sandbox: sb,
			account: SANDBOX_ACCOUNT,
			credential: SANDBOX_CREDENTIAL,
			workflows,
			workflow: (id) => {
				const w = workflows.find((x) => x.wf.id === id);
				if (!w)
					throw new Error(
						`no imported workflow with id ${id} (have ${workflows.map((x) => x.wf.id).join(', ')})`,
					);
				return w;
			},
			execute: (id) => executeWorkflow(userFolder, id),
			packageTarball: tgz,
			importWorkflow: async (fileOrWorkflow) => {
				const id = await importWorkflow(userFolder, fileOrWorkflow);
				return id;
			},
			report: r,
			options: { editor: !flag('no-editor') },
		};
		for (const s of scenarios) {
			await r.timed(`scenario ${s.file} ${s.name}`, () =>
				r.section(`scenario ${s.file} ${s.name}`, () => s.run(ctx)),
			);
		}
	} finally {
		if (server) {
			await server.stop();
			copyFileSync(server.logFile, join(ARTIFACTS_DIR, `e2e-${key}-${lane}-n8n-start.log`));
		}
		if (sandbox) await sandbox.close();
		if (!flag('keep')) rmSync(userFolder, { recursive: true, force: true });
		else log(`kept ${userFolder}`);
	}
}

async function main(): Promise<void> {
	mkdirSync(ARTIFACTS_DIR, { recursive: true });
	const started = Date.now();
	const scenarios = loadScenarios();
	report.check(
		'test/n8n/scenarios/ holds the scenarios to run',
		scenarios.length > 0,
		scenarios.map((s) => `${s.file}:${s.name}`),
	);
	const targets = (opt('n8n') ?? process.env.N8N_E2E_TARGETS ?? ALL_TARGETS.join(','))
		.split(',')
		.filter(Boolean);

	// The package every scenario installs is the one the README's "From a checkout" command makes
	// in a copy of the working tree (npm ci included, the repository's .npmrc in force);
	// --quick-pack packs this checkout with `npm run package` instead (while working on a scenario).
	const tgz = flag('quick-pack')
		? await report.timed('npm run package', () => packPackage())
		: await report.timed('README checkout install, in a copy of the working tree', async () => {
				const fromCheckout = await packFromCheckout();
				report.fact('README checkout command', `${fromCheckout.command} (${fromCheckout.ms} ms)`);
				return fromCheckout.tgz;
			});
	const listing = execFileSync('tar', ['-tzf', tgz], { encoding: 'utf8' }).split('\n');
	const packed = tarballPackageJson(tgz) as {
		name: string;
		version: string;
		n8n?: { nodes?: string[]; credentials?: string[] };
	};
	const shipped = [...(packed.n8n?.nodes ?? []), ...(packed.n8n?.credentials ?? [])];
	report.check(
		'the tarball carries the n8n block (5 nodes, 1 credential) and every file it names',
		packed.name === PACKAGE_NAME &&
			packed.n8n?.nodes?.length === 5 &&
			packed.n8n?.credentials?.length === 1 &&
			shipped.every((file) => listing.includes(`package/${file}`)),
		{
			tgz,
			name: packed.name,
			version: packed.version,
			files: listing.filter(Boolean).length,
			missing: shipped.filter((file) => !listing.includes(`package/${file}`)),
		},
	);
	// The installs and their lanes run side by side: each has its own user folder, sandbox, n8n and
	// ports, and most of a run is waiting (a send window, n8n's wait tracker, the editor).
	const lanes = (['main', 'clock'] as const).map((lane) => ({
		lane,
		scenarios: scenarios.filter((s) => CLOCK_LANE.includes(s.file) === (lane === 'clock')),
	}));
	await Promise.all(
		targets.flatMap((key) =>
			lanes
				.filter((l) => l.scenarios.length > 0)
				.map(
					async ({ lane, scenarios: own }) =>
						await report.section(`n8n install ${key}, ${lane} lane`, () =>
							runTarget(key, lane, tgz, own),
						),
				),
		),
	);
	report.timings.total = Date.now() - started;
}

main()
	.catch((e: unknown) => {
		report.check(
			'e2e run completed without an exception',
			false,
			e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e),
		);
	})
	.finally(() => process.exit(report.summarise()));
