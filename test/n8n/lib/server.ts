/**
 * `n8n start` in the background, its REST API as the owner, activation and executions.
 */
import { spawn, type ChildProcess } from 'child_process';
import { createWriteStream } from 'fs';
import { join } from 'path';
import { n8nEnv, type N8nRun } from './cli';
import { installFor, type N8nInstall } from './install';
import { freePort, sleep } from './util';

/** Owner account created on every started n8n (n8n's password rules: 8+ chars, a digit, an upper-case letter). */
export const OWNER = {
	email: 'owner@e2e.test',
	firstName: 'E2E',
	lastName: 'Owner',
	password: 'E2e-Password-1',
};

/** GET /rest/workflows/:id/publication-status (n8n 2.x). */
interface PublicationStatus {
	status: 'in_progress' | 'not_published' | 'published' | 'partial' | 'failed';
	liveVersionId: string | null;
	pendingVersionId: string | null;
	triggers: Array<{ nodeId: string; status: string; errorMessage: string | null }>;
}

export interface N8nServer {
	/** The install running this server (its target says which n8n and Node). */
	install: N8nInstall;
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
	activateWorkflow(
		id: string,
		opts?: { allowFailure?: boolean; timeoutMs?: number },
	): Promise<Record<string, unknown> & { publication?: PublicationStatus }>;
	/** POST /rest/workflows/:id/deactivate, then waits until the triggers are removed. */
	deactivateWorkflow(
		id: string,
		opts?: { timeoutMs?: number },
	): Promise<Record<string, unknown> & { publication?: PublicationStatus }>;
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
	const all =
		typeof res.headers.getSetCookie === 'function'
			? res.headers.getSetCookie()
			: [res.headers.get('set-cookie') ?? ''];
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
async function stopProcessGroup(
	child: ChildProcess,
	exitPromise: Promise<void>,
	hasExited: () => boolean,
): Promise<void> {
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

export interface N8nProcess {
	child: ChildProcess;
	/** How it ended, once it has. */
	exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
	/** Stops its process group (once; later calls wait for the same stop). */
	stop(): Promise<void>;
}

/**
 * Spawns `n8n <args>` with the install's Node, detached: its own process group, so stop() also
 * reaches the task-runner child n8n starts. Output (stdout and stderr) goes to `onData`.
 */
export function spawnN8n(
	inst: N8nInstall,
	userFolder: string,
	args: string[],
	env: NodeJS.ProcessEnv,
	onData: (d: Buffer) => void,
): N8nProcess {
	const child = spawn(inst.node, [inst.n8nBin, ...args], {
		cwd: userFolder,
		env,
		stdio: ['ignore', 'pipe', 'pipe'],
		detached: true,
	});
	child.stdout?.on('data', onData);
	child.stderr?.on('data', onData);
	let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
	const exitPromise = new Promise<void>((res) =>
		child.on('exit', (code, signal) => {
			exited = { code, signal };
			res();
		}),
	);
	let stopping: Promise<void> | undefined;
	return {
		child,
		exited: () => exited,
		stop: () => (stopping ??= stopProcessGroup(child, exitPromise, () => exited !== undefined)),
	};
}

/**
 * Starts `n8n start` in the background on a fresh user folder, waits until it is healthy, creates
 * the owner (POST /rest/owner/setup) and keeps the owner's auth cookie for REST and Playwright.
 */
export async function startN8n(
	userFolder: string,
	portOrOpts: number | StartOptions = {},
): Promise<N8nServer> {
	const opts: StartOptions = typeof portOrOpts === 'number' ? { port: portOrOpts } : portOrOpts;
	const inst = installFor(userFolder);
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
	const proc = spawnN8n(inst, userFolder, ['start'], env, (d) => {
		logStream.write(d);
		for (const line of d.toString('utf8').split('\n')) if (line.trim()) recent.push(line);
		if (recent.length > 400) recent.splice(0, recent.length - 400);
	});
	const child = proc.child;
	opts.onSpawn?.(child);
	const logs = (lines = 80) => recent.slice(-lines).join('\n');
	let stopping: Promise<void> | undefined;
	const stop = () =>
		(stopping ??= (async () => {
			await proc.stop();
			logStream.end();
		})());

	// Wait for health.
	const deadline = started + (opts.timeoutMs ?? 180_000);
	let healthy = false;
	while (Date.now() < deadline) {
		if (proc.exited()) break;
		try {
			// Older n8n 1.x (1.50.0) has /healthz only: a 404 on /readiness means "ask /healthz".
			let r = await fetch(`${url}/healthz/readiness`);
			if (r.status === 404) r = await fetch(`${url}/healthz`);
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
		throw new Error(
			`n8n start did not become healthy (${proc.exited() ? `exited ${proc.exited()?.code ?? proc.exited()?.signal}` : 'timeout'})\n${logs()}`,
		);
	}
	const startupMs = Date.now() - started;

	let authCookie = '';
	const rawFetch = async (method: string, path: string, body?: unknown, withCookie = true) => {
		const headers: Record<string, string> = { accept: 'application/json' };
		if (body !== undefined) headers['content-type'] = 'application/json';
		if (withCookie && authCookie) headers.cookie = `${AUTH_COOKIE}=${authCookie}`;
		return await fetch(`${url}/rest${path}`, {
			method,
			headers,
			body: body === undefined ? undefined : JSON.stringify(body),
		});
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
		return (
			parsed && typeof parsed === 'object' && 'data' in parsed
				? (parsed as { data: T }).data
				: parsed
		) as T;
	};
	const login = async () => {
		// No browser-id header: the JWT then carries no browser binding, so the same cookie works for
		// REST calls here and inside Playwright (the editor sends its own browser-id).
		// `email` is what older n8n 1.x reads; newer versions read emailOrLdapLoginId and ignore it.
		const res = await rawFetch(
			'POST',
			'/login',
			{ emailOrLdapLoginId: OWNER.email, email: OWNER.email, password: OWNER.password },
			false,
		);
		if (!res.ok)
			throw new Error(`POST /rest/login -> ${res.status}: ${(await res.text()).slice(0, 300)}`);
		authCookie = cookieFrom(res) ?? '';
		if (!authCookie) throw new Error('POST /rest/login set no n8n-auth cookie');
		return authCookie;
	};

	const waitForPublication = async (
		id: string,
		done: (s: PublicationStatus) => boolean,
		timeoutMs = 60_000,
	): Promise<PublicationStatus | undefined> => {
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
			if (Date.now() > until)
				throw new Error(
					`workflow ${id}: publication still ${st.status} after ${timeoutMs} ms: ${JSON.stringify(st)}`,
				);
			await sleep(200);
		}
	};

	const server: N8nServer = {
		install: inst,
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
		activateWorkflow: async (
			id: string,
			o: { allowFailure?: boolean; timeoutMs?: number } = {},
		) => {
			const wf = await rest<{ versionId: string; activeVersionId?: string | null }>(
				'GET',
				`/workflows/${id}`,
			);
			// n8n 1.x activates by saving the workflow with active: true (and answers errors of the trigger's activation there).
			const res =
				inst.target.major >= 2
					? await rest<Record<string, unknown>>('POST', `/workflows/${id}/activate`, {
							versionId: wf.versionId,
						})
					: await rest<Record<string, unknown>>('PATCH', `/workflows/${id}`, {
							active: true,
							versionId: wf.versionId,
						});
			if (!res.active && !res.activeVersionId)
				throw new Error(
					`workflow ${id} not active after activate: ${JSON.stringify(res).slice(0, 300)}`,
				);
			// n8n 2.x publishes through an outbox: triggers/webhooks are registered asynchronously.
			const publication = await waitForPublication(
				id,
				(st) => st.status !== 'in_progress' && st.status !== 'not_published',
				o.timeoutMs,
			);
			if (publication && publication.status !== 'published' && !o.allowFailure) {
				throw new Error(
					`workflow ${id}: publication ${publication.status}: ${JSON.stringify(publication.triggers)}\n${logs(30)}`,
				);
			}
			return { ...res, publication };
		},
		deactivateWorkflow: async (id: string, o: { timeoutMs?: number } = {}) => {
			let res: Record<string, unknown>;
			if (inst.target.major >= 2) {
				res = await rest<Record<string, unknown>>('POST', `/workflows/${id}/deactivate`, {});
			} else {
				const wf = await rest<{ versionId: string }>('GET', `/workflows/${id}`);
				res = await rest<Record<string, unknown>>('PATCH', `/workflows/${id}`, {
					active: false,
					versionId: wf.versionId,
				});
			}
			const publication = await waitForPublication(
				id,
				(st) => st.status === 'not_published',
				o.timeoutMs,
			);
			return { ...res, publication };
		},
		publicationStatus: async (id: string) =>
			await rest<PublicationStatus>('GET', `/workflows/${id}/publication-status`),
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
				if (!/already|setup/i.test(text))
					throw new Error(`POST /rest/owner/setup -> ${res.status}: ${text.slice(0, 300)}`);
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
export async function listExecutions(
	server: N8nServer,
	filter: { workflowId?: string; status?: string[] } = {},
	limit = 50,
): Promise<ExecutionSummary[]> {
	const q = new URLSearchParams({ limit: String(limit) });
	if (Object.keys(filter).length) q.set('filter', JSON.stringify(filter));
	const data = await server.rest<{ results: ExecutionSummary[]; count: number }>(
		'GET',
		`/executions?${q}`,
	);
	return data.results;
}

/** GET /rest/executions/:id with the run data decoded (n8n sends it as a `flatted` string). */
export async function getExecution(
	server: N8nServer,
	id: string,
): Promise<ExecutionSummary & { data?: N8nRun['data'] }> {
	const ex = await server.rest<ExecutionSummary & { data?: unknown }>('GET', `/executions/${id}`);
	if (typeof ex.data === 'string') {
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const flatted = require(join(server.install.dir, 'node_modules', 'flatted')) as {
			parse(s: string): unknown;
		};
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
	const pred =
		opts.predicate ??
		((e: ExecutionSummary) => e.finished || e.status === 'success' || e.status === 'error');
	for (;;) {
		const list = await listExecutions(server, filter);
		const hit = list.find((e) => (!opts.after || new Date(e.startedAt) >= opts.after) && pred(e));
		if (hit) return hit;
		if (Date.now() > deadline)
			throw new Error(
				`no matching execution within ${opts.timeoutMs ?? 30_000} ms; have: ${JSON.stringify(list).slice(0, 500)}`,
			);
		await sleep(300);
	}
}
