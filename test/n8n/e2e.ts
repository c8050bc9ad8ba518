/**
 * End-to-end test of the packed package inside real n8n (2.40.x), `npm run test:n8n`.
 *
 *   1. `npm run build` + `npm pack`; `npm install <tgz>` into a fresh <userFolder>/.n8n/nodes
 *      (what a user does by hand; the in-app installer does the same).
 *   2. A sandbox gateway in this process (127.0.0.1), a `messagingRateApi` credential pointing at it
 *      (id "sandbox-credential", the id the examples reference), every workflow in examples/ and
 *      test/n8n/workflows/ imported with the n8n CLI.
 *   3. `n8n execute` of every workflow with a Manual Trigger; outputs and the sandbox ledger asserted
 *      (the rates-to-chat text, the base64 file send with its sha256/size/name).
 *   4. `n8n start`: activate the Messaging Trigger workflow, check the webhook the gateway account
 *      got, have the sandbox post an incoming message, assert the execution that followed, then
 *      deactivate and check that the account's previous webhook is put back (README, "Activation
 *      and deactivation, exactly").
 *   5. Playwright + Debian's chromium: the Messaging node's panel with its Resource and Operation
 *      options; screenshots in test-artifacts/n8n/ (messaging-node-panel.png is the one to show).
 *
 * Run from the repository root:  npx ts-node --transpile-only test/n8n/e2e.ts [--no-editor] [--keep]
 * Last line: "N passed, M failed"; exit code 1 on any failure.
 */
import { createHash } from 'crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'fs';
import { join } from 'path';
import { startSandbox } from '../../sandbox/server';
import type { Sandbox } from '../../sandbox/types';
import { inspectNode, isExpectedExternal, screenshotWorkflowIn, withEditor } from './editor';
import {
	ARTIFACTS_DIR,
	NODE_TYPES,
	PACKAGE_NAME,
	REPO_ROOT,
	ensureInstall,
	executeWorkflow,
	getExecution,
	importCredential,
	importWorkflow,
	installPackageIntoN8n,
	listExecutions,
	log,
	makeUserFolder,
	messagingRateCredential,
	nodeOutput,
	packPackage,
	startN8n,
	tarballPackageJson,
	waitForExecution,
	type N8nRun,
	type N8nServer,
	type WorkflowJson,
} from './lib';

const args = new Set(process.argv.slice(2));
const checks: Array<{ check: string; ok: boolean; detail?: string }> = [];
const timings: Record<string, number> = {};

/** The credential id and name every example and e2e workflow references. */
const CREDENTIAL_ID = 'sandbox-credential';
const CREDENTIAL_NAME = 'Sandbox';
/** Gateway account number used by the examples and the trigger workflow. */
const ACCOUNT_NUMBER = '6281288776713';
/** Webhook the sandbox account has before the trigger is activated (must be put back on deactivation). */
const PREVIOUS_WEBHOOK = 'http://127.0.0.1:9/previous-webhook';

const EXAMPLES_DIR = join(REPO_ROOT, 'examples');
const E2E_WORKFLOWS_DIR = join(__dirname, 'workflows');

function check(name: string, ok: boolean, detail?: unknown): boolean {
	const d = detail === undefined ? undefined : typeof detail === 'string' ? detail : JSON.stringify(detail);
	checks.push({ check: name, ok, detail: d });
	log(`${ok ? 'PASS' : 'FAIL'} ${name}${d && (!ok || d.length < 400) ? ` — ${d.slice(0, ok ? 400 : 2000)}` : ''}`);
	return ok;
}

async function timed<T>(name: string, fn: () => Promise<T>): Promise<T> {
	const t = Date.now();
	try {
		return await fn();
	} finally {
		timings[name] = Date.now() - t;
		log(`${name}: ${timings[name]} ms`);
	}
}

/** Runs `fn`; an exception becomes one failed check instead of ending the run. */
async function section(name: string, fn: () => Promise<void>): Promise<void> {
	try {
		await fn();
	} catch (e) {
		check(`${name}: completed without an exception`, false, e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e));
	}
}

function readWorkflows(dir: string): Array<{ file: string; wf: WorkflowJson }> {
	if (!existsSync(dir)) return [];
	return readdirSync(dir)
		.filter((f) => f.endsWith('.json'))
		.sort()
		.map((f) => ({ file: join(dir, f), wf: JSON.parse(readFileSync(join(dir, f), 'utf8')) as WorkflowJson }));
}

function nodesOf(wf: WorkflowJson): Array<{ name: string; type: string; parameters?: Record<string, unknown>; webhookId?: string }> {
	return wf.nodes as Array<{ name: string; type: string; parameters?: Record<string, unknown>; webhookId?: string }>;
}

function runError(run: N8nRun | undefined): string | undefined {
	const err = run?.data?.resultData?.error;
	return err ? `${err.node?.name ?? ''}: ${err.message ?? ''} ${err.description ?? ''}`.trim() : undefined;
}

/** The text the "Send to Chat" node of daily-rates-to-chat.json builds from the rate table (its expression, in plain TS). */
function expectedRatesText(t: { provider: string; fetchedAt: string; baseCurrency: string; currencies: string[]; rates: Record<string, { buy: number; sell: number }> }): string {
	return (
		`${t.provider.toUpperCase()} exchange rates, ${t.fetchedAt.slice(0, 10)} (${t.baseCurrency} per unit, buy / sell):\n` +
		t.currencies.map((code) => `${code}: ${t.rates[code].buy.toFixed(2)} / ${t.rates[code].sell.toFixed(2)}`).join('\n')
	);
}

/** Decodes the fileContent of a base64 Send File node (data URI or bare base64). */
function decodeFileContent(content: string): Buffer {
	const m = /^data:[^;,]*(?:;[^,]*)?,(.*)$/s.exec(content);
	return Buffer.from((m ? m[1] : content).replace(/\s+/g, ''), 'base64');
}

async function main(): Promise<void> {
	mkdirSync(ARTIFACTS_DIR, { recursive: true });
	const started = Date.now();

	const inst = await timed('install (ensureInstall: cached n8n + Node 24 + playwright-core)', async () => ensureInstall());
	check('install: Node 24, n8n, playwright-core and chromium present', [inst.node, inst.n8nBin, inst.chromium].every((p) => existsSync(p)), inst);

	// 1. package
	const tgz = await timed('npm run build + npm pack', () => packPackage());
	const packed = tarballPackageJson(tgz) as { name: string; version: string; n8n?: { nodes?: string[]; credentials?: string[] } };
	check('npm pack: tarball carries the n8n block (3 nodes, 1 credential)', packed.name === PACKAGE_NAME && packed.n8n?.nodes?.length === 3 && packed.n8n?.credentials?.length === 1, {
		tgz,
		name: packed.name,
		version: packed.version,
	});

	const userFolder = makeUserFolder('n8n-e2e-main-');
	log(`user folder ${userFolder}`);
	let sandbox: Sandbox | undefined;
	let server: N8nServer | undefined;
	try {
		const installed = await timed('npm install <tgz> into .n8n/nodes', () => installPackageIntoN8n(userFolder, tgz));
		const runtimeDeps = ['undici', 'libphonenumber-js', 'mime-types', 'qrcode'].filter((d) => !existsSync(join(userFolder, '.n8n', 'nodes', 'node_modules', d, 'package.json')));
		check('package installed into <userFolder>/.n8n/nodes with its runtime dependencies', runtimeDeps.length === 0, { installed, missing: runtimeDeps });

		// 2. sandbox + credential + workflows
		sandbox = await startSandbox({
			host: '127.0.0.1',
			accounts: [{ clientId: 'demo-client', clientSecret: 'demo-secret', status: 'authenticated', whatsappNumber: ACCOUNT_NUMBER, whatsappWebhook: PREVIOUS_WEBHOOK }],
		});
		const sb = sandbox;
		log(`sandbox ${sb.url}`);
		await timed('n8n import:credentials', () =>
			importCredential(userFolder, messagingRateCredential({ id: CREDENTIAL_ID, name: CREDENTIAL_NAME, baseUrl: sb.url, clientId: 'demo-client', clientSecret: 'demo-secret' })),
		);

		const examples = readWorkflows(EXAMPLES_DIR);
		const e2eWorkflows = readWorkflows(E2E_WORKFLOWS_DIR);
		check('examples/ holds at least one workflow', examples.length > 0, examples.map((e) => e.file));
		const all = [...examples, ...e2eWorkflows];
		await timed(`n8n import:workflow x${all.length}`, async () => {
			for (const { file, wf } of all) {
				const id = await importWorkflow(userFolder, file);
				check(`import:workflow ${file.slice(REPO_ROOT.length + 1)} (id ${id})`, id === wf.id);
			}
		});

		// 3. n8n execute every runnable workflow (one with a Manual Trigger)
		const runs: Record<string, N8nRun | undefined> = {};
		for (const { file, wf } of all) {
			if (!nodesOf(wf).some((n) => n.type === 'n8n-nodes-base.manualTrigger')) continue;
			const rel = file.slice(REPO_ROOT.length + 1);
			const ledgerBefore = sb.ledger().length;
			const ex = await timed(`n8n execute ${rel}`, () => executeWorkflow(userFolder, wf.id));
			runs[wf.id] = ex.run;
			check(`n8n execute ${rel}: status success`, ex.ok, ex.ok ? { ms: ex.ms } : { code: ex.code, status: ex.run?.status, error: runError(ex.run), stdout: ex.stdout.slice(-1500), stderr: ex.stderr.slice(-800) });
			const ours = nodesOf(wf).filter((n) => n.type.startsWith(`${PACKAGE_NAME}.`));
			for (const n of ours) {
				const out = nodeOutput(ex.run, n.name);
				check(`n8n execute ${rel}: node "${n.name}" produced items without errors`, out.length > 0 && out.every((i) => i.error === undefined), out.slice(0, 2));
			}
			check(`n8n execute ${rel}: the sandbox recorded its sends`, sb.ledger().length > ledgerBefore || !ours.some((n) => n.parameters?.resource === 'message'), {
				newEntries: sb.ledger().length - ledgerBefore,
			});
		}

		// 3a. the rates-to-chat example
		await section('rates-to-chat example', async () => {
			const run = runs.DailyRatesToChat;
			if (!check('examples/daily-rates-to-chat.json was run', !!run)) return;
			const table = nodeOutput(run, 'Get Rates');
			const t = table[0] as { provider: string; fetchedAt: string; baseCurrency: string; currencies: string[]; rates: Record<string, { buy: number; sell: number }> };
			check(
				'Get Rates: one item, BCA, USD/EUR/SGD with numeric buy/sell in IDR',
				table.length === 1 &&
					t.provider === 'bca' &&
					t.baseCurrency === 'IDR' &&
					JSON.stringify(t.currencies) === JSON.stringify(['USD', 'EUR', 'SGD']) &&
					t.currencies.every((c) => typeof t.rates[c]?.buy === 'number' && typeof t.rates[c]?.sell === 'number' && t.rates[c].buy > 0),
				table[0],
			);
			const sent = nodeOutput(run, 'Send to Chat');
			check('Send to Chat: sent:true to 6281288776713 with a message id', sent.length === 1 && sent[0].sent === true && sent[0].phone === ACCOUNT_NUMBER && typeof sent[0].id === 'string', sent[0]);
			const entry = sb.ledger().find((e) => e.kind === 'text' && e.id === sent[0]?.id);
			const want = t ? expectedRatesText(t) : '';
			check('sandbox ledger: the rates text message, exactly as the workflow builds it', !!entry && entry.phone === ACCOUNT_NUMBER && entry.text === want, { ledger: entry, expected: want });
			check('the text lists USD, EUR and SGD lines', /\nUSD: [\d.]+ \/ [\d.]+\nEUR: [\d.]+ \/ [\d.]+\nSGD: [\d.]+ \/ [\d.]+$/.test(entry?.text ?? ''), entry?.text);
		});

		// 3b. the base64 Send File workflow
		await section('send-file workflow', async () => {
			const wf = e2eWorkflows.find((w) => w.wf.id === 'E2eSendFileBase64')?.wf;
			const run = runs.E2eSendFileBase64;
			if (!check('test/n8n/workflows/send-file-base64.json was run', !!wf && !!run)) return;
			const params = nodesOf(wf!).find((n) => n.name === 'Send Invoice')!.parameters!;
			const bytes = decodeFileContent(String(params.fileContent));
			const sha256 = createHash('sha256').update(bytes).digest('hex');
			const out = nodeOutput(run, 'Send Invoice');
			check(
				'Send Invoice output: sent:true, normalised phone, fileName/mimeType/fileSize',
				out.length === 1 && out[0].sent === true && out[0].phone === ACCOUNT_NUMBER && out[0].fileName === 'invoice-2026-0042.txt' && out[0].mimeType === 'text/plain' && out[0].fileSize === bytes.length,
				out[0],
			);
			const entry = sb.ledger().find((e) => e.kind === 'file' && e.id === out[0]?.id);
			check(
				'sandbox ledger: the file arrived byte for byte (sha256, size, filename, mime type, caption)',
				!!entry &&
					entry.phone === ACCOUNT_NUMBER &&
					entry.file?.sha256 === sha256 &&
					entry.file?.size === bytes.length &&
					entry.file?.filename === 'invoice-2026-0042.txt' &&
					entry.file?.mimeType === 'text/plain' &&
					entry.caption === 'Your invoice 2026-0042',
				{ ledger: entry, expected: { sha256, size: bytes.length } },
			);
		});

		// 4. n8n start: the Messaging Trigger
		server = await timed('n8n start → healthy + owner setup', () => startN8n(userFolder));
		const srv = server;
		check('n8n start: healthy, owner logged in', srv.authCookie.length > 20, { url: srv.url, startupMs: srv.startupMs });
		await section('n8n start: package loaded', async () => {
			const typesRes = await fetch(`${srv.url}/types/nodes.json`, { headers: { cookie: `n8n-auth=${srv.authCookie}` } });
			const types = (await typesRes.json()) as Array<{ name: string }>;
			const missing = Object.values(NODE_TYPES).filter((t) => !types.some((x) => x.name === t));
			check('node types served by n8n include Messaging, Currency Rate and Messaging Trigger', missing.length === 0, { missing, total: types.length });
			const wfs = await srv.rest<Array<{ id: string }>>('GET', '/workflows');
			check('GET /rest/workflows lists every imported workflow', all.every(({ wf }) => wfs.some((w) => w.id === wf.id)), wfs.map((w) => w.id));
		});

		await section('Messaging Trigger', async () => {
			const entry = e2eWorkflows.find((w) => nodesOf(w.wf).some((n) => n.type === NODE_TYPES.messagingTrigger));
			if (!check('test/n8n/workflows/ holds a Messaging Trigger workflow', !!entry)) return;
			const wf = entry!.wf;
			const trig = nodesOf(wf).find((n) => n.type === NODE_TYPES.messagingTrigger)!;
			const secret = String(trig.parameters?.sharedSecret);
			const queryName = String(trig.parameters?.queryParameterName ?? 'token');
			const prodUrl = srv.webhookUrl(`${trig.webhookId}/webhook`);
			const registered = `${prodUrl}?${queryName}=${secret}`;
			const account = () => sb.accounts().find((a) => a.clientId === 'demo-client')!;
			check('before activation the account has its previous webhook', account().whatsappWebhook === PREVIOUS_WEBHOOK, account());

			const act = await timed('activate Messaging Trigger workflow', () => srv.activateWorkflow(wf.id));
			check('activate: publication "published"', act.publication?.status === 'published' || (act.publication === undefined && act.active === true), act.publication);
			check('activation registered n8n\'s production URL (with the query secret) on the account', account().whatsappWebhook === registered && account().whatsappNumber === ACCOUNT_NUMBER, {
				account: account(),
				expected: registered,
			});
			const updates = sb.requests().filter((r) => r.params?.method === 'update');
			check('activation called Update Account once', updates.length === 1, updates.map((u) => u.params));

			// A request without the secret is refused and starts nothing.
			const noSecret = await fetch(prodUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ params: { message: 'x', sender: '6281300000002' } }) });
			check('a post without the query secret is answered 401', noSecret.status === 401, { status: noSecret.status, body: await noSecret.text() });

			const t0 = new Date(Date.now() - 1000);
			const delivered = await timed('sandbox deliverIncoming → n8n', () =>
				sb.deliverIncoming({ type: 'text', message: 'Halo, what is the USD rate today?', sender: '6281300000002@c.us', senderName: 'Budi' }),
			);
			let body: Record<string, unknown> = {};
			try {
				body = JSON.parse(delivered.body) as Record<string, unknown>;
			} catch {
				/* asserted below */
			}
			check('the gateway\'s post went to the registered URL and was answered 200', delivered.url === registered && delivered.status === 200, { url: delivered.url, status: delivered.status });
			check('the answer body is the trigger\'s {"received": true, "messageId": ...} (README "What the gateway is answered")', body.received === true && 'messageId' in body, { body: delivered.body });

			const exec = await timed('execution visible in REST', () => waitForExecution(srv, { workflowId: wf.id }, { after: t0, timeoutMs: 30_000 }));
			check('GET /rest/executions: one successful webhook execution', exec.status === 'success' && exec.mode === 'webhook', { id: exec.id, status: exec.status, mode: exec.mode });
			const all = await listExecutions(srv, { workflowId: wf.id });
			check('exactly one execution (the 401 post started nothing)', all.length === 1, all.map((e) => `${e.id}:${e.status}`));
			const full = await getExecution(srv, exec.id);
			const item = full.data?.resultData.runData[trig.name]?.[0]?.data?.main?.[0]?.[0]?.json ?? {};
			check(
				'trigger item: sender (digits only), senderName, recipient, type text, the text, receivedAt',
				item.sender === '6281300000002' && item.senderName === 'Budi' && item.type === 'text' && item.text === 'Halo, what is the USD rate today?' && typeof item.receivedAt === 'string',
				item,
			);
			const payload = (item.payload ?? {}) as Record<string, unknown>;
			check('trigger item: payload kept, without x-api-key', typeof payload === 'object' && !('x-api-key' in payload) && Object.keys(payload).length > 0, payload);
			const sum = full.data?.resultData.runData.Summarise?.[0]?.data?.main?.[0]?.[0]?.json ?? {};
			check('the next node saw the message', sum.summary === '6281300000002 says: Halo, what is the USD rate today?', sum);

			const deact = await timed('deactivate Messaging Trigger workflow', () => srv.deactivateWorkflow(wf.id));
			check('deactivate: workflow inactive, publication "not_published"', deact.active === false && (deact.publication?.status ?? 'not_published') === 'not_published', {
				active: deact.active,
				publication: deact.publication?.status,
			});
			check('deactivation put back the webhook the account had before activation (README: restored when Check Account showed it)', account().whatsappWebhook === PREVIOUS_WEBHOOK, account());
			const after = await fetch(registered, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ params: { message: 'late', sender: '6281300000002' } }) });
			check('after deactivation n8n answers the old URL with 404', after.status === 404, { status: after.status });
		});

		// 5. editor
		if (!args.has('--no-editor')) {
			await section('editor', async () => {
				const ed = await timed('editor session', () =>
					withEditor(srv, async (session) => {
						const messaging = await timed('editor: Messaging node panel', () =>
							inspectNode(session, srv, { search: 'Messaging', itemName: 'Messaging', action: 'Send a file', screenshotPrefix: 'messaging-node' }),
						);
						const example = await timed('editor: rates-to-chat example canvas', () => screenshotWorkflowIn(session, srv, 'DailyRatesToChat', 'example-daily-rates-to-chat'));
						return { messaging, example, externalRequests: session.externalRequests, errors: session.errors };
					}),
				);
				const m = ed.messaging;
				// After a Manual Trigger the panel lists regular nodes only, so the search shows Messaging (not the trigger).
				check('editor: node search for "Messaging" finds the Messaging node', m.searchResults.includes('Messaging'), m.searchResults);
				check('editor: Messaging offers its actions (Send a text message, Send a file, ...)', m.actions.includes('Send a text message') && m.actions.includes('Send a file'), m.actions);
				check(
					'editor: Resource options render: Message, Number, Account, Session, Auth',
					JSON.stringify(m.resourceOptions) === JSON.stringify(['Message', 'Number', 'Account', 'Session', 'Auth']),
					m.resourceOptions,
				);
				check('editor: Operation options render for Message: Send Text, Send File', JSON.stringify(m.operationOptions) === JSON.stringify(['Send Text', 'Send File']), m.operationOptions);
				check('editor: action "Send a file" selected Message / Send File', m.resourceSelected === 'Message' && m.operationSelected === 'Send File', {
					title: m.nodeTitle,
					resource: m.resourceSelected,
					operation: m.operationSelected,
				});
				const labels = m.parameters.map((p) => p.label);
				check('editor: Send File parameters render (Credential, Phone Number, File Source, Caption)', ['Phone Number', 'File Source', 'Caption'].every((l) => labels.includes(l)) && labels.some((l) => /credential/i.test(l)), labels);
				const best = m.screenshots.find((p) => p.endsWith('-2-resource.png')) ?? m.screenshots[0];
				if (best) copyFileSync(best, join(ARTIFACTS_DIR, 'messaging-node-panel.png'));
				check('editor: screenshot test-artifacts/n8n/messaging-node-panel.png saved', existsSync(join(ARTIFACTS_DIR, 'messaging-node-panel.png')), m.screenshots);
				check('editor: the rates-to-chat example renders its 4 nodes', ed.example.nodeCount === 4, ed.example);
				const unexpected = ed.externalRequests.filter((u) => !isExpectedExternal(u));
				check('editor: no unexpected requests outside n8n', unexpected.length === 0, unexpected);
				if (ed.errors.length) log(`browser errors (informational): ${ed.errors.slice(0, 5).join(' | ')}`);
				writeFileSync(join(ARTIFACTS_DIR, 'e2e-editor.json'), JSON.stringify(ed, null, 2));
			});
		}
		timings['total'] = Date.now() - started;
	} finally {
		if (server) {
			await server.stop();
			copyFileSync(server.logFile, join(ARTIFACTS_DIR, 'e2e-n8n-start.log'));
		}
		if (sandbox) await sandbox.close();
		if (!args.has('--keep')) rmSync(userFolder, { recursive: true, force: true });
		else log(`kept ${userFolder}`);
	}
}

main()
	.catch((e: unknown) => {
		check('e2e run completed without an exception', false, e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e));
	})
	.finally(() => {
		const failed = checks.filter((c) => !c.ok);
		mkdirSync(ARTIFACTS_DIR, { recursive: true });
		writeFileSync(join(ARTIFACTS_DIR, 'e2e-summary.json'), JSON.stringify({ passed: checks.length - failed.length, failed: failed.length, timingsMs: timings, checks }, null, 2));
		for (const c of checks) console.log(`${c.ok ? 'PASS' : 'FAIL'}  ${c.check}`);
		console.log(`timings (ms): ${JSON.stringify(timings)}`);
		console.log(`${checks.length - failed.length} passed, ${failed.length} failed`);
		process.exit(failed.length ? 1 : 0);
	});
