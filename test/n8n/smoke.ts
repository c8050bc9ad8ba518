/**
 * Proves the real-n8n harness on this machine, with built-in nodes and a stand-in community
 * package (test/n8n/fixtures/stub-package), independent of this repository's own build:
 *
 *   1. scripts/n8n-install.sh (cached install of n8n 2.40.7 + Node 24 + playwright-core),
 *   2. CLI: pack + `npm install` the stub into <userFolder>/.n8n/nodes, import a credential and
 *      two workflows, `n8n execute --id --rawOutput` (Manual Trigger → Code → Edit Fields, and one
 *      that runs the stub node with the imported credential),
 *   3. `n8n start`: /healthz, owner setup, REST login, node types include the stub,
 *      activate a Webhook workflow through REST, call it, see the execution through REST,
 *   4. editor: a built-in node with Resource/Operation (GitHub) and the stub node, read their
 *      option lists, screenshots in test-artifacts/n8n/.
 *
 * Run from the repository root:  npx ts-node --transpile-only test/n8n/smoke.ts [--no-editor] [--keep]
 * Prints what it checked; exits 1 on any failure.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { dirname, join } from 'path';
import { inspectNode, isExpectedExternal, screenshotWorkflowIn, withEditor } from './editor';
import {
	ARTIFACTS_DIR,
	REPO_ROOT,
	Report,
	ensureInstall,
	executeWorkflow,
	getExecution,
	importCredential,
	importWorkflow,
	installPackageIntoN8n,
	listExecutions,
	log,
	makeUserFolder,
	nodeOutput,
	packPackage,
	publishWorkflow,
	startN8n,
	waitForExecution,
	type N8nServer,
	type WorkflowJson,
} from './lib';

const args = new Set(process.argv.slice(2));
const report = new Report('smoke');
const { timings } = report;
const check = report.check.bind(report);
const timed = report.timed.bind(report);

const manualWorkflow: WorkflowJson = {
	id: 'smokeManual0001',
	name: 'Smoke: manual → code → set',
	nodes: [
		{
			id: 'a1',
			name: 'Manual',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
		{
			id: 'a2',
			name: 'Code',
			type: 'n8n-nodes-base.code',
			typeVersion: 2,
			position: [220, 0],
			parameters: { jsCode: 'return [{ json: { sum: 1 + 2 } }, { json: { sum: 10 } }];' },
		},
		{
			id: 'a3',
			name: 'Set',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [440, 0],
			parameters: {
				assignments: {
					assignments: [
						{ id: 'x1', name: 'doubled', type: 'number', value: '={{ $json.sum * 2 }}' },
					],
				},
				includeOtherFields: true,
				options: {},
			},
		},
	],
	connections: {
		Manual: { main: [[{ node: 'Code', type: 'main', index: 0 }]] },
		Code: { main: [[{ node: 'Set', type: 'main', index: 0 }]] },
	},
};

const stubCredential = {
	id: 'stubCredE2E0001',
	name: 'Stub account',
	type: 'e2eStubApi',
	data: {
		baseUrl: 'http://127.0.0.1:9/stub',
		clientId: 'client-123',
		clientSecret: 'very-secret',
		bearerLifetimeMinutes: 60,
		timeoutSeconds: 30,
		ignoreSSLIssues: false,
	},
};

const stubWorkflow: WorkflowJson = {
	id: 'smokeStub000001',
	name: 'Smoke: community package + credential',
	nodes: [
		{
			id: 'b1',
			name: 'Manual',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
		{
			id: 'b2',
			name: 'Stub',
			type: 'n8n-nodes-e2e-stub.e2eStub',
			typeVersion: 1,
			position: [220, 0],
			parameters: { resource: 'message', operation: 'sendFile', text: 'hello' },
			// Reference by id and name, as exported workflows do.
			credentials: { e2eStubApi: { id: stubCredential.id, name: stubCredential.name } },
		},
	],
	connections: { Manual: { main: [[{ node: 'Stub', type: 'main', index: 0 }]] } },
};

const webhookWorkflow: WorkflowJson = {
	id: 'smokeWebhook001',
	name: 'Smoke: webhook',
	nodes: [
		{
			id: 'c1',
			name: 'Webhook',
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2,
			position: [0, 0],
			webhookId: '6f1f4bde-5c0e-4c1e-9a57-1f6f1d3a0b11',
			parameters: { httpMethod: 'POST', path: 'smoke-hook', responseMode: 'lastNode', options: {} },
		},
		{
			id: 'c2',
			name: 'Set',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [220, 0],
			parameters: {
				assignments: {
					assignments: [
						{ id: 'y1', name: 'echo', type: 'string', value: '={{ $json.body.ping }}-pong' },
					],
				},
				options: {},
			},
		},
	],
	connections: { Webhook: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
};

async function main(): Promise<void> {
	mkdirSync(ARTIFACTS_DIR, { recursive: true });

	// 1. install
	const inst = await timed('install (ensureInstall)', async () => ensureInstall());
	check('install: Node 24 binary, n8n bin, playwright-core and chromium present', true, inst);

	// 2. CLI on a fresh user folder
	const userFolder = makeUserFolder('n8n-e2e-smoke-');
	log(`user folder ${userFolder}`);
	const tgz = await timed('npm pack (stub package)', () =>
		packPackage({ dir: join(REPO_ROOT, 'test/n8n/fixtures/stub-package'), build: false }),
	);
	const installed = await timed('npm install <tgz> into .n8n/nodes', () =>
		installPackageIntoN8n(userFolder, tgz),
	);
	check('stub package installed into <userFolder>/.n8n/nodes', true, installed);

	await timed('n8n import:credentials', () => importCredential(userFolder, stubCredential));
	await timed('n8n import:workflow (1st, runs migrations)', () =>
		importWorkflow(userFolder, manualWorkflow),
	);
	await timed('n8n import:workflow', () => importWorkflow(userFolder, stubWorkflow));
	await importWorkflow(userFolder, webhookWorkflow);
	// A second webhook workflow, published by the CLI before `n8n start` (start activates it).
	const prePublished: WorkflowJson = {
		...webhookWorkflow,
		id: 'smokeWebhook002',
		name: 'Smoke: webhook published by CLI',
		nodes: webhookWorkflow.nodes.map((n) =>
			n.name === 'Webhook'
				? {
						...n,
						webhookId: '0b3c6f0e-2d55-4a8e-8f33-0c7d1c4e5a22',
						parameters: { ...(n.parameters as object), path: 'smoke-prepublished' },
					}
				: n,
		),
	};
	await importWorkflow(userFolder, prePublished);
	await timed('n8n publish:workflow', () => publishWorkflow(userFolder, prePublished.id));
	check('imported 1 credential and 4 workflows, published one by CLI', true);

	const ex1 = await timed('n8n execute (manual → code → set)', () =>
		executeWorkflow(userFolder, manualWorkflow.id),
	);
	const setOut = nodeOutput(ex1.run, 'Set');
	check('n8n execute: built-in workflow succeeded', ex1.ok, {
		code: ex1.code,
		signal: ex1.signal,
		exitCrashed: ex1.exitCrashed,
		status: ex1.run?.status,
	});
	check(
		'n8n execute: Set output is [{sum:3,doubled:6},{sum:10,doubled:20}]',
		JSON.stringify(setOut) ===
			JSON.stringify([
				{ sum: 3, doubled: 6 },
				{ sum: 10, doubled: 20 },
			]),
		setOut,
	);

	const ex2 = await timed('n8n execute (community node + credential)', () =>
		executeWorkflow(userFolder, stubWorkflow.id),
	);
	const stubOut = nodeOutput(ex2.run, 'Stub')[0] ?? {};
	check(
		'n8n execute: community node ran',
		ex2.ok,
		ex2.ok
			? { code: ex2.code, signal: ex2.signal, exitCrashed: ex2.exitCrashed }
			: ex2.stdout.slice(-1500) + ex2.stderr.slice(-500),
	);
	const ex3 = await timed('n8n execute (legacy expression engine)', () =>
		executeWorkflow(userFolder, manualWorkflow.id, { env: { N8N_EXPRESSION_ENGINE: 'legacy' } }),
	);
	check(
		'n8n execute with N8N_EXPRESSION_ENGINE=legacy: same output, clean exit 0',
		ex3.ok &&
			ex3.code === 0 &&
			JSON.stringify(nodeOutput(ex3.run, 'Set')) === JSON.stringify(setOut),
		{ code: ex3.code, signal: ex3.signal },
	);
	check(
		'n8n execute: node saw decrypted credential and its runtime dependency',
		stubOut.baseUrl === stubCredential.data.baseUrl &&
			stubOut.clientId === 'client-123' &&
			stubOut.secretLength === 11 &&
			stubOut.mimeOfPdf === 'application/pdf',
		stubOut,
	);

	// 3. n8n start
	let server: N8nServer | undefined;
	try {
		server = await timed('n8n start → healthy + owner setup', () => startN8n(userFolder));
		const srv = server;
		timings['n8n start → healthy (process spawn to /healthz/readiness + /rest/settings)'] =
			srv.startupMs;
		check('n8n start: /healthz/readiness ok and REST up', true, {
			url: srv.url,
			startupMs: srv.startupMs,
		});
		const healthz = (await (await fetch(`${srv.url}/healthz`)).json()) as { status?: string };
		check('GET /healthz → {status:"ok"}', healthz.status === 'ok', healthz);
		check('owner setup gave an n8n-auth cookie', srv.authCookie.length > 20);
		const me = await srv.rest<{ email: string; role?: string }>('GET', '/login');
		check('GET /rest/login (current user) as owner', me.email === 'owner@e2e.test', {
			email: me.email,
			role: me.role,
		});
		await srv.login();
		check('POST /rest/login works too', srv.authCookie.length > 20);

		const typesRes = await fetch(`${srv.url}/types/nodes.json`, {
			headers: { cookie: `n8n-auth=${srv.authCookie}` },
		});
		const types = (await typesRes.json()) as Array<{ name: string }>;
		check(
			'node types served by n8n include the community node',
			types.some((t) => t.name === 'n8n-nodes-e2e-stub.e2eStub'),
			`${types.length} types`,
		);

		const wfs = await srv.rest<Array<{ id: string; name: string }>>('GET', '/workflows');
		check(
			'GET /rest/workflows lists the imported workflows',
			[manualWorkflow.id, stubWorkflow.id, webhookWorkflow.id].every((id) =>
				wfs.some((w) => w.id === id),
			),
			wfs.map((w) => w.id),
		);

		let pre: Response | undefined;
		for (let i = 0; i < 60; i++) {
			pre = await fetch(srv.webhookUrl('smoke-prepublished'), {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ ping: 'pre' }),
			});
			if (pre.status !== 404) break;
			await new Promise((r) => setTimeout(r, 500));
		}
		const preBody = pre ? ((await pre.json()) as Record<string, unknown>) : {};
		check(
			'workflow published by `n8n publish:workflow` is live after start',
			pre?.status === 200 && preBody.echo === 'pre-pong',
			{ status: pre?.status, body: preBody },
		);

		const before = await srv.rest<Record<string, unknown>>(
			'GET',
			`/workflows/${webhookWorkflow.id}`,
		);
		const activated = await timed('REST activate', () => srv.activateWorkflow(webhookWorkflow.id));
		check(
			'POST /rest/workflows/:id/activate {versionId} → publication "published"',
			activated.active === true &&
				activated.activeVersionId === before.versionId &&
				activated.publication?.status === 'published',
			{
				active: activated.active,
				activeVersionId: activated.activeVersionId,
				versionId: before.versionId,
				publication: activated.publication,
			},
		);

		const t0 = new Date(Date.now() - 1000);
		const hookRes = await timed('webhook call (lastNode response)', () =>
			fetch(srv.webhookUrl('smoke-hook'), {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ ping: 'abc' }),
			}),
		);
		const hookBody = (await hookRes.json()) as Record<string, unknown>;
		check(
			'POST /webhook/smoke-hook answered by the workflow',
			hookRes.status === 200 && hookBody.echo === 'abc-pong',
			{ status: hookRes.status, body: hookBody },
		);

		const exec = await timed('execution visible in REST', () =>
			waitForExecution(srv, { workflowId: webhookWorkflow.id }, { after: t0, timeoutMs: 20_000 }),
		);
		check(
			'GET /rest/executions shows the webhook execution',
			exec.status === 'success' && exec.mode === 'webhook',
			{ id: exec.id, status: exec.status, mode: exec.mode },
		);
		const full = await getExecution(srv, exec.id);
		const runSet = full.data?.resultData.runData.Set?.[0]?.data?.main?.[0]?.[0]?.json;
		check(
			'GET /rest/executions/:id carries the run data (flatted)',
			runSet?.echo === 'abc-pong',
			runSet,
		);
		const cliExecs = await listExecutions(srv, { workflowId: manualWorkflow.id });
		check(
			'executions of `n8n execute` are stored too (mode "cli")',
			cliExecs.some((e) => e.mode === 'cli' && e.status === 'success'),
			cliExecs.map((e) => `${e.id}:${e.mode}:${e.status}`),
		);

		const deact = await timed('REST deactivate', () => srv.deactivateWorkflow(webhookWorkflow.id));
		const after = await fetch(srv.webhookUrl('smoke-hook'), {
			method: 'POST',
			body: '{}',
			headers: { 'content-type': 'application/json' },
		});
		check(
			'deactivate → publication "not_published", webhook 404',
			deact.active === false &&
				deact.publication?.status === 'not_published' &&
				after.status === 404,
			{
				active: deact.active,
				publication: deact.publication?.status,
				status: after.status,
			},
		);

		// 4. editor
		if (!args.has('--no-editor')) {
			const ed = await timed('editor session (3 views, one browser)', () =>
				withEditor(srv, async (session) => {
					const gh = await timed('editor: GitHub node (new workflow → panel → action → NDV)', () =>
						inspectNode(session, srv, { search: 'GitHub', screenshotPrefix: 'smoke-github' }),
					);
					const stub = await timed('editor: stub community node', () =>
						inspectNode(session, srv, {
							search: 'E2E Stub Messaging',
							action: 'Send a file',
							screenshotPrefix: 'smoke-stub',
						}),
					);
					const canvas = await timed('editor: imported workflow canvas', () =>
						screenshotWorkflowIn(session, srv, stubWorkflow.id, 'smoke-imported-workflow'),
					);
					return {
						gh,
						stub,
						canvas,
						externalRequests: session.externalRequests,
						errors: session.errors,
					};
				}),
			);
			const { gh, stub, canvas } = ed;
			check(
				'editor: GitHub NDV shows Resource options',
				(gh.resourceOptions ?? []).includes('Issue') &&
					(gh.resourceOptions ?? []).includes('Repository'),
				gh.resourceOptions,
			);
			check(
				'editor: GitHub NDV shows Operation options',
				(gh.operationOptions ?? []).length > 1,
				gh.operationOptions,
			);
			check(
				'editor: GitHub action list was offered',
				gh.actions.length > 5,
				gh.actions.slice(0, 5),
			);

			check(
				'editor: community node Resource options',
				JSON.stringify(stub.resourceOptions) === JSON.stringify(['Message', 'Number']),
				stub.resourceOptions,
			);
			check(
				'editor: community node Operation options',
				JSON.stringify(stub.operationOptions) === JSON.stringify(['Send Text', 'Send File']),
				stub.operationOptions,
			);
			check(
				'editor: picking action "Send a file" selected Message / Send File',
				stub.resourceSelected === 'Message' &&
					stub.operationSelected === 'Send File' &&
					stub.nodeTitle === 'Send a file',
				{
					title: stub.nodeTitle,
					resource: stub.resourceSelected,
					operation: stub.operationSelected,
					parameters: stub.parameters,
				},
			);
			check(
				'editor: imported credential preselected in the community node',
				stub.parameters.some((p) => p.label === 'Credential'),
				stub.parameters,
			);
			check('editor: imported workflow renders its nodes', canvas.nodeCount === 2, canvas);

			const unexpected = ed.externalRequests.filter((u) => !isExpectedExternal(u));
			check(
				'editor: no unexpected requests outside n8n (npm metadata lookups are blocked)',
				unexpected.length === 0,
				{ unexpected, blockedExpected: ed.externalRequests.filter(isExpectedExternal) },
			);
			if (ed.errors.length)
				log(`browser errors (informational): ${ed.errors.slice(0, 5).join(' | ')}`);
			writeFileSync(join(ARTIFACTS_DIR, 'smoke-editor.json'), JSON.stringify(ed, null, 2));
		}

		const outbound = readFileSync(srv.logFile, 'utf8')
			.split('\n')
			.filter((l) =>
				/ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED .*:443|api(-staging)?\.n8n\.io/.test(l),
			);
		check(
			'n8n log shows no outbound calls (api.n8n.io etc.)',
			outbound.length === 0,
			outbound.slice(0, 3),
		);
	} finally {
		if (server) {
			const t = Date.now();
			await server.stop();
			copyFileSync(server.logFile, join(ARTIFACTS_DIR, 'smoke-n8n-start.log'));
			timings['n8n stop'] = Date.now() - t;
			check('n8n stopped', server.process.exitCode !== null || server.process.signalCode !== null, {
				exitCode: server.process.exitCode,
				signal: server.process.signalCode,
			});
		}
		if (!args.has('--keep')) {
			rmSync(userFolder, { recursive: true, force: true });
			rmSync(dirname(tgz), { recursive: true, force: true });
		} else log(`kept ${userFolder}`);
	}
}

main()
	.catch((e: unknown) => {
		check(
			'smoke run completed without an exception',
			false,
			e instanceof Error ? `${e.message}\n${e.stack}` : String(e),
		);
	})
	.finally(() => process.exit(report.summarise()));
