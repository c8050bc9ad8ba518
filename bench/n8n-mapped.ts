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
 *   4. Send Text with phone and text typed in (the node's own cost, for reference);
 *   5. Send Text with Skip Repeats Within on (8 h, the default: n8n's processed-items store),
 *      mapped, parallel 1 and 8; the branches above set Skip Repeats Within off (0);
 *   6. Currency Rate → Convert, 10,000 items, Amount/From/To `={{ $json.amount }}`… and the same with
 *      n8n-evaluated `={{ ($json.amount) }}`….
 * The send branches run in 5 interleaved rounds, each in an order rotated by one (a busy moment of
 * a shared machine then hits every kind alike) and the median is used; a 1-second Wait before each
 * measured node keeps the previous branch's leftover work out of its time.
 *
 * The limit: a bare undici loop (bench/bare-undici-loop.ts) sending the same requests, in a separate
 * process on n8n's Node, against the same sandbox, at parallel 1 and 8, before and after the n8n
 * run (median of its rounds); Send Text's ms per item is printed as a multiple of it next to the
 * goals of issue 26 (mapped: <= 1.3x at parallel 1, <= 1.5x at parallel 8). Pacing is off in every
 * send branch (test/harness/sendOptions.ts).
 *
 * Prints ms per item (each node's executionTime as n8n records it / its items) and the ratios, and
 * checks the work: every send in the sandbox's ledger with the item's phone and text (in input
 * order at parallel 1), both Convert variants giving the same results, and the requests the Convert
 * runs made.
 *
 * Run: npm run bench:n8n [-- --sends 1000 --converts 10000 --rounds 5 --keep]
 */
import { randomBytes } from 'crypto';
import { spawn } from 'child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { request } from 'undici';

import { startSandbox } from '../sandbox/server';
import { pacingNote, sendOptions } from '../test/harness/sendOptions';
import {
	CREDENTIAL_TYPE,
	NODE_TYPES,
	ensureInstall,
	extractJsonObject,
	freePort,
	importCredential,
	installFor,
	importWorkflow,
	installPackageIntoN8n,
	log,
	makeUserFolder,
	messagingRateCredential,
	n8nEnv,
	packPackage,
	type N8nRun,
	type WorkflowJson,
} from '../test/n8n/lib';

const args = process.argv.slice(2);
const argNumber = (name: string, fallback: number) => {
	const at = args.indexOf(`--${name}`);
	return at >= 0 ? Number(args[at + 1]) : fallback;
};
const SENDS = argNumber('sends', 1000);
const CONVERTS = argNumber('converts', 10_000);
const ROUNDS = argNumber('rounds', 5);
const SECRET = 'demo-secret';
const VERSION = '16.0.1.3';
const CREDENTIAL = { id: 'benchMappedCred01', name: 'Sandbox (bench)' };

/** What a branch measures: the node and how its fields are given. */
interface Kind {
	key:
		| 'http'
		| 'p1'
		| 'p8'
		| 'p1n8n'
		| 'p8n8n'
		| 'p1typed'
		| 'p1skip'
		| 'p8skip'
		| 'convert'
		| 'convertN8n';
	label: string;
	items: number;
	op: 'http' | 'send' | 'convert';
	/** `mapped`: plain `{{ $json.x }}`; `n8n`: `{{ ($json.x) }}`, the same values evaluated by n8n; `typed`: fixed values. */
	fields: 'mapped' | 'n8n' | 'typed';
	parallel?: number;
	/** Skip Repeats Within on (8 h, the default); the other send branches set it to 0. */
	skipRepeats?: boolean;
}

const KINDS: Kind[] = [
	{
		key: 'http',
		label: 'HTTP Request v4.2, token by hand, `JSON.stringify` body',
		items: SENDS,
		op: 'http',
		fields: 'n8n',
	},
	{
		key: 'p1',
		label: 'Send Text, `{{ $json.phone }}` / `{{ $json.text }}`, Skip Repeats Within 0, parallel 1',
		items: SENDS,
		op: 'send',
		fields: 'mapped',
		parallel: 1,
	},
	{
		key: 'p8',
		label: 'Send Text, same mappings, Parallel Requests 8',
		items: SENDS,
		op: 'send',
		fields: 'mapped',
		parallel: 8,
	},
	{
		key: 'p1n8n',
		label: 'Send Text, `{{ ($json.phone) }}`… (evaluated by n8n), parallel 1',
		items: SENDS,
		op: 'send',
		fields: 'n8n',
		parallel: 1,
	},
	{
		key: 'p8n8n',
		label: 'Send Text, evaluated by n8n, parallel 8',
		items: SENDS,
		op: 'send',
		fields: 'n8n',
		parallel: 8,
	},
	{
		key: 'p1typed',
		label: 'Send Text, phone and text typed in, parallel 1',
		items: SENDS,
		op: 'send',
		fields: 'typed',
		parallel: 1,
	},
	{
		key: 'p1skip',
		label: 'Send Text, Skip Repeats Within on (8 h, the default), mappings, parallel 1',
		items: SENDS,
		op: 'send',
		fields: 'mapped',
		parallel: 1,
		skipRepeats: true,
	},
	{
		key: 'p8skip',
		label: 'Send Text, Skip Repeats Within on (8 h), mappings, parallel 8',
		items: SENDS,
		op: 'send',
		fields: 'mapped',
		parallel: 8,
		skipRepeats: true,
	},
	{
		key: 'convert',
		label: `Convert, \`{{ $json.amount }}\` / from / to`,
		items: CONVERTS,
		op: 'convert',
		fields: 'mapped',
	},
	{
		key: 'convertN8n',
		label: 'Convert, `{{ ($json.amount) }}`… (evaluated by n8n)',
		items: CONVERTS,
		op: 'convert',
		fields: 'n8n',
	},
];

/** One branch of the workflow: a kind in one round (the measured node is named `<key> #<round>`). */
interface Branch {
	kind: Kind;
	round: number;
	node: string;
}

/**
 * The send kinds run ROUNDS times, interleaved, so a busy moment of the machine hits all alike, and
 * in an order rotated by one each round, so no kind always follows the same other. Convert once each.
 */
const SEND_KINDS = KINDS.filter((k) => k.op !== 'convert');
const branches: Branch[] = [
	...Array.from({ length: ROUNDS }, (_, r) =>
		SEND_KINDS.map((_, i) => SEND_KINDS[(i + r) % SEND_KINDS.length]).map((kind) => ({
			kind,
			round: r + 1,
			node: `${kind.key} #${r + 1}`,
		})),
	).flat(),
	...KINDS.filter((k) => k.op === 'convert').map((kind) => ({
		kind,
		round: 1,
		node: `${kind.key} #1`,
	})),
];

/** The texts of a branch: `suffix` makes them new for Skip Repeats Within (else every round after the first would be skipped). */
function sendText(i: number, suffix: string): string {
	return `Order ${i} is ready for pick-up${suffix}`;
}

function sendItemsCode(count: number, suffix: string): string {
	return `return Array.from({ length: ${count} }, (_, i) => ({ json: { phone: '62812' + String(10000000 + i), text: 'Order ' + i + ' is ready for pick-up' + ${JSON.stringify(suffix)} } }));`;
}

/** What a branch appends to its texts: Skip Repeats Within branches their node's name. */
function textSuffix(branch: Branch): string {
	return branch.kind.skipRepeats ? ` (${branch.node})` : '';
}

function convertItemsCode(count: number): string {
	return `const codes = ['USD', 'eur', 'SGD', 'jpy', 'IDR', 'GBP', 'aud'];
return Array.from({ length: ${count} }, (_, i) => ({ json: { invoice: 'INV-' + i, amount: Math.round((i * 7.31 + 1) * 100) / 100, from: codes[i % codes.length], to: codes[(i * 3 + 1) % codes.length] } }));`;
}

function buildWorkflow(sandboxUrl: string, token: string): WorkflowJson {
	const nodes: Array<Record<string, unknown>> = [
		{
			id: 'trigger',
			name: 'Start',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
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
			parameters: {
				jsCode:
					branch.kind.op === 'convert'
						? convertItemsCode(branch.kind.items)
						: sendItemsCode(branch.kind.items, textSuffix(branch)),
			},
		});
		(connections.Start as { main: unknown[][] }).main[0].push({
			node: source,
			type: 'main',
			index: 0,
		});
		// A pause before the measured node: the previous branch's leftover work (HTTP Request's 1,000
		// sockets closing) runs then, instead of being charged to this node (measured: 145 ms of it
		// fell into the executionTime of a 300 ms Send Text run that followed HTTP Request).
		const pause = `Pause ${index + 1}`;
		nodes.push({
			id: `pause-${index}`,
			name: pause,
			type: 'n8n-nodes-base.wait',
			typeVersion: 1.1,
			position: [375, y],
			parameters: { amount: 1, unit: 'seconds' },
		});
		connections[source] = { main: [[{ node: pause, type: 'main', index: 0 }]] };
		connections[pause] = { main: [[{ node: branch.node, type: 'main', index: 0 }]] };
		const position = [500, y];
		const { kind } = branch;
		const map = (field: string) =>
			kind.fields === 'n8n' ? `={{ ($json.${field}) }}` : `={{ $json.${field} }}`;
		if (kind.op === 'http') {
			nodes.push({
				id: `http-${index}`,
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
		} else if (kind.op === 'send') {
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
					phone: kind.fields === 'typed' ? '6281210000000' : map('phone'),
					text: kind.fields === 'typed' ? 'Order 0 is ready for pick-up' : map('text'),
					options: sendOptions({
						...(kind.parallel === 8 ? { parallel: 8 } : {}),
						...(kind.skipRepeats ? {} : { skipRepeatsHours: 0 }),
					}),
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
	return {
		id: `benchMap${randomBytes(3).toString('hex')}`,
		name: 'bench: mapped fields',
		nodes,
		connections,
		settings: { executionOrder: 'v1' },
	};
}

/**
 * `n8n execute --id --rawOutput` with its output going to a file. n8n exits right after printing
 * the run; through a pipe, the tail of a run this large (tens of MB) is lost at exit, while writes
 * to a file are synchronous.
 */
async function executeToFile(
	userFolder: string,
	id: string,
): Promise<{ run?: N8nRun; outputFile: string }> {
	const install = installFor(userFolder);
	const outputFile = join(tmpdir(), `bench-n8n-${process.pid}-${id}.txt`);
	const fd = openSync(outputFile, 'w');
	try {
		const child = spawn(install.node, [install.n8nBin, 'execute', `--id=${id}`, '--rawOutput'], {
			cwd: userFolder,
			env: n8nEnv(userFolder, { N8N_RUNNERS_BROKER_PORT: String(await freePort()) }),
			stdio: ['ignore', fd, fd],
		});
		const timer = setTimeout(() => child.kill('SIGKILL'), 900_000);
		// n8n 2.40 on Node 24 may crash at exit after printing the run (see executeWorkflow in test/n8n/lib.ts): the run decides.
		await new Promise<void>((resolve, reject) =>
			child.on('error', reject).on('close', () => resolve()),
		);
		clearTimeout(timer);
	} finally {
		closeSync(fd);
	}
	return { run: extractJsonObject<N8nRun>(readFileSync(outputFile, 'utf8')), outputFile };
}

async function main(): Promise<void> {
	const install = ensureInstall();
	log(`n8n install: ${install.dir}`);
	const tgz = await packPackage();
	const userFolder = makeUserFolder('n8n-bench-');
	// Room for every send of the run (the sandbox's account refuses sends beyond its limit, as the gateway does).
	const sandbox = await startSandbox({ blockLimit: 1_000_000 });
	try {
		await installPackageIntoN8n(userFolder, tgz);
		await importCredential(
			userFolder,
			messagingRateCredential({
				...CREDENTIAL,
				baseUrl: sandbox.url,
				clientId: 'demo-client',
				clientSecret: SECRET,
			}),
		);
		// The limit, before n8n's run (again after it): the sandbox's ledger is cleared after it.
		log(
			`bare undici loop on ${install.target.label.replace(/^.* on /, '')}: ${SENDS} items × ${ROUNDS} rounds, parallel 1 and 8`,
		);
		const bareBefore = await bareLoops(install.node, sandbox.url);
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
		log(
			`n8n execute: ${SENDS} items through ${KINDS.length - 2} send branches × ${ROUNDS} rounds, ${CONVERTS} through each of 2 Convert branches`,
		);
		const started = Date.now();
		const { run, outputFile } = await executeToFile(userFolder, id);
		const wallMs = Date.now() - started;
		if (run?.status !== 'success') {
			throw new Error(
				`n8n execute did not succeed (status ${run?.status ?? 'no run printed'}); its output is in ${outputFile}`,
			);
		}
		rmSync(outputFile, { force: true });
		const runData = run.data.resultData.runData as unknown as Record<
			string,
			Array<{
				executionTime: number;
				data?: { main?: Array<Array<{ json: Record<string, unknown> }>> };
			}>
		>;

		// The work is checked before anything is printed as a result.
		const problems: string[] = [];
		const ledger = sandbox.ledger();
		const sendBranches = branches.filter((b) => b.kind.op !== 'convert');
		if (ledger.length !== SENDS * sendBranches.length)
			problems.push(`ledger holds ${ledger.length} sends, expected ${SENDS * sendBranches.length}`);
		sendBranches.forEach((branch, b) => {
			const { kind, node } = branch;
			const block = ledger.slice(b * SENDS, (b + 1) * SENDS);
			const expected = (i: number) => (kind.fields === 'typed' ? 0 : i);
			const key = (i: number) =>
				`62812${10000000 + expected(i)}|${sendText(expected(i), textSuffix(branch))}`;
			// Parallel 8 and HTTP Request (which sends its items at once) may deliver out of order: the set must still be exact.
			const inOrder = kind.parallel === 1;
			const exact = inOrder
				? block.every((e, i) => `${e.phone}|${e.text}` === key(i))
				: [...block.map((e) => `${e.phone}|${e.text}`)].sort().join() ===
					Array.from({ length: SENDS }, (_, i) => key(i))
						.sort()
						.join();
			if (!exact) problems.push(`${node}: the sends do not match the items`);
		});
		const converted = (key: string) => runData[`${key} #1`]?.[0]?.data?.main?.[0] ?? [];
		const fast = converted('convert');
		const byN8n = converted('convertN8n');
		if (fast.length !== CONVERTS || byN8n.length !== CONVERTS)
			problems.push(
				`Convert outputs ${fast.length} and ${byN8n.length} items, expected ${CONVERTS}`,
			);
		// The two runs fetched their rates at different times: `fetchedAt` (in the Rate Details Field) differs.
		const withoutFetchedAt = (json: unknown) =>
			JSON.stringify(json, (key, value: unknown) => (key === 'fetchedAt' ? undefined : value));
		const differing = fast.filter(
			(item, i) => withoutFetchedAt(item.json) !== withoutFetchedAt(byN8n[i]?.json),
		).length;
		if (differing > 0)
			problems.push(
				`${differing} Convert items differ between the direct read and n8n's evaluation`,
			);
		// The rates API's requests made while each Convert node ran (n8n's startTime and the sandbox's clock are this machine's).
		const convertRuns = KINDS.filter((k) => k.op === 'convert').map((kind) => {
			const task = runData[`${kind.key} #1`]?.[0] as
				{ startTime?: number; executionTime: number } | undefined;
			const start = task?.startTime ?? 0;
			const paths = sandbox
				.requests()
				.filter(
					(r) =>
						r.path.startsWith('/api/rate/') &&
						r.receivedAt >= start &&
						r.receivedAt <= start + (task?.executionTime ?? 0),
				)
				.map((r) => (r.path.endsWith('/authentication') ? 'token' : 'rates'));
			return { key: kind.key, paths };
		});
		const convertRequests = convertRuns.map(
			({ key, paths }) => `${key} ${paths.length} (${paths.join(', ') || 'none'})`,
		);
		if (convertRuns[0]?.paths.join() !== 'token,rates')
			problems.push(`the first Convert run made ${convertRequests[0]}, expected 2 (token, rates)`);

		/** ms per item of a kind: the median over its rounds, and every round. */
		const perItem = (key: Kind['key']) => {
			const rounds = branches
				.filter((b) => b.kind.key === key)
				.map((b) => runData[b.node][0].executionTime / b.kind.items);
			return { median: median(rounds), rounds };
		};
		const ms = Object.fromEntries(KINDS.map((k) => [k.key, perItem(k.key)])) as Record<
			Kind['key'],
			{ median: number; rounds: number[] }
		>;
		const bareAfter = await bareLoops(install.node, sandbox.url);
		const bare = Object.fromEntries(
			BARE_PARALLELISM.map((parallel) => {
				const rounds = [...bareBefore[parallel], ...bareAfter[parallel]];
				return [parallel, { median: median(rounds), rounds }];
			}),
		) as Record<1 | 8, { median: number; rounds: number[] }>;
		const http = ms.http.median;
		const fmt = (value: number) => (value < 0.1 ? value.toFixed(3) : value.toFixed(2));
		console.log(
			`\nbench:n8n: real n8n 2.40.7 (Node 24, its default \`vm\` expression engine), one \`n8n execute\` process, sandbox at ${sandbox.url}`,
		);
		console.log(
			`ms per item = the node's executionTime as n8n records it / its items (median of ${ROUNDS} interleaved rounds for the sends); vs HTTP Request = its ms per item / this one's; ${pacingNote()}\n`,
		);
		console.log(
			'| Workflow | Items | ms per item | rounds | vs HTTP Request | ÷ bare undici, same parallelism |',
		);
		console.log('|---|---|---|---|---|---|');
		for (const parallel of BARE_PARALLELISM) {
			const { median: value, rounds } = bare[parallel];
			console.log(
				`| Bare undici loop, separate process, parallel ${parallel} (the limit) | ${SENDS.toLocaleString('en')} | ${fmt(value)} | ${rounds.map(fmt).join(', ')} | ${(http / value).toFixed(1)}x | 1.00 |`,
			);
		}
		for (const kind of KINDS) {
			const { median: value, rounds } = ms[kind.key];
			const ratio = kind.op === 'convert' ? '' : `${(http / value).toFixed(1)}x`;
			const limit =
				kind.op === 'send' ? (value / bare[kind.parallel === 8 ? 8 : 1].median).toFixed(2) : '';
			console.log(
				`| ${kind.label} | ${kind.items.toLocaleString('en')} | ${fmt(value)} | ${rounds.map(fmt).join(', ')} | ${ratio} | ${limit} |`,
			);
		}
		const fastRate = 1000 / ms.convert.median;
		const n8nRate = 1000 / ms.convertN8n.median;
		console.log('');
		console.log(
			`Send Text mapped, ms per item ÷ the bare undici loop's: Skip Repeats Within off (0) parallel 1 ${limitRatio(ms.p1.median, bare[1].median, 1.3)}, parallel 8 ${limitRatio(ms.p8.median, bare[8].median, 1.5)}`,
		);
		console.log(
			`  Skip Repeats Within on (8 h, the default: n8n's processed-items store): parallel 1 ${limitRatio(ms.p1skip.median, bare[1].median, 1.3)}, parallel 8 ${limitRatio(ms.p8skip.median, bare[8].median, 1.5)}`,
		);
		console.log(
			`Send Text mapped vs HTTP Request: parallel 1 ${(http / ms.p1.median).toFixed(1)}x (goal >= 3), parallel 8 ${(http / ms.p8.median).toFixed(1)}x (goal >= 6)`,
		);
		console.log(
			`Send Text mapped (read from the item) vs the same mappings evaluated by n8n: parallel 1 ${(ms.p1n8n.median / ms.p1.median).toFixed(1)}x, parallel 8 ${(ms.p8n8n.median / ms.p8.median).toFixed(1)}x faster`,
		);
		console.log(
			`Convert mapped: ${Math.round(fastRate).toLocaleString('en')} items/s vs ${Math.round(n8nRate).toLocaleString('en')} items/s evaluated by n8n: ${(fastRate / n8nRate).toFixed(0)}x (goal >= 20); outputs identical: ${differing === 0 ? 'yes' : 'NO'}`,
		);
		console.log(
			`Convert requests per run (the sandbox's requests to /api/rate/… during each node's run): ${convertRequests.join('; ')}`,
		);
		console.log(
			`Checked: ${ledger.length} sends in the sandbox's ledger match their items; wall time ${(wallMs / 1000).toFixed(0)} s including n8n's start\n`,
		);
		if (problems.length) {
			console.error(problems.join('\n'));
			process.exitCode = 1;
		}
	} finally {
		await sandbox.close();
		if (!args.includes('--keep')) rmSync(userFolder, { recursive: true, force: true });
	}
}

const BARE_PARALLELISM = [1, 8] as const;

/**
 * The bare undici loop (bench/bare-undici-loop.ts) in its own process on n8n's Node, at parallel 1
 * and 8: ms per item of each of its rounds.
 */
async function bareLoops(node: string, sandboxUrl: string): Promise<Record<1 | 8, number[]>> {
	const rounds: Record<1 | 8, number[]> = { 1: [], 8: [] };
	for (const parallel of BARE_PARALLELISM) {
		const child = spawn(
			node,
			[
				'-r',
				require.resolve('ts-node/register/transpile-only'),
				join(__dirname, 'bare-undici-loop.ts'),
				sandboxUrl,
				String(SENDS),
				String(parallel),
				String(ROUNDS),
			],
			{ cwd: join(__dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] },
		);
		let out = '';
		child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
		const code = await new Promise<number | null>((resolve, reject) =>
			child.on('error', reject).on('close', resolve),
		);
		if (code !== 0) throw new Error(`the bare undici loop exited with code ${code}`);
		rounds[parallel].push(...(JSON.parse(out) as { msPerItem: number[] }).msPerItem);
	}
	return rounds;
}

/** `ms` as a multiple of the bare loop's, next to its goal. */
function limitRatio(ms: number, bare: number, goal: number): string {
	const ratio = ms / bare;
	return `${ratio.toFixed(2)}x (goal <= ${goal}: ${ratio <= goal ? 'met' : 'NOT met'})`;
}

function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
