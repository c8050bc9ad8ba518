/**
 * The n8n CLI on a user folder: the environment of an n8n process, importing credentials and
 * workflows, `n8n execute` and reading its run.
 */
import { randomBytes } from 'crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'fs';
import { join } from 'path';
import { installFor } from './install';
import { cleanEnv, freePort, mustSucceed, runCommand, type RunResult } from './util';

/** Names the package under test uses (kept here so tests and fixtures agree). */
export const PACKAGE_NAME = 'n8n-nodes-messaging-rate';
export const CREDENTIAL_TYPE = 'messagingRateApi';
export const NODE_TYPES = {
	messaging: `${PACKAGE_NAME}.messaging`,
	currencyRate: `${PACKAGE_NAME}.currencyRate`,
	messagingTrigger: `${PACKAGE_NAME}.messagingTrigger`,
	currencyRateTrigger: `${PACKAGE_NAME}.currencyRateTrigger`,
	messagingAccountTrigger: `${PACKAGE_NAME}.messagingAccountTrigger`,
} as const;

/** Fixed key, so credentials imported by the CLI and read by `n8n start` always agree. */
const ENCRYPTION_KEY = 'n8n-nodes-messaging-rate-e2e-only-key';

/**
 * Environment for any n8n command on the given user folder. No outbound calls (telemetry,
 * version checks, templates, banners, license renewal) and no first-run popups.
 * Note: n8n 2.x always runs Code nodes in a task runner (N8N_RUNNERS_ENABLED is gone; n8n lists
 * it as "safe to remove"); the runner broker listens on N8N_RUNNERS_BROKER_PORT (default 5679),
 * so every n8n process here gets its own broker port.
 */
export function n8nEnv(userFolder: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
	// Nothing from the driver's Node/npm/ts-node may leak into n8n's Node.
	const env = cleanEnv();
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
		GENERIC_TIMEZONE: 'UTC',
		N8N_LOG_LEVEL: 'info',
		N8N_LOG_OUTPUT: 'console',
	});
	Object.assign(env, installFor(userFolder).target.env, extra);
	return env;
}

/** Runs `n8n <args>` with the install bound to the user folder (see makeUserFolder). */
async function runN8nCli(
	userFolder: string,
	args: string[],
	opts: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<RunResult> {
	const inst = installFor(userFolder);
	const brokerPort = String(await freePort());
	return await runCommand(inst.node, [inst.n8nBin, ...args], {
		cwd: userFolder,
		env: n8nEnv(userFolder, { N8N_RUNNERS_BROKER_PORT: brokerPort, ...opts.env }),
		timeoutMs: opts.timeoutMs ?? 180_000,
	});
}

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
	bearerLifetimeMinutes?: number;
	timeoutSeconds?: number;
	ignoreSSLIssues?: boolean;
}): CredentialSpec {
	return {
		id: opts.id ?? 'msgRateCredE2E01',
		name: opts.name ?? 'Messaging Rate (e2e)',
		type: CREDENTIAL_TYPE,
		data: {
			baseUrl: opts.baseUrl,
			clientId: opts.clientId,
			clientSecret: opts.clientSecret,
			bearerLifetimeMinutes: opts.bearerLifetimeMinutes ?? 60,
			timeoutSeconds: opts.timeoutSeconds ?? 30,
			ignoreSSLIssues: opts.ignoreSSLIssues ?? false,
		},
	};
}

/** `n8n import:credentials --input=<file>` (file = JSON array). Owner: the instance owner's personal project. */
export async function importCredential(
	userFolder: string,
	creds: CredentialSpec | CredentialSpec[],
): Promise<RunResult> {
	const list = Array.isArray(creds) ? creds : [creds];
	const file = join(userFolder, `credentials-${randomBytes(4).toString('hex')}.json`);
	writeFileSync(
		file,
		JSON.stringify(
			list.map((c) => ({ ...c, isManaged: false })),
			null,
			2,
		),
	);
	const r = await runN8nCli(userFolder, ['import:credentials', `--input=${file}`]);
	if (r.code !== 0 || !/Successfully imported/.test(r.stdout + r.stderr))
		mustSucceed('n8n import:credentials', { ...r, code: r.code || 1 });
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
 * must have an "id" of at most 16 chars: n8n 1.x stores no static data (trigger memory,
 * registrations) for a longer id, and 2.x at most 21 (`isWorkflowIdValid`). Import always leaves it inactive
 * (regular mode): activate through startN8n(...).activateWorkflow(id), or run
 * publishWorkflow() before `n8n start`. Returns the workflow id.
 */
export async function importWorkflow(
	userFolder: string,
	fileOrWorkflow: string | WorkflowJson,
	overrides: Partial<WorkflowJson> = {},
): Promise<string> {
	const [id] = await importWorkflows(userFolder, [fileOrWorkflow], overrides);
	return id;
}

/** Several workflows with one `n8n import:workflow --separate` (one n8n start instead of one each); returns their ids. */
export async function importWorkflows(
	userFolder: string,
	filesOrWorkflows: Array<string | WorkflowJson>,
	overrides: Partial<WorkflowJson> = {},
): Promise<string[]> {
	const dir = join(userFolder, `import-${randomBytes(4).toString('hex')}`);
	mkdirSync(dir);
	const ids = filesOrWorkflows.map((fileOrWorkflow) => {
		const wf: WorkflowJson = {
			...(typeof fileOrWorkflow === 'string'
				? (JSON.parse(readFileSync(fileOrWorkflow, 'utf8')) as WorkflowJson)
				: fileOrWorkflow),
			...overrides,
		};
		if (!wf.id) throw new Error('importWorkflow: the workflow needs an "id"');
		if (wf.id.length > 16)
			throw new Error(
				`importWorkflow: id "${wf.id}" is longer than 16 chars (n8n 1.x then saves no static data for it)`,
			);
		wf.settings ??= { executionOrder: 'v1' };
		writeFileSync(join(dir, `workflow-${wf.id}.json`), JSON.stringify(wf, null, 2));
		return wf.id;
	});
	const r = await runN8nCli(userFolder, ['import:workflow', '--separate', `--input=${dir}`]);
	if (r.code !== 0 || !/Successfully imported/.test(r.stdout + r.stderr))
		mustSucceed('n8n import:workflow', { ...r, code: r.code || 1 });
	return ids;
}

/** `n8n publish:workflow --id=<id>`: marks the current version active; a later `n8n start` activates it. */
export async function publishWorkflow(userFolder: string, id: string): Promise<void> {
	mustSucceed(
		'n8n publish:workflow',
		await runN8nCli(userFolder, ['publish:workflow', `--id=${id}`]),
	);
}

/** Parsed run of a workflow (the shape `n8n execute --rawOutput` prints, an IRun). */
export interface N8nRun {
	status: string;
	finished: boolean;
	mode: string;
	data: {
		resultData: {
			runData: Record<
				string,
				Array<{
					executionStatus?: string;
					error?: unknown;
					data?: {
						main?: Array<Array<{
							json: Record<string, unknown>;
							binary?: Record<string, unknown>;
							pairedItem?: unknown;
						}> | null>;
					};
				}>
			>;
			lastNodeExecuted?: string;
			error?: { message?: string; description?: string; node?: { name?: string } } & Record<
				string,
				unknown
			>;
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
export async function executeWorkflow(
	userFolder: string,
	id: string,
	opts: { timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<ExecuteResult> {
	const r = await runN8nCli(userFolder, ['execute', `--id=${id}`, '--rawOutput'], opts);
	const runJson = extractJsonObject<N8nRun>(r.stdout);
	const exitCrashed = r.signal === 'SIGSEGV' || r.code === 139;
	return {
		...r,
		run: runJson,
		exitCrashed,
		ok: (r.code === 0 || exitCrashed) && runJson?.status === 'success' && runJson.finished === true,
	};
}

/** Output items (json) of a node in a run: `nodeOutput(run, 'Set')[0].doubled`. */
export function nodeOutput(
	runJson: N8nRun | undefined,
	nodeName: string,
	opts: { runIndex?: number; output?: number } = {},
): Array<Record<string, unknown>> {
	const runs = runJson?.data?.resultData?.runData?.[nodeName];
	const main = runs?.[opts.runIndex ?? 0]?.data?.main?.[opts.output ?? 0];
	return (main ?? []).map((i) => i.json);
}
