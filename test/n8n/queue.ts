/**
 * n8n queue mode ("scaling mode") with this package: real n8n 2.40.x, Redis and PostgreSQL from
 * Debian's packages (scripts/queue-services.sh; loopback only, data in a temporary folder), one
 * main process (`n8n start`), two workers (`n8n worker`) and the sandbox gateway.
 *
 *   1. pack the package, install it into the main's user folder (as lib.ts does) and copy that
 *      nodes folder to each worker's own user folder (same tarball, same files),
 *   2. import the credential, the examples (examples/*.json with a Manual Trigger) and the
 *      bulk-send workflow (test/n8n/workflows/queue-bulk-send.json) into PostgreSQL,
 *   3. run each example through the queue (REST manual run, offloaded to the workers with
 *      OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS=true),
 *   4. activate the bulk workflow (Webhook → Split Out → Send Text, no pause between messages)
 *      and call it CALLS times in parallel with PER_CALL messages each (20 × 50 = 1,000 unique texts),
 *   5. assert: every text in the sandbox's ledger exactly once; all executions succeeded and ran
 *      on a worker (worker logs), both workers took part; the send requests of each worker carry
 *      its own bearer token and each worker fetched at most one token (tokensIssued.wa ≤ workers
 *      that sent); the main process sent nothing;
 *   6. activate a Messaging Trigger (test/n8n/workflows/queue-trigger-once.json, replies to each
 *      message) and deliver one message to main and to an `n8n webhook` process at once, then
 *      again: one execution, on a worker, one reply (the ids are in n8n's queue Redis);
 *   7. Skip Repeats Within (test/n8n/workflows/queue-idempotent-send.json, Send Text's default 8 h):
 *      the same 200 items executed twice at once, on the two workers: 200 messages;
 *   8. Account Cap (test/n8n/workflows/queue-capped-send.json, 60 per minute): two executions of
 *      50 messages each at once, on the workers: at every capped send the sandbox's ledger holds
 *      at most 60 capped sends in the minute before it, and each message once (the last 40 wait
 *      for the second minute);
 *   9. Send and Wait, Reply in the Chat (Messaging Trigger → Send and Wait asking the sender): the
 *      question asked on a worker, the person's "1" delivered to the `n8n webhook` process, whose
 *      trigger reads the wait from n8n's queue Redis and resumes it: one execution, approved true;
 *  10. a worker killed while it sends 200 items: n8n's REST retry of the failed execution re-runs
 *      nothing (n8n 2.40.7 drops a stalled job's run data), so the items are posted again, as the
 *      sender or a user re-runs them, on the other worker: no message twice, none lost.
 *
 * Run from the repository root:  npx ts-node --transpile-only test/n8n/queue.ts [--keep]
 * Environment: QUEUE_CALLS (default 20), QUEUE_PER_CALL (default 50).
 * Prints a summary and `N passed, M failed`; exits 1 on any failure; stops every process it started.
 */
import { execFile, type ChildProcess } from 'child_process';
import { randomUUID } from 'crypto';
import {
	copyFileSync,
	cpSync,
	createWriteStream,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	readdirSync,
	rmSync,
} from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	ARTIFACTS_DIR,
	NODE_TYPES,
	REPO_ROOT,
	Report,
	ensureInstall,
	freePort,
	getExecution,
	importCredential,
	importWorkflow,
	installPackageIntoN8n,
	log,
	makeUserFolder,
	messagingRateCredential,
	n8nEnv,
	packPackage,
	sleep,
	startN8n,
	waitForExecution,
	spawnN8n,
	type ExecutionSummary,
	type N8nServer,
	type WorkflowJson,
} from './lib';

const args = new Set(process.argv.slice(2));
const CALLS = Number(process.env.QUEUE_CALLS ?? 20);
const PER_CALL = Number(process.env.QUEUE_PER_CALL ?? 50);
const TOTAL = CALLS * PER_CALL;
const WORKERS = 2;
/** Concurrent jobs per worker: low enough that CALLS parallel executions must spread over both. */
const WORKER_CONCURRENCY = 5;
const PHONE = '6281288776713';
const BULK_WORKFLOW = join(__dirname, 'workflows', 'queue-bulk-send.json');
const TRIGGER_WORKFLOW = join(__dirname, 'workflows', 'queue-trigger-once.json');
const IDEMPOTENT_WORKFLOW = join(__dirname, 'workflows', 'queue-idempotent-send.json');
const CAPPED_WORKFLOW = join(__dirname, 'workflows', 'queue-capped-send.json');
/** Account Cap scenario: two executions of this many messages at once, at most CAP_PER_MINUTE a minute. */
const CAPPED_ITEMS = 50;
const CAP_PER_MINUTE = 60;
/** Items of each Skip Repeats Within scenario. */
const IDEMPOTENT_ITEMS = 200;
const CREDENTIAL = { id: 'sandbox-credential', name: 'Sandbox' };
const SEND_PATH = '/api/wa/2.0/post';
/** Overall guard: the whole run must end well under 15 minutes. */
const OVERALL_TIMEOUT_MS = 14 * 60_000;

const report = new Report('queue');
const { timings, facts } = report;
const check = report.check.bind(report);
const timed = report.timed.bind(report);

function sh(
	cmd: string,
	argv: string[],
	timeoutMs = 600_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
	return new Promise((res) => {
		execFile(
			cmd,
			argv,
			{ timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
			(err, stdout, stderr) => {
				const code = err
					? typeof (err as { code?: unknown }).code === 'number'
						? (err as { code: number }).code
						: 1
					: 0;
				res({ code, stdout, stderr });
			},
		);
	});
}

// ---------------------------------------------------------------------------------------------
// Redis + PostgreSQL (scripts/queue-services.sh)
// ---------------------------------------------------------------------------------------------

const SERVICES_SCRIPT = join(REPO_ROOT, 'scripts', 'queue-services.sh');

interface Services {
	dir: string;
	redisPort: number;
	pgPort: number;
}

async function startServices(): Promise<Services> {
	// As root the cluster runs as `postgres`, which must be able to reach the folder: use /tmp then.
	const base = process.getuid?.() === 0 ? '/tmp' : tmpdir();
	const dir = mkdtempSync(join(base, 'n8n-queue-services-'));
	const redisPort = await freePort();
	let pgPort = await freePort();
	while (pgPort === redisPort) pgPort = await freePort();
	services = { dir, redisPort, pgPort };
	const r = await sh('bash', [SERVICES_SCRIPT, 'start', dir, String(redisPort), String(pgPort)]);
	process.stderr.write(r.stderr);
	if (r.code !== 0) throw new Error(`queue-services.sh start failed (exit ${r.code})`);
	return services;
}

async function stopServices(s: Services): Promise<void> {
	const r = await sh('bash', [SERVICES_SCRIPT, 'stop', s.dir], 120_000);
	process.stderr.write(r.stderr);
	if (!args.has('--keep')) rmSync(s.dir, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------
// n8n worker processes
// ---------------------------------------------------------------------------------------------

interface WorkerProc {
	name: string;
	userFolder: string;
	healthPort: number;
	process: ChildProcess;
	logFile: string;
	startupMs: number;
	log(): string;
	stop(): Promise<void>;
}

async function startWorker(
	name: string,
	userFolder: string,
	extraEnv: Record<string, string>,
): Promise<WorkerProc> {
	const inst = ensureInstall();
	const healthPort = await freePort();
	const brokerPort = await freePort();
	const logFile = join(userFolder, `n8n-${name}.log`);
	const stream = createWriteStream(logFile);
	let text = '';
	const env = n8nEnv(userFolder, {
		...extraEnv,
		QUEUE_HEALTH_CHECK_ACTIVE: 'true',
		QUEUE_HEALTH_CHECK_PORT: String(healthPort),
		N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
		N8N_RUNNERS_BROKER_PORT: String(brokerPort),
		N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
		N8N_GRACEFUL_SHUTDOWN_TIMEOUT: '5',
	});
	const started = Date.now();
	const proc = spawnN8n(
		inst,
		userFolder,
		['worker', `--concurrency=${WORKER_CONCURRENCY}`],
		env,
		(d) => {
			stream.write(d);
			text += d.toString('utf8');
		},
	);
	const child = proc.child;
	children.add(child);
	let stopping: Promise<void> | undefined;
	const stop = () =>
		(stopping ??= (async () => {
			await proc.stop();
			children.delete(child);
			await new Promise<void>((r) => stream.end(r));
		})());
	const deadline = started + 180_000;
	for (;;) {
		const exited = proc.exited();
		if (exited) {
			await stop();
			throw new Error(
				`${name} exited during start (${exited.code ?? exited.signal})\n${text.split('\n').slice(-40).join('\n')}`,
			);
		}
		try {
			const r = await fetch(`http://127.0.0.1:${healthPort}/healthz/readiness`);
			if (r.ok) break;
		} catch {
			/* not listening yet */
		}
		if (Date.now() > deadline) {
			await stop();
			throw new Error(`${name} not ready after 180 s\n${text.split('\n').slice(-40).join('\n')}`);
		}
		await sleep(250);
	}
	return {
		name,
		userFolder,
		healthPort,
		process: child,
		logFile,
		startupMs: Date.now() - started,
		log: () => text,
		stop,
	};
}

/**
 * `n8n webhook`: a process that serves production webhooks only and enqueues their executions (n8n's
 * way to scale incoming traffic behind a load balancer). Its own user folder and port.
 */
async function startWebhookProcess(
	userFolder: string,
	port: number,
	extraEnv: Record<string, string>,
): Promise<{ url: string; log(): string; stop(): Promise<void> }> {
	const inst = ensureInstall();
	const url = `http://127.0.0.1:${port}`;
	const logFile = join(userFolder, 'n8n-webhook.log');
	const stream = createWriteStream(logFile);
	let text = '';
	const env = n8nEnv(userFolder, {
		...extraEnv,
		N8N_PORT: String(port),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_GRACEFUL_SHUTDOWN_TIMEOUT: '5',
	});
	const started = Date.now();
	const proc = spawnN8n(inst, userFolder, ['webhook'], env, (d) => {
		stream.write(d);
		text += d.toString('utf8');
	});
	children.add(proc.child);
	const stop = async () => {
		await proc.stop();
		children.delete(proc.child);
		await new Promise<void>((r) => stream.end(r));
		if (existsSync(logFile)) copyFileSync(logFile, join(ARTIFACTS_DIR, 'queue-webhook.log'));
	};
	for (;;) {
		const exited = proc.exited();
		if (exited) {
			await stop();
			throw new Error(
				`n8n webhook exited during start (${exited.code ?? exited.signal})\n${text.slice(-3000)}`,
			);
		}
		try {
			if ((await fetch(`${url}/healthz`)).ok) break;
		} catch {
			/* not listening yet */
		}
		if (Date.now() - started > 180_000) {
			await stop();
			throw new Error(`n8n webhook not ready after 180 s\n${text.slice(-3000)}`);
		}
		await sleep(250);
	}
	timings['webhook process startup (spawn → /healthz)'] = Date.now() - started;
	return { url, log: () => text, stop };
}

/** Execution ids a worker's log says it started / finished. */
function workerExecutions(logText: string): { started: Set<string>; finished: Set<string> } {
	const started = new Set<string>();
	const finished = new Set<string>();
	for (const m of logText.matchAll(/Worker started execution (\S+) \(job/g)) started.add(m[1]);
	for (const m of logText.matchAll(/Worker finished execution (\S+) \(job/g)) finished.add(m[1]);
	return { started, finished };
}

// ---------------------------------------------------------------------------------------------
// Cleanup (also on signals)
// ---------------------------------------------------------------------------------------------

const children = new Set<ChildProcess>();
let services: Services | undefined;
let sandbox: Sandbox | undefined;
let main: N8nServer | undefined;
const workers: WorkerProc[] = [];
let webhookProcess: { stop(): Promise<void> } | undefined;
const userFolders: string[] = [];
let cleanupPromise: Promise<void> | undefined;

/** Stops everything this run started; every caller waits for the same single cleanup. */
function cleanup(): Promise<void> {
	cleanupPromise ??= doCleanup();
	return cleanupPromise;
}

async function doCleanup(): Promise<void> {
	const t = Date.now();
	mkdirSync(ARTIFACTS_DIR, { recursive: true });
	await Promise.all([
		webhookProcess?.stop().catch(() => undefined),
		...workers.map(async (w) => {
			await w.stop().catch(() => undefined);
			if (existsSync(w.logFile))
				copyFileSync(w.logFile, join(ARTIFACTS_DIR, `queue-${w.name}.log`));
		}),
		(async () => {
			if (!main) return;
			await main.stop().catch(() => undefined);
			if (existsSync(main.logFile))
				copyFileSync(main.logFile, join(ARTIFACTS_DIR, 'queue-main.log'));
		})(),
	]);
	// Anything else still running (interrupted during start): SIGTERM its group, SIGKILL after 5 s.
	const leftovers = [...children].filter(
		(c) => c.pid && c.exitCode === null && c.signalCode === null,
	);
	const signalGroup = (c: ChildProcess, sig: NodeJS.Signals) => {
		try {
			if (c.pid && c.exitCode === null && c.signalCode === null) process.kill(-c.pid, sig);
		} catch {
			/* gone */
		}
	};
	for (const c of leftovers) signalGroup(c, 'SIGTERM');
	for (
		let i = 0;
		i < 50 && leftovers.some((c) => c.exitCode === null && c.signalCode === null);
		i++
	)
		await sleep(100);
	for (const c of leftovers) signalGroup(c, 'SIGKILL');
	if (services)
		await stopServices(services).catch((e: unknown) => log(`stopping services: ${String(e)}`));
	if (sandbox) await sandbox.close().catch(() => undefined);
	if (!args.has('--keep')) for (const f of userFolders) rmSync(f, { recursive: true, force: true });
	else log(`kept ${[...userFolders, services?.dir].join(' ')}`);
	timings['cleanup (stop n8n ×3, redis, postgres, sandbox)'] = Date.now() - t;
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
	process.once(sig, () => {
		log(`${sig}: cleaning up`);
		check(`run interrupted by ${sig}`, false);
		void cleanup().finally(() => finish());
	});
}

// ---------------------------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------------------------

interface ExampleRun {
	file: string;
	id: string;
	executionId?: string;
	status?: string;
	ledgerDelta: number;
}

function exampleWorkflows(): Array<{ file: string; wf: WorkflowJson; trigger: string }> {
	const dir = join(REPO_ROOT, 'examples');
	const out: Array<{ file: string; wf: WorkflowJson; trigger: string }> = [];
	for (const f of readdirSync(dir)
		.filter((n) => n.endsWith('.json'))
		.sort()) {
		const wf = JSON.parse(readFileSync(join(dir, f), 'utf8')) as WorkflowJson;
		const trigger = wf.nodes.find((n) => n.type === 'n8n-nodes-base.manualTrigger');
		if (!trigger) continue;
		// Point every credential of this package at the imported sandbox credential.
		for (const n of wf.nodes) {
			const creds = n.credentials as Record<string, unknown> | undefined;
			if (creds?.messagingRateApi) creds.messagingRateApi = { ...CREDENTIAL };
		}
		wf.id = (wf.id || `ex${out.length}`).slice(0, 21);
		wf.active = false;
		out.push({ file: f, wf, trigger: String(trigger.name) });
	}
	return out;
}

async function waitForExecutionDone(
	server: N8nServer,
	id: string,
	timeoutMs: number,
): Promise<ExecutionSummary> {
	const until = Date.now() + timeoutMs;
	for (;;) {
		const ex = await server.rest<ExecutionSummary>('GET', `/executions/${id}`);
		if (ex.finished || ['success', 'error', 'crashed', 'canceled'].includes(ex.status)) return ex;
		if (Date.now() > until)
			throw new Error(`execution ${id} still ${ex.status} after ${timeoutMs} ms`);
		await sleep(300);
	}
}

/** All executions of a workflow (pages through GET /rest/executions). */
async function allExecutions(server: N8nServer, workflowId: string): Promise<ExecutionSummary[]> {
	const out: ExecutionSummary[] = [];
	let lastId: string | undefined;
	for (;;) {
		const q = new URLSearchParams({ limit: '100', filter: JSON.stringify({ workflowId }) });
		if (lastId) q.set('lastId', lastId);
		const data = await server.rest<{ results: ExecutionSummary[] }>('GET', `/executions?${q}`);
		out.push(...data.results);
		if (data.results.length < 100) return out;
		lastId = data.results[data.results.length - 1].id;
	}
}

/** What the scenarios share: the install, the sandbox, main and its workers, the imported workflows. */
interface Cluster {
	inst: ReturnType<typeof ensureInstall>;
	sb: Sandbox;
	srv: N8nServer;
	ws: WorkerProc[];
	examples: ReturnType<typeof exampleWorkflows>;
	bulk: WorkflowJson;
	trigger: WorkflowJson;
	idempotent: WorkflowJson;
	capped: WorkflowJson;
	chatReply: WorkflowJson;
	/** The `n8n webhook` process's base URL. */
	webhookUrl: string;
	runTag: string;
}

/** Redis, PostgreSQL and the sandbox; the package in three user folders; main and two workers in queue mode. */
async function startCluster(): Promise<Cluster> {
	mkdirSync(ARTIFACTS_DIR, { recursive: true });
	const runTag = Date.now().toString(36);

	// --- install + services + sandbox ---
	const inst = await timed('n8n install (cached)', async () => ensureInstall());
	const install = await timed('redis-server + postgresql present (apt-get if missing)', () =>
		sh('bash', [SERVICES_SCRIPT, 'install']),
	);
	process.stderr.write(install.stderr);
	if (install.code !== 0) throw new Error('queue-services.sh install failed');
	const svc = await timed('start redis + postgres (temp folder)', () => startServices());
	check('Redis and PostgreSQL started on loopback with data in a temporary folder', true, svc);
	sandbox = await startSandbox({ host: '127.0.0.1' });
	const sb = sandbox;
	log(`sandbox ${sb.url}`);

	// Same queue/DB settings for every n8n process (and the CLI imports): n8nEnv() copies process.env.
	const queueEnv: Record<string, string> = {
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: '127.0.0.1',
		QUEUE_BULL_REDIS_PORT: String(svc.redisPort),
		DB_TYPE: 'postgresdb',
		DB_POSTGRESDB_HOST: '127.0.0.1',
		DB_POSTGRESDB_PORT: String(svc.pgPort),
		DB_POSTGRESDB_DATABASE: 'n8n',
		DB_POSTGRESDB_USER: 'postgres',
		DB_POSTGRESDB_PASSWORD: '',
		N8N_RUNNERS_ENABLED: 'false',
		// Manual executions (the examples' "Run Now") go to the workers too.
		OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS: 'true',
		EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'all',
		EXECUTIONS_DATA_SAVE_ON_ERROR: 'all',
		EXECUTIONS_DATA_SAVE_MANUAL_EXECUTIONS: 'true',
		// A killed worker's job fails within seconds (lock 10 s, checked every 5 s; n8n 2.x never
		// re-runs a stalled job) and main's queue recovery marks its execution crashed (checked every 30 s).
		QUEUE_WORKER_LOCK_DURATION: '10000',
		QUEUE_WORKER_LOCK_RENEW_TIME: '2000',
		QUEUE_WORKER_STALLED_INTERVAL: '5000',
		N8N_EXECUTIONS_QUEUE_RECOVERY_INTERVAL: '0.5',
	};
	Object.assign(process.env, queueEnv);
	facts.queueEnv = queueEnv;

	// --- package into three user folders ---
	const mainFolder = makeUserFolder('n8n-queue-main-');
	userFolders.push(mainFolder);
	const tgz = await timed('npm run build + npm pack', () => packPackage());
	await timed('npm install <tgz> into main/.n8n/nodes', () =>
		installPackageIntoN8n(mainFolder, tgz),
	);
	const workerFolders: string[] = [];
	for (let i = 1; i <= WORKERS; i++) {
		const f = makeUserFolder(`n8n-queue-worker${i}-`);
		userFolders.push(f);
		cpSync(join(mainFolder, '.n8n', 'nodes'), join(f, '.n8n', 'nodes'), { recursive: true });
		workerFolders.push(f);
	}
	const webhookFolder = makeUserFolder('n8n-queue-webhook-');
	userFolders.push(webhookFolder);
	cpSync(join(mainFolder, '.n8n', 'nodes'), join(webhookFolder, '.n8n', 'nodes'), {
		recursive: true,
	});
	rmSync(join(tgz, '..'), { recursive: true, force: true });

	// --- credential + workflows into PostgreSQL ---
	await timed('n8n import:credentials (runs migrations on PostgreSQL)', () =>
		importCredential(
			mainFolder,
			messagingRateCredential({
				...CREDENTIAL,
				baseUrl: sb.url,
				clientId: 'demo-client',
				clientSecret: 'demo-secret',
				bearerLifetimeMinutes: 60,
			}),
		),
	);
	const examples = exampleWorkflows();
	for (const ex of examples)
		await timed(`n8n import:workflow ${ex.file}`, () => importWorkflow(mainFolder, ex.wf));
	const bulk = JSON.parse(readFileSync(BULK_WORKFLOW, 'utf8')) as WorkflowJson;
	await timed('n8n import:workflow queue-bulk-send.json', () => importWorkflow(mainFolder, bulk));
	const trigger = JSON.parse(readFileSync(TRIGGER_WORKFLOW, 'utf8')) as WorkflowJson;
	await timed('n8n import:workflow queue-trigger-once.json', () =>
		importWorkflow(mainFolder, trigger),
	);
	const idempotent = JSON.parse(readFileSync(IDEMPOTENT_WORKFLOW, 'utf8')) as WorkflowJson;
	await timed('n8n import:workflow queue-idempotent-send.json', () =>
		importWorkflow(mainFolder, idempotent),
	);
	const capped = JSON.parse(readFileSync(CAPPED_WORKFLOW, 'utf8')) as WorkflowJson;
	await timed('n8n import:workflow queue-capped-send.json', () =>
		importWorkflow(mainFolder, capped),
	);

	const chatReply = chatReplyWorkflow();
	await timed('n8n import:workflow (Send and Wait, Reply in the Chat)', () =>
		importWorkflow(mainFolder, chatReply),
	);

	// --- main + workers ---
	// The workers sign Send and Wait's resume links with WEBHOOK_URL: the webhook process's address
	// (in production the load balancer's in front of the webhook processes).
	const webhookPort = await freePort();
	const workerEnv = { ...queueEnv, WEBHOOK_URL: `http://127.0.0.1:${webhookPort}/` };
	main = await timed('n8n start (main, queue mode) → healthy', () =>
		startN8n(mainFolder, { env: queueEnv, onSpawn: (c) => children.add(c) }),
	);
	const srv = main;
	const ws = await timed('n8n worker ×2 → /healthz/readiness', () =>
		Promise.all(workerFolders.map((f, i) => startWorker(`worker${i + 1}`, f, workerEnv))),
	);
	workers.push(...ws);
	timings['main startup (spawn → healthy)'] = srv.startupMs;
	for (const w of ws) timings[`${w.name} startup (spawn → ready)`] = w.startupMs;
	check(
		'both workers report ready with the concurrency set',
		ws.every(
			(w) =>
				/n8n worker is now ready/.test(w.log()) &&
				new RegExp(`Concurrency: ${WORKER_CONCURRENCY}`).test(w.log()),
		),
		ws.map((w) => ({ name: w.name, startupMs: w.startupMs })),
	);
	const typesRes = await fetch(`${srv.url}/types/nodes.json`, {
		headers: { cookie: `n8n-auth=${srv.authCookie}` },
	});
	const types = (await typesRes.json()) as Array<{ name: string }>;
	check(
		'main serves the package node types',
		types.some((t) => t.name === NODE_TYPES.messaging),
		`${types.length} types`,
	);

	const webhook = await timed('n8n webhook (a webhook process) → /healthz', () =>
		startWebhookProcess(webhookFolder, webhookPort, workerEnv),
	);
	webhookProcess = webhook;
	check('the webhook process (n8n webhook) is up', true, webhook.url);

	return {
		inst,
		sb,
		srv,
		ws,
		examples,
		bulk,
		trigger,
		idempotent,
		capped,
		chatReply,
		webhookUrl: webhook.url,
		runTag,
	};
}

/** Each example with a Manual Trigger, run through the queue: it succeeds on one worker and sends what its Messaging nodes output. */
async function examplesRunOnWorkers({ sb, srv, ws, examples }: Cluster): Promise<void> {
	const exampleRuns: ExampleRun[] = [];
	for (const ex of examples) {
		const before = sb.ledger().length;
		const r = await timed(`example ${ex.file}: manual run through the queue`, async () => {
			const res = await srv.rest<{ executionId?: string; waitingForWebhook?: boolean }>(
				'POST',
				`/workflows/${ex.wf.id}/run`,
				{ triggerToStartFrom: { name: ex.trigger } },
			);
			if (!res.executionId)
				throw new Error(`manual run of ${ex.wf.id} answered ${JSON.stringify(res)}`);
			const done = await waitForExecutionDone(srv, res.executionId, 120_000);
			return { id: res.executionId, status: done.status, mode: done.mode };
		});
		const full = await getExecution(srv, r.id);
		const runData = full.data?.resultData.runData ?? {};
		const errors = Object.entries(runData).flatMap(([node, runs]) =>
			runs.filter((x) => x.error).map(() => node),
		);
		const delta = sb.ledger().length - before;
		const onWorker = ws
			.filter((w) => workerExecutions(w.log()).started.has(r.id))
			.map((w) => w.name);
		exampleRuns.push({
			file: ex.file,
			id: ex.wf.id,
			executionId: r.id,
			status: r.status,
			ledgerDelta: delta,
		});
		check(
			`example ${ex.file}: execution ${r.id} (${r.mode}) succeeded, no node errors`,
			r.status === 'success' && errors.length === 0,
			{ status: r.status, errors, error: full.data?.resultData.error?.message },
		);
		const messagingNodes = ex.wf.nodes
			.filter((n) => n.type === NODE_TYPES.messaging)
			.map((n) => String(n.name));
		const sentItems = messagingNodes.reduce(
			(s, n) => s + (runData[n]?.[0]?.data?.main?.[0]?.length ?? 0),
			0,
		);
		check(
			`example ${ex.file}: ran on a worker, ledger grew by the ${sentItems} message(s) its Messaging nodes output`,
			onWorker.length === 1 && delta === sentItems && sentItems > 0,
			{
				onWorker,
				ledgerDelta: delta,
				sentItems,
				lastText: sb.ledger().at(-1)?.text?.slice(0, 120),
			},
		);
	}
	facts.examples = exampleRuns;
}

interface BulkRun {
	execs: ExecutionSummary[];
	okResponses: Array<{ call: number; status: number; json: unknown }>;
	expected: Set<string>;
	ledgerBefore: number;
	requestsBefore: number;
	tokensBefore: number;
}

/** CALLS parallel webhook calls of PER_CALL messages each; every execution finishes with success. */
async function bulkSendThroughTheQueue({ sb, srv, bulk, runTag }: Cluster): Promise<BulkRun> {
	await timed('activate bulk webhook workflow', () => srv.activateWorkflow(bulk.id));
	const ledgerBefore = sb.ledger().length;
	const requestsBefore = sb.requests().length;
	const tokensBefore = sb.stats().tokensIssued.wa;
	const textOf = (call: number, i: number) =>
		`queue ${runTag} call ${String(call).padStart(2, '0')} msg ${String(i).padStart(3, '0')}`;
	const expected = new Set<string>();
	for (let c = 0; c < CALLS; c++) for (let i = 0; i < PER_CALL; i++) expected.add(textOf(c, i));

	const sendStarted = Date.now();
	const responses = await timed(
		`bulk: ${CALLS} parallel webhook calls × ${PER_CALL} messages`,
		() =>
			Promise.all(
				Array.from({ length: CALLS }, async (_, c) => {
					const body = {
						call: c,
						messages: Array.from({ length: PER_CALL }, (_x, i) => ({
							phone: PHONE,
							text: textOf(c, i),
						})),
					};
					const res = await fetch(srv.webhookUrl('queue-bulk-send'), {
						method: 'POST',
						headers: { 'content-type': 'application/json' },
						body: JSON.stringify(body),
						signal: AbortSignal.timeout(300_000),
					});
					const text = await res.text();
					let json: unknown;
					try {
						json = JSON.parse(text);
					} catch {
						json = text;
					}
					return { call: c, status: res.status, json };
				}),
			),
	);
	const okResponses = responses.filter(
		(r) => r.status === 200 && Array.isArray(r.json) && (r.json as unknown[]).length === PER_CALL,
	);
	check(
		`bulk: all ${CALLS} webhook calls answered 200 with ${PER_CALL} output items (lastNode / allEntries)`,
		okResponses.length === CALLS,
		{
			ok: okResponses.length,
			bad: responses
				.filter((r) => !okResponses.includes(r))
				.map((r) => ({
					call: r.call,
					status: r.status,
					body: JSON.stringify(r.json).slice(0, 200),
				}))
				.slice(0, 3),
			sample: okResponses[0] ? (okResponses[0].json as unknown[])[0] : undefined,
		},
	);

	// Executions are saved by the workers; wait until all are finished.
	const execs = await timed('bulk: wait until all executions are finished (REST)', async () => {
		const until = Date.now() + 180_000;
		for (;;) {
			const list = await allExecutions(srv, bulk.id);
			const done = list.filter(
				(e) => e.finished || ['success', 'error', 'crashed', 'canceled'].includes(e.status),
			);
			if (list.length >= CALLS && done.length === list.length) return list;
			if (Date.now() > until) return list;
			await sleep(500);
		}
	});
	timings['bulk: first call → all executions finished'] = Date.now() - sendStarted;
	check(
		`bulk: ${CALLS} executions, all mode "webhook" and status "success"`,
		execs.length === CALLS && execs.every((e) => e.status === 'success' && e.mode === 'webhook'),
		{
			count: execs.length,
			statuses: execs.reduce<Record<string, number>>(
				(m, e) => ((m[`${e.mode}/${e.status}`] = (m[`${e.mode}/${e.status}`] ?? 0) + 1), m),
				{},
			),
		},
	);

	return { execs, okResponses, expected, ledgerBefore, requestsBefore, tokensBefore };
}

/** Every message in the ledger exactly once, to the right number, and the output items carry exactly the ledger's ids. */
function ledgerHasEveryMessageOnce(
	{ sb }: Cluster,
	{ okResponses, expected, ledgerBefore }: BulkRun,
): void {
	const newEntries = sb.ledger().slice(ledgerBefore);
	const counts = new Map<string, number>();
	for (const e of newEntries)
		if (e.text !== undefined) counts.set(e.text, (counts.get(e.text) ?? 0) + 1);
	const missing = [...expected].filter((t) => !counts.has(t));
	const dupes = [...counts].filter(([, n]) => n > 1);
	const unexpected = [...counts.keys()].filter((t) => !expected.has(t));
	check(
		`ledger: ${TOTAL} sends recorded, each of the ${TOTAL} unique texts exactly once`,
		newEntries.length === TOTAL &&
			missing.length === 0 &&
			dupes.length === 0 &&
			unexpected.length === 0,
		{
			recorded: newEntries.length,
			unique: counts.size,
			missing: missing.length,
			duplicated: dupes.length,
			unexpected: unexpected.length,
			firstMissing: missing.slice(0, 3),
			firstDupes: dupes.slice(0, 3),
		},
	);
	check(
		'ledger: every send went to the right number for the demo account',
		newEntries.every((e) => e.phone === PHONE && e.clientId === 'demo-client' && e.kind === 'text'),
	);
	// Output items (returned through the webhook) ↔ ledger: same message ids, one item per send.
	const outIds = okResponses.flatMap((r) =>
		(r.json as Array<{ sent?: boolean; id?: string }>).map((o) =>
			o.sent === true ? o.id : undefined,
		),
	);
	const ledgerIds = new Set(newEntries.map((e) => e.id));
	const outIdSet = new Set(outIds.filter(Boolean));
	check(
		`output items: ${TOTAL} items with sent=true and distinct message ids, exactly the ids in the ledger`,
		outIds.length === TOTAL &&
			outIdSet.size === TOTAL &&
			[...outIdSet].every((id) => ledgerIds.has(id as string)) &&
			ledgerIds.size === TOTAL,
		{
			items: outIds.length,
			distinctSentIds: outIdSet.size,
			inLedger: [...outIdSet].filter((id) => ledgerIds.has(id as string)).length,
		},
	);
}

/** Every bulk execution ran on exactly one worker, both workers took part, main ran none. Returns the workers of each execution. */
function workersRanEachExecutionOnce(
	{ srv, ws }: Cluster,
	{ execs }: BulkRun,
): Map<string, string[]> {
	const perWorker = ws.map((w) => ({ name: w.name, ...workerExecutions(w.log()) }));
	const bulkIds = new Set(execs.map((e) => String(e.id)));
	const ranBy = new Map<string, string[]>();
	for (const w of perWorker)
		for (const id of w.started)
			if (bulkIds.has(id)) ranBy.set(id, [...(ranBy.get(id) ?? []), w.name]);
	const perWorkerCount = Object.fromEntries(
		perWorker.map((w) => [w.name, [...w.started].filter((id) => bulkIds.has(id)).length]),
	);
	facts.bulkExecutionsPerWorker = perWorkerCount;
	check(
		'workers: every bulk execution was started and finished by exactly one worker (worker logs)',
		[...bulkIds].every((id) => ranBy.get(id)?.length === 1) &&
			perWorker.every((w) =>
				[...w.started].filter((id) => bulkIds.has(id)).every((id) => w.finished.has(id)),
			),
		{ perWorker: perWorkerCount, notOnAWorker: [...bulkIds].filter((id) => !ranBy.has(id)) },
	);
	check(
		`workers: both workers took part (each ran ≥ 1 of the ${CALLS} executions)`,
		Object.values(perWorkerCount).every((n) => n >= 1),
		perWorkerCount,
	);
	const mainLog = readFileSync(srv.logFile, 'utf8');
	check(
		'main: ran no execution itself (no "Worker started execution" in its log, enqueued only)',
		!/Worker started execution/.test(mainLog),
	);

	return ranBy;
}

/** Each worker sent with one bearer token of its own and fetched at most one token; nothing was rejected. */
async function oneTokenPerWorker(
	{ sb, srv }: Cluster,
	{ execs, requestsBefore, tokensBefore }: BulkRun,
	ranBy: Map<string, string[]>,
): Promise<void> {
	// Map each send request to the execution (call) and so to the worker that ran it.
	const callOfExec = new Map<string, number>();
	await Promise.all(
		execs.map(async (e) => {
			const full = await getExecution(srv, String(e.id));
			const body = full.data?.resultData.runData.Webhook?.[0]?.data?.main?.[0]?.[0]?.json?.body as
				{ call?: number } | undefined;
			if (typeof body?.call === 'number') callOfExec.set(String(e.id), body.call);
		}),
	);
	const workerOfCall = new Map<number, string>();
	for (const [id, call] of callOfExec) {
		const w = ranBy.get(id);
		if (w?.length === 1) workerOfCall.set(call, w[0]);
	}
	const sends = sb
		.requests()
		.slice(requestsBefore)
		.filter((r) => r.path === SEND_PATH && r.params?.method === 'sendMessage');
	const byWorker = new Map<string, { tokens: Set<string>; cookies: Set<string>; sends: number }>();
	let unmapped = 0;
	for (const r of sends) {
		const m = /call (\d+) msg/.exec(String(r.params?.body ?? ''));
		const worker = m ? workerOfCall.get(Number(m[1])) : undefined;
		if (!worker) {
			unmapped++;
			continue;
		}
		const slot = byWorker.get(worker) ?? {
			tokens: new Set<string>(),
			cookies: new Set<string>(),
			sends: 0,
		};
		slot.sends++;
		if (r.authorization) slot.tokens.add(r.authorization);
		if (r.sessionCookie) slot.cookies.add(r.sessionCookie);
		byWorker.set(worker, slot);
	}
	const tokenView = Object.fromEntries(
		[...byWorker].map(([w, s]) => [
			w,
			{ sends: s.sends, bearerTokens: s.tokens.size, sessionCookies: s.cookies.size },
		]),
	);
	facts.sendsPerWorker = tokenView;
	const allTokens = [...byWorker.values()].flatMap((s) => [...s.tokens]);
	const allCookies = new Set(sends.map((r) => r.sessionCookie).filter(Boolean));
	check(
		`requests: all ${TOTAL} send requests accounted for, each worker's sends carry one bearer token of its own`,
		unmapped === 0 &&
			sends.length === TOTAL &&
			[...byWorker.values()].every((s) => s.tokens.size === 1) &&
			new Set(allTokens).size === allTokens.length,
		{
			sends: sends.length,
			unmapped,
			perWorker: tokenView,
		},
	);
	check(
		`requests: ≥ 2 distinct session cookies among the sends (one cookie jar per process)`,
		allCookies.size >= 2,
		{ distinctSessionCookies: allCookies.size },
	);
	const stats = sb.stats();
	const sendingProcesses = byWorker.size;
	facts.tokensIssued = {
		wa: stats.tokensIssued.wa,
		rate: stats.tokensIssued.rate,
		waDuringBulk: stats.tokensIssued.wa - tokensBefore,
	};
	check(
		`tokens: wa tokens issued (${stats.tokensIssued.wa}) ≤ n8n processes that sent (${sendingProcesses}) ≤ 3, i.e. at most one token per worker per lifetime`,
		stats.tokensIssued.wa >= 1 &&
			stats.tokensIssued.wa <= sendingProcesses &&
			sendingProcesses <= 3,
		facts.tokensIssued,
	);
	check(
		`tokens: rate tokens issued (${stats.tokensIssued.rate}) ≤ processes that ran examples`,
		stats.tokensIssued.rate <= WORKERS,
		stats.tokensIssued,
	);
	check(
		'no send was rejected by the sandbox',
		sb.requests().every((r) => !r.rejected),
		sb
			.requests()
			.filter((r) => r.rejected)
			.slice(0, 3),
	);
}

/**
 * A Messaging Trigger with its defaults, its executions on the workers: one message delivered to main and
 * to the `n8n webhook` process at once (a gateway retrying through a load balancer), then once
 * more to the webhook process after its execution, starts one execution, which ran on a worker
 * and sent one reply. The message ids are in n8n's queue Redis, which every receiving process shares.
 */
async function repeatedDeliveryRunsOnce({
	sb,
	srv,
	ws,
	trigger,
	webhookUrl,
}: Cluster): Promise<void> {
	await timed('activate the Messaging Trigger workflow (on main)', () =>
		srv.activateWorkflow(trigger.id),
	);
	try {
		const startedAt = new Date(Date.now() - 1000);
		const ledgerBefore = sb.ledger().length;
		const message = {
			uuid: randomUUID(),
			message: `once in queue mode ${Date.now()}`,
			sender: '6281300000002',
		};
		const racing = await Promise.all([
			sb.deliverIncoming(message),
			sb.deliverIncoming({ ...message, origin: webhookUrl }),
		]);
		await timed("the delivered message's execution finished", () =>
			waitForExecution(srv, { workflowId: trigger.id }, { after: startedAt, timeoutMs: 60_000 }),
		);
		const late = await sb.deliverIncoming({ ...message, origin: webhookUrl });
		await sleep(3000);
		const executions = (await allExecutions(srv, trigger.id)).filter(
			(e) => new Date(e.startedAt) >= startedAt,
		);
		const answers = [...racing, late].map((r) => ({
			to: new URL(r.url).port,
			status: r.status,
			body: JSON.parse(r.body) as { messageId?: string; ignored?: string },
		}));
		check(
			'trigger: main and the webhook process both answered (200): one accepted, the other and the late repeat "repeated delivery"',
			answers.every((a) => a.status === 200) &&
				answers.filter((a) => a.body.ignored === 'repeated delivery of a message already received')
					.length === 2 &&
				answers.filter((a) => a.body.messageId === message.uuid && !a.body.ignored).length === 1 &&
				new Set(answers.map((a) => a.to)).size === 2,
			answers,
		);
		check(
			'trigger: one message delivered to main and to the webhook process started one execution, which succeeded',
			executions.length === 1 && executions[0].status === 'success',
			{ executions: executions.map((e) => `${e.id}:${e.mode}:${e.status}`) },
		);
		const onWorker = ws.filter((w) =>
			workerExecutions(w.log()).started.has(String(executions[0]?.id)),
		);
		check(
			'trigger: that execution ran on a worker, not on main',
			onWorker.length === 1,
			onWorker.map((w) => w.name),
		);
		const replies = sb
			.ledger()
			.slice(ledgerBefore)
			.filter((e) => e.text === `Got it: ${message.message}`);
		check(
			'trigger: exactly one reply was sent, to the sender',
			replies.length === 1 && replies[0].phone === message.sender,
			replies,
		);
	} finally {
		await timed('deactivate the Messaging Trigger workflow', () =>
			srv.deactivateWorkflow(trigger.id),
		);
	}
}

/**
 * Runs `work` with the Skip Repeats Within workflow active and the sandbox answering each send
 * `delayMs` late (so that a run is under way long enough to overlap or be killed).
 */
async function withIdempotentWorkflow(
	{ sb, srv, idempotent }: Pick<Cluster, 'sb' | 'srv' | 'idempotent'>,
	delayMs: number,
	work: () => Promise<void>,
): Promise<void> {
	await timed('activate the Skip Repeats Within workflow', () =>
		srv.activateWorkflow(idempotent.id),
	);
	sb.addFaults([{ kind: 'slow', delayMs, probability: 1, match: { rpcMethod: 'sendMessage' } }]);
	try {
		await work();
	} finally {
		sb.clearFaults();
		await srv.deactivateWorkflow(idempotent.id);
	}
}

/** Posts `texts` to the Skip Repeats Within workflow's webhook (answered at once, run on a worker). */
async function postIdempotent(srv: N8nServer, texts: string[]): Promise<void> {
	const res = await fetch(srv.webhookUrl('queue-idempotent-send'), {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ messages: texts.map((text) => ({ phone: PHONE, text })) }),
	});
	if (res.status !== 200) throw new Error(`webhook answered ${res.status}: ${await res.text()}`);
}

/** How often each text is in the ledger (after `from`). */
function ledgerCounts(sb: Sandbox, texts: string[], from = 0): number[] {
	const counts = new Map<string, number>();
	for (const e of sb.ledger().slice(from))
		if (e.text !== undefined) counts.set(e.text, (counts.get(e.text) ?? 0) + 1);
	return texts.map((text) => counts.get(text) ?? 0);
}

/**
 * Skip Repeats Within across workers: the same 200 items executed twice at once (two webhook
 * calls, two jobs) send 200 messages. Sends answer after 10 ms so that both executions are under
 * way together. Bull gives the two jobs to any worker: tried up to four times until the two ran on
 * both workers; every try must send each message once.
 */
async function sameItemsTwiceAtOnceSendOnce({
	sb,
	srv,
	ws,
	idempotent,
	runTag,
}: Cluster): Promise<void> {
	await withIdempotentWorkflow({ sb, srv, idempotent }, 10, async () => {
		for (let attempt = 1; attempt <= 4; attempt++) {
			const texts = Array.from(
				{ length: IDEMPOTENT_ITEMS },
				(_, i) => `twice at once ${runTag}.${attempt} msg ${String(i).padStart(3, '0')}`,
			);
			const startedAt = new Date(Date.now() - 1000);
			const ledgerBefore = sb.ledger().length;
			await timed(
				`attempt ${attempt}: two webhook calls with the same ${IDEMPOTENT_ITEMS} items, at once`,
				() => Promise.all([postIdempotent(srv, texts), postIdempotent(srv, texts)]),
			);
			const until = Date.now() + 120_000;
			let execs: ExecutionSummary[] = [];
			while (Date.now() < until) {
				execs = (await allExecutions(srv, idempotent.id)).filter(
					(e) => new Date(e.startedAt) >= startedAt,
				);
				if (
					execs.length >= 2 &&
					execs.every((e) => ['success', 'error', 'crashed'].includes(e.status))
				)
					break;
				await sleep(500);
			}
			const workersOf = execs.map(
				(e) => ws.find((w) => workerExecutions(w.log()).started.has(String(e.id)))?.name ?? 'none',
			);
			const counts = ledgerCounts(sb, texts, ledgerBefore);
			const outputs = await Promise.all(
				execs.map(async (e) => nodeOutputOf(await getExecution(srv, String(e.id)), 'Send Text')),
			);
			const sent = outputs.flat().filter((o) => o.sent === true).length;
			const skipped = outputs.flat().filter((o) => o.skipped === true).length;
			check(
				`attempt ${attempt}: the same ${IDEMPOTENT_ITEMS} items executed twice at once sent ${IDEMPOTENT_ITEMS} messages (each once), the other ${IDEMPOTENT_ITEMS} items skipped`,
				execs.length === 2 &&
					execs.every((e) => e.status === 'success') &&
					counts.every((n) => n === 1) &&
					sent === IDEMPOTENT_ITEMS &&
					skipped === IDEMPOTENT_ITEMS,
				{
					executions: execs.map((e, i) => `${e.id}:${e.status}:${workersOf[i]}`),
					ledger: {
						messages: counts.reduce((a, b) => a + b, 0),
						twice: counts.filter((n) => n > 1).length,
						missing: counts.filter((n) => n === 0).length,
					},
					sent,
					skipped,
					skipReason: outputs.flat().find((o) => o.skipped === true)?.reason,
				},
			);
			facts[`twiceAtOnce.attempt${attempt}`] = workersOf;
			if (new Set(workersOf).size === 2 && !workersOf.includes('none')) {
				check('the two executions ran on the two workers at once', true, workersOf);
				return;
			}
		}
		check('the two executions ran on the two workers at once (in one of four attempts)', false);
	});
}

/**
 * A worker killed while it sends 200 items (SIGKILL after about 50 messages). n8n 2.40.7 fails
 * the stalled job (Bull maxStalledCount 0) and keeps no run data of it, so its own Retry of that
 * execution re-runs nothing (checked); the job is re-run the way a user or the sender does, the
 * same 200 items through the webhook again, run by the other worker at once. What the dead
 * worker sent or was sending is skipped, the rest sent: every message once, none missing.
 */
async function killedWorkerRerunSendsNothingTwice({
	sb,
	srv,
	ws,
	idempotent,
	runTag,
}: Cluster): Promise<void> {
	await withIdempotentWorkflow({ sb, srv, idempotent }, 20, async () => {
		const texts = Array.from(
			{ length: IDEMPOTENT_ITEMS },
			(_, i) => `killed worker ${runTag} msg ${String(i).padStart(3, '0')}`,
		);
		const startedAt = new Date(Date.now() - 1000);
		const ledgerBefore = sb.ledger().length;
		await postIdempotent(srv, texts);
		const sentSoFar = () => ledgerCounts(sb, texts, ledgerBefore).filter((n) => n > 0).length;
		const until = Date.now() + 60_000;
		while (sentSoFar() < 50 && Date.now() < until) await sleep(20);
		const [execution] = (await allExecutions(srv, idempotent.id)).filter(
			(e) => new Date(e.startedAt) >= startedAt,
		);
		const victim = ws.find((w) => workerExecutions(w.log()).started.has(String(execution?.id)));
		if (!execution || !victim) {
			check('killed worker: the execution was found running on a worker', false, { execution });
			return;
		}
		process.kill(-(victim.process.pid as number), 'SIGKILL');
		const sentBeforeKill = sentSoFar();
		const killed = { worker: victim.name, execution: execution.id, sentBeforeKill, notInLedger: 0 };
		facts.killedWorker = killed;
		const failed = await timed('killed worker: n8n fails the stalled job', async () => {
			const deadline = Date.now() + 120_000;
			for (;;) {
				const ex = await srv.rest<ExecutionSummary>('GET', `/executions/${execution.id}`);
				if (['crashed', 'error'].includes(ex.status) || Date.now() > deadline) return ex;
				await sleep(1000);
			}
		});
		check(
			`killed worker: ${victim.name} killed after ${sentBeforeKill} of ${IDEMPOTENT_ITEMS} messages; n8n marked execution ${execution.id} ${failed.status}`,
			['crashed', 'error'].includes(failed.status) && sentBeforeKill < IDEMPOTENT_ITEMS,
			{ status: failed.status, sentBeforeKill },
		);

		// n8n's own Retry of it: n8n replaced the run data of the stalled job by its error.
		const ledgerAtRetry = sb.ledger().length;
		await srv.rest('POST', `/executions/${execution.id}/retry`, { loadWorkflow: false });
		const retried = (await allExecutions(srv, idempotent.id)).find(
			(e) => String(e.retryOf ?? '') === String(execution.id),
		);
		const retryRun = retried
			? await getExecution(
					srv,
					String((await waitForExecutionDone(srv, String(retried.id), 60_000)).id),
				)
			: undefined;
		check(
			"killed worker: n8n's Retry of the stalled execution re-runs nothing (n8n 2.40.7 keeps no run data of a stalled job): a re-run is needed",
			retryRun?.status === 'error' &&
				Object.keys(retryRun.data?.resultData.runData ?? {}).length === 0 &&
				sb.ledger().length === ledgerAtRetry,
			{ status: retryRun?.status, error: retryRun?.data?.resultData.error?.message },
		);

		// The re-run at once: what the dead run never claimed is sent, what it claimed is kept.
		const rerunAt = new Date(Date.now() - 1000);
		await timed('killed worker: the same 200 items through the webhook again', () =>
			postIdempotent(srv, texts),
		);
		const rerunDeadline = Date.now() + 120_000;
		let rerun: ExecutionSummary | undefined;
		while (!rerun && Date.now() < rerunDeadline) {
			rerun = (await allExecutions(srv, idempotent.id)).find(
				(e) =>
					new Date(e.startedAt) >= rerunAt &&
					!e.retryOf &&
					['success', 'error', 'crashed'].includes(e.status),
			);
			if (!rerun) await sleep(500);
		}
		const out = rerun ? nodeOutputOf(await getExecution(srv, String(rerun.id)), 'Send Text') : [];
		const counts = ledgerCounts(sb, texts, ledgerBefore);
		const survivor = ws.find((w) => w !== victim);
		const skipped = out.filter((o) => o.skipped === true);
		check(
			`killed worker: the re-run (execution ${rerun?.id}) succeeded on ${survivor?.name}, skipping what the dead worker sent or was sending and sending the rest`,
			rerun?.status === 'success' &&
				!!survivor &&
				workerExecutions(survivor.log()).started.has(String(rerun.id)) &&
				out.length === IDEMPOTENT_ITEMS &&
				skipped.length >= sentBeforeKill &&
				out.every((o) => o.skipped === true || o.sent === true),
			{
				rerun: `${rerun?.id}:${rerun?.status}`,
				skipped: skipped.length,
				sent: out.filter((o) => o.sent === true).length,
				firstSkipReason: skipped[0]?.reason,
				lastSkipReason: skipped.at(-1)?.reason,
			},
		);
		// A kill between the claim and the gateway's receipt leaves that one message unsent: the
		// re-run must then skip it as the dead run's, saying it may have been delivered.
		const missing = out.filter((_, i) => counts[i] === 0);
		check(
			`killed worker: the ledger holds each of the ${IDEMPOTENT_ITEMS} messages once, or none of the one the dead worker was sending, which the re-run skipped as "may have been delivered" (none twice, none lost unseen)`,
			counts.length === IDEMPOTENT_ITEMS &&
				counts.every((n) => n <= 1) &&
				missing.length <= 1 &&
				missing.every(
					(o) =>
						o?.skipped === true &&
						String(o.reason).includes(`was being sent by execution ${execution.id}`),
				),
			{
				twice: counts.filter((n) => n > 1).length,
				missing: counts.filter((n) => n === 0).length,
				missingReason: missing[0]?.reason,
			},
		);
		killed.notInLedger = missing.length;
	});
}

/**
 * Account Cap across workers: two executions of CAPPED_ITEMS messages each, posted at once, share
 * one cap of CAP_PER_MINUTE a minute through n8n's queue Redis. The ledger's own times prove it: at
 * every capped send, the capped sends of the minute before are at most the cap; every message is
 * there once. Real time: 100 messages at 60 a minute, the last 40 in the second minute.
 */
async function cappedSendsAcrossWorkers({ sb, srv, ws, capped, runTag }: Cluster): Promise<void> {
	await timed('activate the Account Cap workflow', () => srv.activateWorkflow(capped.id));
	try {
		const batches = [0, 1].map((batch) =>
			Array.from(
				{ length: CAPPED_ITEMS },
				(_, i) => `capped ${runTag} batch ${batch} msg ${String(i).padStart(3, '0')}`,
			),
		);
		const startedAt = new Date(Date.now() - 1000);
		const ledgerBefore = sb.ledger().length;
		await timed(`two webhook calls of ${CAPPED_ITEMS} messages each, at once`, () =>
			Promise.all(
				batches.map(async (texts) => {
					const res = await fetch(srv.webhookUrl('queue-capped-send'), {
						method: 'POST',
						headers: { 'content-type': 'application/json' },
						body: JSON.stringify({ messages: texts.map((text) => ({ phone: PHONE, text })) }),
					});
					if (res.status !== 200) throw new Error(`webhook answered ${res.status}`);
				}),
			),
		);
		const until = Date.now() + 6 * 60_000;
		let execs: ExecutionSummary[] = [];
		await timed('both capped executions finished', async () => {
			while (Date.now() < until) {
				execs = (await allExecutions(srv, capped.id)).filter(
					(e) => new Date(e.startedAt) >= startedAt,
				);
				if (
					execs.length >= 2 &&
					execs.every((e) => ['success', 'error', 'crashed'].includes(e.status))
				)
					return;
				await sleep(2000);
			}
		});
		const texts = batches.flat();
		const counts = ledgerCounts(sb, texts, ledgerBefore);
		const ledger = sb.ledger();
		const all = ledger.map((e) => Date.parse(e.at));
		const cappedTimes = ledger
			.slice(ledgerBefore)
			.filter((e) => e.text?.startsWith(`capped ${runTag}`))
			.map((e) => Date.parse(e.at));
		// The cap counts the sends of nodes that have it (uncapped nodes record nothing): the
		// scenarios before sent 1,400 uncapped messages from the same account.
		const most = Math.max(
			...cappedTimes.map((t) => cappedTimes.filter((s) => s > t - 60_000 && s <= t).length),
		);
		const mostOfAnySends = Math.max(
			...cappedTimes.map((t) => all.filter((s) => s > t - 60_000 && s <= t).length),
		);
		const span = Math.max(...cappedTimes) - Math.min(...cappedTimes);
		const workersOf = execs.map(
			(e) => ws.find((w) => workerExecutions(w.log()).started.has(String(e.id)))?.name ?? 'none',
		);
		facts['accountCap'] = {
			most,
			mostOfAnySends,
			spanSeconds: Math.round(span / 1000),
			workersOf,
		};
		check(
			`Account Cap ${CAP_PER_MINUTE}/min: two executions of ${CAPPED_ITEMS} at once succeeded on the workers and sent each message once`,
			execs.length === 2 &&
				execs.every((e) => e.status === 'success') &&
				!workersOf.includes('none') &&
				counts.every((n) => n === 1),
			{
				executions: execs.map((e, i) => `${e.id}:${e.status}:${workersOf[i]}`),
				twice: counts.filter((n) => n > 1).length,
				missing: counts.filter((n) => n === 0).length,
			},
		);
		check(
			`Account Cap ${CAP_PER_MINUTE}/min: the ledger never shows more than ${CAP_PER_MINUTE} capped sends in any minute (the cap was needed: ${2 * CAPPED_ITEMS} messages over ${Math.round(span / 1000)} s)`,
			most <= CAP_PER_MINUTE && span >= 60_000,
			{ most, spanSeconds: span / 1000 },
		);
	} finally {
		await srv.deactivateWorkflow(capped.id);
	}
}

const CHAT_PERSON = '6281300000031';
const CHAT_QUESTION = 'Queue mode: send the March price list?';

/** Messaging Trigger → Send and Wait (Reply in the Chat, approval, asks the sender). */
function chatReplyWorkflow(): WorkflowJson {
	const node = (name: string, type: string, x: number, parameters: object) => ({
		id: randomUUID(),
		name,
		type,
		typeVersion: 1,
		position: [x, 0],
		webhookId: randomUUID(),
		parameters,
		credentials: { messagingRateApi: { ...CREDENTIAL } },
	});
	return {
		id: 'queueChatReply1',
		name: 'Queue test: Send and Wait, Reply in the Chat',
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			node('On Message', NODE_TYPES.messagingTrigger, 0, { accountNumber: PHONE }),
			node('Ask', NODE_TYPES.messaging, 240, {
				resource: 'message',
				operation: 'sendAndWait',
				phone: '={{ $json.sender }}',
				message: CHAT_QUESTION,
				responseBy: 'chatReply',
			}),
		],
		connections: { 'On Message': { main: [[{ node: 'Ask', type: 'main', index: 0 }]] } },
	} as unknown as WorkflowJson;
}

/**
 * Send and Wait, Reply in the Chat, across processes: "hello" delivered to main starts one
 * execution, which asks on a worker and waits (the worker writes the wait into n8n's queue Redis);
 * "1" delivered to the `n8n webhook` process is read there as the answer: the trigger resumes the
 * execution through the worker's signed link, starts no execution of its own, and the execution
 * finishes on a worker with approved true.
 */
async function chatReplyResumesAcrossProcesses({
	sb,
	srv,
	ws,
	chatReply,
	webhookUrl,
}: Cluster): Promise<void> {
	await timed('activate the Reply in the Chat workflow (on main)', () =>
		srv.activateWorkflow(chatReply.id),
	);
	try {
		const startedAt = new Date(Date.now() - 1000);
		const ledgerBefore = sb.ledger().length;
		const hello = await sb.deliverIncoming({
			uuid: randomUUID(),
			message: 'hello',
			sender: CHAT_PERSON,
		});
		const waiting = await timed('chat reply: the question asked, the execution waiting', () =>
			waitForExecution(
				srv,
				{ workflowId: chatReply.id },
				{ after: startedAt, timeoutMs: 60_000, predicate: (e) => e.status === 'waiting' },
			),
		);
		const askedOn = ws
			.filter((w) => workerExecutions(w.log()).started.has(String(waiting.id)))
			.map((w) => w.name);
		const question = sb
			.ledger()
			.slice(ledgerBefore)
			.filter((e) => e.phone === CHAT_PERSON);
		check(
			'chat reply: "hello" delivered to main started one execution, which asked on a worker ("Reply 1 to Approve, 2 to Decline") and waits',
			hello.status === 200 &&
				askedOn.length === 1 &&
				question.length === 1 &&
				question[0].text === `${CHAT_QUESTION}\n\nReply 1 to Approve, 2 to Decline`,
			{ hello: hello.status, execution: waiting.id, askedOn, question },
		);

		const replyId = randomUUID();
		const reply = await sb.deliverIncoming({
			uuid: replyId,
			message: '1',
			sender: CHAT_PERSON,
			origin: webhookUrl,
		});
		let body: Record<string, unknown> = {};
		try {
			body = JSON.parse(reply.body) as Record<string, unknown>;
		} catch {
			/* asserted below */
		}
		check(
			'chat reply: "1" delivered to the webhook process: answered 200 with the resumed execution\'s id',
			reply.status === 200 &&
				new URL(reply.url).origin === webhookUrl &&
				body.resumed === String(waiting.id),
			{ url: reply.url, status: reply.status, body: reply.body },
		);
		// Not resumed: a failed check below, and the later steps still run.
		const done = await timed('chat reply: the resumed execution finished', () =>
			waitForExecutionDone(srv, String(waiting.id), 60_000).catch((e: Error) => ({
				status: e.message,
			})),
		);
		const runData = (await getExecution(srv, String(waiting.id))).data?.resultData.runData ?? {};
		const answer = runData.Ask?.at(-1)?.data?.main?.[0]?.[0]?.json ?? {};
		const finishedOn = ws
			.filter((w) => workerExecutions(w.log()).finished.has(String(waiting.id)))
			.map((w) => w.name);
		check(
			'chat reply: the execution finished on a worker with approved true, answered in the chat by the person',
			done.status === 'success' &&
				finishedOn.length > 0 &&
				answer.approved === true &&
				answer.answeredBy === 'chat' &&
				answer.respondedBy === CHAT_PERSON &&
				answer.replyMessageId === replyId,
			{ status: done.status, finishedOn, answer },
		);
		await sleep(3000);
		const executions = (await allExecutions(srv, chatReply.id)).filter(
			(e) => new Date(e.startedAt) >= startedAt,
		);
		check(
			'chat reply: one execution in all (the reply started none), one message to the person',
			executions.length === 1 &&
				sb
					.ledger()
					.slice(ledgerBefore)
					.filter((e) => e.phone === CHAT_PERSON).length === 1,
			{ executions: executions.map((e) => `${e.id}:${e.mode}:${e.status}`) },
		);
	} finally {
		await timed('deactivate the Reply in the Chat workflow', () =>
			srv.deactivateWorkflow(chatReply.id),
		);
	}
}

/** The JSON of a node's first output items in an execution read over REST. */
function nodeOutputOf(
	ex: Awaited<ReturnType<typeof getExecution>>,
	node: string,
): Array<Record<string, unknown>> {
	const runs = ex.data?.resultData.runData[node];
	return (runs?.[0]?.data?.main?.[0] ?? []).map((item) => item.json as Record<string, unknown>);
}

async function run(): Promise<void> {
	const cluster = await startCluster();
	await examplesRunOnWorkers(cluster);
	const bulkRun = await bulkSendThroughTheQueue(cluster);
	ledgerHasEveryMessageOnce(cluster, bulkRun);
	const ranBy = workersRanEachExecutionOnce(cluster, bulkRun);
	await oneTokenPerWorker(cluster, bulkRun, ranBy);
	await repeatedDeliveryRunsOnce(cluster);
	await sameItemsTwiceAtOnceSendOnce(cluster);
	await cappedSendsAcrossWorkers(cluster);
	await chatReplyResumesAcrossProcesses(cluster);
	// Last: it kills a worker.
	await killedWorkerRerunSendsNothingTwice(cluster);
	const { srv, ws, bulk, inst } = cluster;
	const mainLog = readFileSync(srv.logFile, 'utf8');
	await timed('deactivate bulk workflow', () => srv.deactivateWorkflow(bulk.id));
	const outbound = [mainLog, ...ws.map((w) => w.log())]
		.join('\n')
		.split('\n')
		.filter((l) => /ENOTFOUND|EAI_AGAIN|api(-staging)?\.n8n\.io/.test(l));
	check(
		'n8n logs show no outbound calls (api.n8n.io etc.)',
		outbound.length === 0,
		outbound.slice(0, 3),
	);
	facts.install = inst.dir;
}

const overall = setTimeout(() => {
	check(`whole run finished within ${OVERALL_TIMEOUT_MS / 60_000} minutes`, false);
	void cleanup().finally(() => finish());
}, OVERALL_TIMEOUT_MS);

const t0 = Date.now();
function finish(): never {
	clearTimeout(overall);
	timings['total'] = Date.now() - t0;
	process.exit(report.summarise({ calls: CALLS, perCall: PER_CALL }));
}

run()
	.catch((e: unknown) => {
		check(
			'queue run completed without an exception',
			false,
			e instanceof Error ? `${e.message}\n${e.stack}` : String(e),
		);
	})
	.finally(async () => {
		await cleanup();
		finish();
	});
