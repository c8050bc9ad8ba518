/**
 * `npm run bench:n8n`: mapped fields in real n8n (2.40.7 on Node 24, the cached install of
 * scripts/n8n-install.sh, its default `vm` expression engine), one `n8n execute` process, one
 * execution, one workflow whose branches run one after the other against a sandbox:
 *
 *   1. HTTP Request v4.2, the token typed in by hand, body
 *      `={{ JSON.stringify({ params: { ..., phone: $json.phone, body: $json.text } }) }}`: what users
 *      build without this package (the baseline of every ratio);
 *   2. Messaging → Send Text, Phone `={{ $json.phone }}`, Text `={{ $json.text }}`, parallel 1 and 8;
 *   3. the same with `={{ ($json.phone) }}` / `={{ ($json.text) }}`: the same values, but not a plain
 *      path, so n8n evaluates them per item (the expression toll every mapping paid before);
 *   4. Currency Rate → Convert, 10,000 items, Amount/From/To `={{ $json.amount }}`… and the same with
 *      n8n-evaluated `={{ ($json.amount) }}`….
 *
 * Prints ms per item (each node's executionTime as n8n records it / its items) and the ratios, and
 * checks the work: every send in the sandbox's ledger with the item's phone and text in input order,
 * both Convert variants giving the same results, and the requests the Convert runs made.
 *
 * Run: npm run bench:n8n [-- --sends 1000 --converts 10000]
 */
import { randomBytes } from 'crypto';
import { rmSync } from 'fs';
import { request } from 'undici';

import { startSandbox } from '../sandbox/server';
import {
	CREDENTIAL_TYPE,
	NODE_TYPES,
	ensureInstall,
	executeWorkflow,
	importCredential,
	importWorkflow,
	installPackageIntoN8n,
	log,
	makeUserFolder,
	messagingRateCredential,
	packPackage,
	type WorkflowJson,
} from '../test/n8n/lib';

const args = process.argv.slice(2);
const argNumber = (name: string, fallback: number) => {
	const at = args.indexOf(`--${name}`);
	return at >= 0 ? Number(args[at + 1]) : fallback;
};
const SENDS = argNumber('sends', 1000);
const CONVERTS = argNumber('converts', 10_000);
const SECRET = 'demo-secret';
const VERSION = '16.0.1.3';
const CREDENTIAL = { id: 'benchMappedCred01', name: 'Sandbox (bench)' };

/** The branches, in the order n8n runs them (top to bottom). */
interface Branch {
	/** The measured node's name. */
	node: string;
	label: string;
	items: number;
	kind: 'send' | 'convert';
}

const branches: Branch[] = [
	{ node: 'HTTP Request', label: 'HTTP Request v4.2, token by hand, JSON.stringify body', items: SENDS, kind: 'send' },
	{ node: 'Send Text P1', label: 'Send Text, {{ $json.phone }} / {{ $json.text }}, parallel 1', items: SENDS, kind: 'send' },
	{ node: 'Send Text P8', label: 'Send Text, same mappings, parallel 8', items: SENDS, kind: 'send' },
	{ node: 'Send Text P1 (n8n)', label: 'Send Text, {{ ($json.phone) }} evaluated by n8n, parallel 1', items: SENDS, kind: 'send' },
	{ node: 'Send Text P8 (n8n)', label: 'Send Text, evaluated by n8n, parallel 8', items: SENDS, kind: 'send' },
	{ node: 'Convert', label: `Convert ${CONVERTS.toLocaleString('en')} items, {{ $json.amount }} / from / to`, items: CONVERTS, kind: 'convert' },
	{ node: 'Convert (n8n)', label: 'Convert, {{ ($json.amount) }}… evaluated by n8n', items: CONVERTS, kind: 'convert' },
];

function sendItemsCode(count: number): string {
	return `return Array.from({ length: ${count} }, (_, i) => ({ json: { phone: '62812' + String(10000000 + i), text: 'Order ' + i + ' is ready for pick-up' } }));`;
}

function convertItemsCode(count: number): string {
	return `const codes = ['USD', 'eur', 'SGD', 'jpy', 'IDR', 'GBP', 'aud'];
return Array.from({ length: ${count} }, (_, i) => ({ json: { invoice: 'INV-' + i, amount: Math.round((i * 7.31 + 1) * 100) / 100, from: codes[i % codes.length], to: codes[(i * 3 + 1) % codes.length] } }));`;
}

function buildWorkflow(sandboxUrl: string, token: string): WorkflowJson {
	const nodes: Array<Record<string, unknown>> = [
		{ id: 'trigger', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
	];
	const connections: Record<string, unknown> = { Start: { main: [[] as unknown[]] } };
	const credentials = { [CREDENTIAL_TYPE]: CREDENTIAL };
	branches.forEach((branch, index) => {
		const y = index * 200;
		const source = `Items ${index + 1}`;
		nodes.push({
			id: `items-${index}`,
			name: source,
			type: 'n8n-nodes-base.code',
			typeVersion: 2,
			position: [250, y],
			parameters: { jsCode: branch.kind === 'send' ? sendItemsCode(branch.items) : convertItemsCode(branch.items) },
		});
		(connections.Start as { main: unknown[][] }).main[0].push({ node: source, type: 'main', index: 0 });
		connections[source] = { main: [[{ node: branch.node, type: 'main', index: 0 }]] };
		const position = [500, y];
		const byN8n = branch.node.endsWith('(n8n)');
		const map = (field: string) => (byN8n ? `={{ ($json.${field}) }}` : `={{ $json.${field} }}`);
		if (branch.node === 'HTTP Request') {
			nodes.push({
				id: 'http',
				name: branch.node,
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position,
				parameters: {
					method: 'POST',
					url: `${sandboxUrl}/api/wa/2.0/post`,
					sendHeaders: true,
					headerParameters: { parameters: [{ name: 'Authorization', value: `Bearer ${token}` }] },
					sendBody: true,
					specifyBody: 'json',
					jsonBody: `={{ JSON.stringify({ params: { method: 'sendMessage', client_secret: '${SECRET}', version: '${VERSION}', phone: $json.phone, body: $json.text } }) }}`,
					options: {},
				},
			});
		} else if (branch.kind === 'send') {
			nodes.push({
				id: `send-${index}`,
				name: branch.node,
				type: NODE_TYPES.messaging,
				typeVersion: 1,
				position,
				credentials,
				parameters: {
					resource: 'message',
					operation: 'sendText',
					phone: map('phone'),
					text: map('text'),
					options: branch.node.includes('P8') ? { parallel: 8 } : {},
				},
			});
		} else {
			nodes.push({
				id: `convert-${index}`,
				name: branch.node,
				type: NODE_TYPES.currencyRate,
				typeVersion: 1,
				position,
				credentials,
				parameters: {
					resource: 'rate',
					operation: 'convert',
					provider: 'bca',
					amount: map('amount'),
					fromCurrency: map('from'),
					toCurrency: map('to'),
					rateType: 'average',
					decimalPlaces: 2,
				},
			});
		}
	});
	return { id: `benchMapped${randomBytes(3).toString('hex')}`, name: 'bench: mapped fields', nodes, connections, settings: { executionOrder: 'v1' } };
}

async function main(): Promise<void> {
	const install = ensureInstall();
	log(`n8n install: ${install.dir}`);
	const tgz = await packPackage();
	const userFolder = makeUserFolder('n8n-bench-');
	const sandbox = await startSandbox();
	try {
		await installPackageIntoN8n(userFolder, tgz);
		await importCredential(userFolder, messagingRateCredential({ ...CREDENTIAL, baseUrl: sandbox.url, clientId: 'demo-client', clientSecret: SECRET }));
		sandbox.reset();
		// "By hand": the user fetched a token once and pasted it into the HTTP Request's header.
		const tokenAnswer = await request(`${sandbox.url}/api/wa/authentication`, {
			method: 'GET',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ params: { client_id: 'demo-client', client_secret: SECRET } }),
		});
		const token = ((await tokenAnswer.body.json()) as { result: { token: string } }).result.token;
		const workflow = buildWorkflow(sandbox.url, token);
		const id = await importWorkflow(userFolder, workflow);
		log(`n8n execute: ${SENDS} items through each of 5 send branches, ${CONVERTS} through each of 2 Convert branches`);
		const started = Date.now();
		const result = await executeWorkflow(userFolder, id, { timeoutMs: 900_000 });
		const wallMs = Date.now() - started;
		if (!result.ok || !result.run) {
			throw new Error(`n8n execute failed (exit ${result.code ?? result.signal}):\n${result.stderr.slice(-3000)}\n${result.stdout.slice(-3000)}`);
		}
		const runData = result.run.data.resultData.runData as unknown as Record<string, Array<{ executionTime: number; data?: { main?: Array<Array<{ json: Record<string, unknown> }>> } }>>;

		// The work is checked before anything is printed as a result.
		const problems: string[] = [];
		const ledger = sandbox.ledger();
		const sendBranches = branches.filter((b) => b.kind === 'send');
		// The hand-made token request before the run is not the nodes' doing.
		if (ledger.length !== SENDS * sendBranches.length) problems.push(`ledger holds ${ledger.length} sends, expected ${SENDS * sendBranches.length}`);
		sendBranches.forEach((branch, b) => {
			const block = ledger.slice(b * SENDS, (b + 1) * SENDS);
			const wrong = block.filter((entry, i) => entry.phone !== `62812${10000000 + i}` || entry.text !== `Order ${i} is ready for pick-up`).length;
			// Parallel 8 may deliver out of order; the set must still be exact.
			const exact = branch.node.includes('P8') ? new Set(block.map((e) => `${e.phone}|${e.text}`)).size === SENDS : wrong === 0;
			if (!exact) problems.push(`${branch.node}: the sends do not match the items`);
		});
		const converted = (name: string) => runData[name]?.[0]?.data?.main?.[0] ?? [];
		const fast = converted('Convert');
		const byN8n = converted('Convert (n8n)');
		if (fast.length !== CONVERTS || byN8n.length !== CONVERTS) problems.push(`Convert outputs ${fast.length} and ${byN8n.length} items, expected ${CONVERTS}`);
		const differing = fast.filter((item, i) => JSON.stringify({ ...item.json, fetchedAt: 0 }) !== JSON.stringify({ ...byN8n[i]?.json, fetchedAt: 0 })).length;
		if (differing > 0) problems.push(`${differing} Convert items differ between the direct read and n8n's evaluation`);
		const stats = sandbox.stats();
		const rateRequests = stats.tokensIssued.rate + (stats.requestsByPath['/api/rate/1.0/get'] ?? 0);

		const perItem = (branch: Branch) => runData[branch.node][0].executionTime / branch.items;
		const http = perItem(branches[0]);
		console.log(`\nbench:n8n — real n8n 2.40.7 (Node 24, default expression engine), one \`n8n execute\`, sandbox at ${sandbox.url}`);
		console.log(`ms per item = the node's executionTime as n8n records it / its items; ratio = HTTP Request's ms per item / this one's\n`);
		console.log('| Workflow | Items | ms per item | vs HTTP Request |');
		console.log('|---|---|---|---|');
		for (const branch of branches) {
			const ms = perItem(branch);
			const ratio = branch.kind === 'send' ? `${(http / ms).toFixed(1)}x` : '';
			console.log(`| ${branch.label} | ${branch.items.toLocaleString('en')} | ${ms.toFixed(3)} | ${ratio} |`);
		}
		const fastRate = 1000 / perItem(branches[5]);
		const n8nRate = 1000 / perItem(branches[6]);
		console.log('');
		console.log(`Send Text mapped vs HTTP Request: parallel 1 ${(http / perItem(branches[1])).toFixed(1)}x (goal >= 3), parallel 8 ${(http / perItem(branches[2])).toFixed(1)}x (goal >= 6)`);
		console.log(`Send Text direct read vs n8n-evaluated mappings: parallel 1 ${(perItem(branches[3]) / perItem(branches[1])).toFixed(1)}x, parallel 8 ${(perItem(branches[4]) / perItem(branches[2])).toFixed(1)}x`);
		console.log(
			`Convert mapped: ${Math.round(fastRate).toLocaleString('en')} items/s vs ${Math.round(n8nRate).toLocaleString('en')} items/s evaluated by n8n: ${(fastRate / n8nRate).toFixed(1)}x (goal >= 20); identical outputs: ${differing === 0 ? 'yes' : 'NO'}`,
		);
		console.log(`Convert requests: ${stats.tokensIssued.rate} rates token + ${stats.requestsByPath['/api/rate/1.0/get'] ?? 0} rates requests for the two Convert runs (${rateRequests} in all: the first run 2, the second reuses the token)`);
		console.log(`Sends checked against the sandbox's ledger: ${ledger.length}; workflow wall time ${(wallMs / 1000).toFixed(0)} s including n8n's start\n`);
		if (problems.length) {
			console.error(problems.join('\n'));
			process.exitCode = 1;
		}
	} finally {
		await sandbox.close();
		if (!args.includes('--keep')) rmSync(userFolder, { recursive: true, force: true });
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
