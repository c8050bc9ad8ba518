/**
 * What a real-n8n scenario (one file in test/n8n/scenarios/) receives. The runner (test/n8n/e2e.ts)
 * prepares it once per n8n version: the packed package installed into a fresh user folder, a sandbox
 * gateway, the "Sandbox" credential pointing at it, every workflow of examples/ and
 * test/n8n/workflows/ imported, and `n8n start` running. A scenario records checks in `report`
 * (prefixed with the n8n version) and must leave the server running.
 */
import { existsSync, readFileSync, readdirSync } from 'fs';
import { join } from 'path';
import type { Sandbox } from '../../../sandbox/types';
import {
	PACKAGE_NAME,
	nodeOutput,
	type ExecuteResult,
	type N8nRun,
	type WorkflowJson,
} from './cli';
import type { N8nInstall, N8nTarget } from './install';
import type { Report } from './report';
import type { N8nServer } from './server';

/** The sandbox account the credential logs in to; the examples and test workflows use its number. */
export const SANDBOX_ACCOUNT = {
	clientId: 'demo-client',
	clientSecret: 'demo-secret',
	number: '6281288776713',
	/** Webhook the account has before any trigger is activated (a trigger must put it back on deactivation). */
	previousWebhook: 'http://127.0.0.1:9/previous-webhook',
} as const;

/** The credential id and name every example and test workflow references. */
export const SANDBOX_CREDENTIAL = { id: 'sandbox-credential', name: 'Sandbox' } as const;

export interface WorkflowFile {
	/** Path relative to the repository root, e.g. "examples/daily-rates-to-chat.json". */
	file: string;
	wf: WorkflowJson;
}

export interface ScenarioContext {
	target: N8nTarget;
	install: N8nInstall;
	/** n8n's user folder (package installed under .n8n/nodes, credential and workflows imported). */
	userFolder: string;
	/** `n8n start` on that folder, logged in as the owner. */
	server: N8nServer;
	sandbox: Sandbox;
	account: typeof SANDBOX_ACCOUNT;
	credential: typeof SANDBOX_CREDENTIAL;
	/** Every imported workflow (examples/ first, then test/n8n/workflows/). */
	workflows: WorkflowFile[];
	/** An imported workflow by id (throws when there is none). */
	workflow(id: string): WorkflowFile;
	/** `n8n execute --id=<id>` on the user folder (a separate n8n process next to the server). */
	execute(workflowId: string): Promise<ExecuteResult>;
	/** The packed package (.tgz) under test, for scenarios that install it another way. */
	packageTarball: string;
	/** Imports one more workflow (a file path or an object with an "id"); returns its id. */
	importWorkflow(fileOrWorkflow: string | WorkflowJson): Promise<string>;
	/** Records checks, timings and facts; names are prefixed with the n8n version. */
	report: Report;
	options: { editor: boolean };
}

/** A scenario: one exported named async function per file in test/n8n/scenarios/. */
export type Scenario = (t: ScenarioContext) => Promise<void>;

export function readWorkflowDir(dir: string, repoRoot: string): WorkflowFile[] {
	if (!existsSync(dir)) return [];
	return readdirSync(dir)
		.filter((f) => f.endsWith('.json'))
		.sort()
		.map((f) => ({
			file: join(dir, f).slice(repoRoot.length + 1),
			wf: JSON.parse(readFileSync(join(dir, f), 'utf8')) as WorkflowJson,
		}));
}

export interface WorkflowNode {
	name: string;
	type: string;
	parameters?: Record<string, unknown>;
	webhookId?: string;
}

export function nodesOf(wf: WorkflowJson): WorkflowNode[] {
	return wf.nodes as unknown as WorkflowNode[];
}

export function hasManualTrigger(wf: WorkflowJson): boolean {
	return nodesOf(wf).some((n) => n.type === 'n8n-nodes-base.manualTrigger');
}

/** The run's error as one line ("<node>: <message> <description>"), if it failed. */
function runError(run: N8nRun | undefined): string | undefined {
	const err = run?.data?.resultData?.error;
	return err
		? `${err.node?.name ?? ''}: ${err.message ?? ''} ${err.description ?? ''}`.trim()
		: undefined;
}

/** `n8n execute` of one workflow with the checks every run gets; returns the run. */
export async function executeWithGenericChecks(
	t: ScenarioContext,
	id: string,
): Promise<N8nRun | undefined> {
	const { file, wf } = t.workflow(id);
	const ledgerBefore = t.sandbox.ledger().length;
	const ex = await t.report.timed(`n8n execute ${file}`, () => t.execute(wf.id));
	t.report.check(
		`n8n execute ${file}: status success`,
		ex.ok,
		ex.ok
			? { ms: ex.ms }
			: {
					code: ex.code,
					status: ex.run?.status,
					error: runError(ex.run),
					stdout: ex.stdout.slice(-1500),
					stderr: ex.stderr.slice(-800),
				},
	);
	const ours = nodesOf(wf).filter((n) => n.type.startsWith(`${PACKAGE_NAME}.`));
	for (const n of ours) {
		const out = nodeOutput(ex.run, n.name);
		t.report.check(
			`n8n execute ${file}: node "${n.name}" produced items without errors`,
			out.length > 0 && out.every((i) => i.error === undefined),
			out.slice(0, 2),
		);
	}
	t.report.check(
		`n8n execute ${file}: the sandbox recorded its sends`,
		t.sandbox.ledger().length > ledgerBefore ||
			!ours.some((n) => n.parameters?.resource === 'message'),
		{
			newEntries: t.sandbox.ledger().length - ledgerBefore,
		},
	);
	return ex.run;
}
