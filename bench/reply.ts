/**
 * `npm run bench:reply`: how long a chatbot takes to answer, in real n8n 2.40.7 (`n8n start`,
 * SQLite, the cached install of scripts/n8n-install.sh), against the same bot built from n8n's own
 * nodes. Two published workflows answer every inbound message with `Re: <its text>` to its sender:
 *
 *   A. Messaging Trigger (its defaults: Generated Secret, Skip Repeated Deliveries) → Send Text,
 *      Phone `{{ $json.chatId }}`, the node's defaults (Skip Repeats Within 8 h). Delay Between
 *      Messages pauses only before each message of a run but the first: a one-item reply never
 *      waits, so there is no variant with the pause off;
 *   B. Webhook → HTTP Request (the gateway's token endpoint, as a user would) → HTTP Request (the
 *      gateway's send endpoint with that token);
 *   C. B with a credential (HTTP Header Auth, a header the gateway ignores) on its token request:
 *      what n8n itself spends on a workflow that uses a credential, which A always does.
 *
 * The gateway is a sandbox in a child process (bench/reply-gateway.ts): it posts the inbound event
 * to the account's webhook as the gateway does (pointed at A's registered URL or B's), and notes
 * when it posted and when it recorded the reply; the latency is the difference, on its clock.
 * One at a time (the next message after the reply) and 8 at a time (8 in flight), in rounds that
 * interleave A and B; p50 and p99 of each, A ÷ B, and every message checked for exactly one reply
 * to its sender. Then 20 more messages each, one at a time, whose executions n8n saved are read
 * back (`GET /rest/executions/:id`): the median timeline from the post to the execution's end.
 *
 * Goals (issue: a reply 1.5–1.8x slower than n8n's own nodes): with A's defaults, one at a time,
 * p50 ≤ 1.2x and p99 ≤ 1.3x B's; no reply lost or doubled.
 *
 * Run: npm run bench:reply [-- --messages 1000 --rounds 5 --only A --cpu-prof <dir> --n8n-env NAME=value --keep]
 * (messages: per chatbot and per mode, split over the rounds; `--only A` or `B` runs one chatbot;
 * `--cpu-prof <dir>`: n8n runs under Node's CPU profiler and writes its profile there at the end)
 */
import { fork, type ChildProcess } from 'child_process';
import { randomUUID } from 'crypto';
import { rmSync } from 'fs';
import { join } from 'path';

import { GATEWAY_ACCOUNT, type GatewayCommand, type GatewayEvent } from './reply-gateway';
import {
	CREDENTIAL_TYPE,
	NODE_TYPES,
	ensureInstall,
	getExecution,
	importCredential,
	importWorkflows,
	installPackageIntoN8n,
	listExecutions,
	log,
	makeUserFolder,
	messagingRateCredential,
	packPackage,
	startN8n,
	type N8nServer,
	type WorkflowJson,
} from '../test/n8n/lib';

const args = process.argv.slice(2);
const argNumber = (name: string, fallback: number) => {
	const at = args.indexOf(`--${name}`);
	return at >= 0 ? Number(args[at + 1]) : fallback;
};
const argText = (name: string) => {
	const at = args.indexOf(`--${name}`);
	return at >= 0 ? args[at + 1] : undefined;
};
const MESSAGES = argNumber('messages', 1000);
const ROUNDS = argNumber('rounds', 5);
const WARM_UP = 20;
const TIMELINE_SAMPLE = 20;
const REPLY_TIMEOUT_MS = 15_000;
const CUSTOMERS = 50;
const CREDENTIAL = { id: 'benchReplyCred01', name: 'Sandbox (bench:reply)' };
const VERSION = '16.0.1.3';
const NATIVE_PATH = 'bench-reply-native';
const HEADER_CREDENTIAL = { id: 'benchReplyHdr001', name: 'Header (bench:reply)' };

type Bot = 'A' | 'B' | 'C';
const BOTS = (['A', 'B', 'C'] as Bot[]).filter((bot) => (argText('only') ?? bot) === bot);
const CPU_PROFILE_DIR = argText('cpu-prof');
/** `--n8n-env NAME=value` (repeatable): n8n's settings for this run, e.g. its expression engine's. */
const N8N_ENV = Object.fromEntries(
	args.flatMap((arg, at) =>
		args[at - 1] === '--n8n-env' ? [[arg.split('=')[0], arg.split('=').slice(1).join('=')]] : [],
	),
);
const BOT_NAMES: Record<Bot, string> = {
	A: 'A: Messaging Trigger → Send Text (defaults)',
	B: "B: Webhook → HTTP Request (token) → HTTP Request (send), n8n's own nodes",
	C: 'C: B with a credential (HTTP Header Auth) on its token request',
};
const WORKFLOW_IDS: Record<Bot, string> = {
	A: 'benchReplyPkg',
	B: 'benchReplyNative',
	C: 'benchReplyCred',
};
const MODES = [1, 8] as const;
type Mode = (typeof MODES)[number];

function packageChatbot(): WorkflowJson {
	const credentials = { [CREDENTIAL_TYPE]: CREDENTIAL };
	return {
		id: WORKFLOW_IDS.A,
		name: 'bench: chatbot, Messaging Trigger → Send Text',
		nodes: [
			{
				id: randomUUID(),
				name: 'On Message',
				type: NODE_TYPES.messagingTrigger,
				typeVersion: 1,
				position: [0, 0],
				webhookId: randomUUID(),
				parameters: { accountNumber: GATEWAY_ACCOUNT.number },
				credentials,
			},
			{
				id: randomUUID(),
				name: 'Reply',
				type: NODE_TYPES.messaging,
				typeVersion: 1,
				position: [240, 0],
				parameters: {
					resource: 'message',
					operation: 'sendText',
					phone: '={{ $json.chatId }}',
					text: '=Re: {{ $json.text }}',
				},
				credentials,
			},
		],
		connections: { 'On Message': { main: [[{ node: 'Reply', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}

/**
 * B, or with `credential` C: the same with a credential on its token request (the gateway ignores
 * the header), which shows what n8n spends on any workflow that uses a credential.
 */
function nativeChatbot(gatewayUrl: string, credential = false): WorkflowJson {
	const inbound = "$('Webhook').item.json.body.params";
	const auth = credential
		? { authentication: 'genericCredentialType', genericAuthType: 'httpHeaderAuth' }
		: {};
	return {
		id: WORKFLOW_IDS[credential ? 'C' : 'B'],
		name: `bench: chatbot, n8n's own nodes${credential ? ', a credential' : ''}`,
		nodes: [
			{
				id: randomUUID(),
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: randomUUID(),
				parameters: { httpMethod: 'POST', path: nativePath(credential), options: {} },
			},
			{
				id: randomUUID(),
				name: 'Token',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [240, 0],
				...(credential ? { credentials: { httpHeaderAuth: HEADER_CREDENTIAL } } : {}),
				parameters: {
					method: 'GET',
					url: `${gatewayUrl}/api/wa/authentication`,
					...auth,
					sendBody: true,
					specifyBody: 'json',
					jsonBody: JSON.stringify({
						params: {
							client_id: GATEWAY_ACCOUNT.clientId,
							client_secret: GATEWAY_ACCOUNT.clientSecret,
						},
					}),
					options: {},
				},
			},
			{
				id: randomUUID(),
				name: 'Send',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [480, 0],
				parameters: {
					method: 'POST',
					url: `${gatewayUrl}/api/wa/2.0/post`,
					sendHeaders: true,
					headerParameters: {
						parameters: [{ name: 'Authorization', value: '=Bearer {{ $json.result.token }}' }],
					},
					sendBody: true,
					specifyBody: 'json',
					jsonBody: `={{ JSON.stringify({ params: { method: 'sendMessage', client_secret: '${GATEWAY_ACCOUNT.clientSecret}', version: '${VERSION}', phone: ${inbound}.sender, body: 'Re: ' + ${inbound}.message } }) }}`,
					options: {},
				},
			},
		],
		connections: {
			Webhook: { main: [[{ node: 'Token', type: 'main', index: 0 }]] },
			Token: { main: [[{ node: 'Send', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

const nativePath = (credential: boolean) => `${NATIVE_PATH}${credential ? '-credential' : ''}`;

/** The gateway child and what it tells: replies by their text, deliveries by their id. */
class Gateway {
	url = '';
	/** Replies recorded, by text; each with the phone it went to. */
	readonly replies = new Map<string, Array<{ phone: string; at: number }>>();
	private readonly waiting = new Map<string, (at: number) => void>();
	private readonly pending = new Map<number, (event: GatewayEvent) => void>();
	private nextId = 1;
	private ready?: (url: string) => void;

	constructor(private readonly child: ChildProcess) {
		child.on('message', (event: GatewayEvent) => this.heard(event));
	}

	static async start(): Promise<Gateway> {
		const child = fork(join(__dirname, 'reply-gateway.ts'), [], {
			execArgv: ['-r', 'ts-node/register/transpile-only'],
			stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
		});
		const gateway = new Gateway(child);
		gateway.url = await new Promise<string>((resolve, reject) => {
			gateway.ready = resolve;
			child.once('exit', (code) => reject(new Error(`the gateway exited (code ${code})`)));
		});
		return gateway;
	}

	private heard(event: GatewayEvent): void {
		if (event.ev === 'ready') this.ready?.(event.url);
		else if (event.ev === 'sent') {
			const list = this.replies.get(event.text) ?? [];
			list.push({ phone: event.phone, at: event.at });
			this.replies.set(event.text, list);
			this.waiting.get(event.text)?.(event.at);
			this.waiting.delete(event.text);
		} else this.pending.get(event.id)?.(event);
	}

	private ask(command: GatewayCommand): Promise<GatewayEvent> {
		return new Promise((resolve) => {
			this.pending.set(command.id, (event) => {
				this.pending.delete(command.id);
				resolve(event);
			});
			this.child.send(command);
		});
	}

	async webhook(): Promise<string | undefined> {
		const event = await this.ask({ cmd: 'account', id: this.nextId++ });
		return event.ev === 'account' ? event.webhook : undefined;
	}

	/**
	 * Delivers one inbound message and waits for its reply (`Re: <message>`): the latency in ms, or
	 * why there is none.
	 */
	async roundTrip(
		webhook: string,
		sender: string,
		message: string,
	): Promise<{ ms: number; postedAt: number } | { problem: string }> {
		const replyText = `Re: ${message}`;
		const replied = new Promise<number | undefined>((resolve) => {
			const timer = setTimeout(() => resolve(undefined), REPLY_TIMEOUT_MS);
			this.waiting.set(replyText, (at) => {
				clearTimeout(timer);
				resolve(at);
			});
		});
		const delivered = await this.ask({
			cmd: 'deliver',
			id: this.nextId++,
			webhook,
			sender,
			message,
		});
		if (delivered.ev !== 'delivered' || delivered.status !== 200) {
			this.waiting.delete(replyText);
			return { problem: `delivery: ${JSON.stringify(delivered).slice(0, 300)}` };
		}
		const at = await replied;
		if (at === undefined) return { problem: `no reply within ${REPLY_TIMEOUT_MS} ms` };
		return { ms: at - delivered.postedAt, postedAt: delivered.postedAt };
	}

	async close(): Promise<void> {
		const exited = new Promise((resolve) => this.child.once('exit', resolve));
		this.child.disconnect();
		await exited;
	}
}

/** One message of the bench: who sent it, its text, and what came of it. */
interface Sent {
	bot: Bot;
	sender: string;
	message: string;
	ms?: number;
	postedAt?: number;
	problem?: string;
}

async function main(): Promise<void> {
	const perRound = Math.ceil(MESSAGES / ROUNDS);
	const install = ensureInstall();
	log(`n8n install: ${install.dir}`);
	const tgz = await packPackage();
	const userFolder = makeUserFolder('n8n-bench-reply-');
	const gateway = await Gateway.start();
	let server: N8nServer | undefined;
	try {
		await installPackageIntoN8n(userFolder, tgz);
		await importCredential(
			userFolder,
			messagingRateCredential({
				...CREDENTIAL,
				baseUrl: gateway.url,
				clientId: GATEWAY_ACCOUNT.clientId,
				clientSecret: GATEWAY_ACCOUNT.clientSecret,
			}),
		);
		await importCredential(userFolder, {
			...HEADER_CREDENTIAL,
			type: 'httpHeaderAuth',
			data: { name: 'X-Bench', value: 'bench' },
		});
		await importWorkflows(userFolder, [
			packageChatbot(),
			nativeChatbot(gateway.url),
			nativeChatbot(gateway.url, true),
		]);
		server = await startN8n(userFolder, {
			env: {
				...N8N_ENV,
				...(CPU_PROFILE_DIR
					? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${CPU_PROFILE_DIR}` }
					: {}),
			},
		});
		const srv = server;
		await srv.activateWorkflow(WORKFLOW_IDS.A);
		const registered = await gateway.webhook();
		if (!registered) throw new Error("activating A registered no webhook at the gateway's account");
		await srv.activateWorkflow(WORKFLOW_IDS.B);
		await srv.activateWorkflow(WORKFLOW_IDS.C);
		const webhooks: Record<Bot, string> = {
			A: registered,
			B: srv.webhookUrl(nativePath(false)),
			C: srv.webhookUrl(nativePath(true)),
		};

		const all: Sent[] = [];
		let serial = 0;
		/** `count` messages to a bot, `parallel` in flight; each waits for its reply. */
		const phase = async (bot: Bot, parallel: number, count: number, label: string) => {
			const batch: Sent[] = Array.from({ length: count }, () => {
				const n = serial++;
				return {
					bot,
					sender: `62813${String(10_000_000 + (n % CUSTOMERS))}`,
					message: `${label} #${n} ${randomUUID().slice(0, 8)}`,
				};
			});
			let next = 0;
			const worker = async () => {
				while (next < batch.length) {
					const sent = batch[next++];
					const result = await gateway.roundTrip(webhooks[bot], sent.sender, sent.message);
					Object.assign(sent, result);
				}
			};
			await Promise.all(Array.from({ length: parallel }, worker));
			all.push(...batch);
			return batch;
		};

		log(
			`${BOTS.length} chatbots × ${MODES.length} modes × ${ROUNDS} rounds of ${perRound} messages, after ${WARM_UP} each to warm up`,
		);
		for (const bot of BOTS)
			for (const parallel of MODES) await phase(bot, parallel, WARM_UP, `warm-up ${bot}`);
		const measured: Record<Bot, Record<Mode, Sent[][]>> = {
			A: { 1: [], 8: [] },
			B: { 1: [], 8: [] },
			C: { 1: [], 8: [] },
		};
		for (let round = 1; round <= ROUNDS; round++) {
			for (const parallel of MODES)
				for (const bot of BOTS)
					measured[bot][parallel].push(
						await phase(bot, parallel, perRound, `${bot} p${parallel} r${round}`),
					);
			log(`round ${round} of ${ROUNDS} done`);
		}
		const sample = new Map<Bot, Sent[]>();
		for (const bot of BOTS)
			sample.set(bot, await phase(bot, 1, TIMELINE_SAMPLE, `timeline ${bot}`));
		// Late or doubled replies still arriving.
		await new Promise((resolve) => setTimeout(resolve, 3000));

		const problems = checkReplies(all, gateway);
		const timelines: string[] = [];
		for (const bot of BOTS) timelines.push(await timeline(srv, bot, sample.get(bot) ?? []));

		console.log(
			`\nbench:reply: real n8n 2.40.7 (Node 24, \`n8n start\`, SQLite), gateway (sandbox) in a child process; latency = from the gateway posting the inbound message to it recording the reply`,
		);
		console.log(
			`${perRound} messages per chatbot, mode and round, ${ROUNDS} rounds, ${BOTS.join(', ')} interleaved; ${CUSTOMERS} customers; Delay Between Messages never applies to a one-item reply\n`,
		);
		console.log('| Chatbot | In flight | Messages | p50 ms | p99 ms | p50 per round |');
		console.log('|---|---|---|---|---|---|');
		const stats = {} as Record<Bot, Record<Mode, { p50: number; p99: number }>>;
		for (const bot of BOTS) {
			stats[bot] = {} as Record<Mode, { p50: number; p99: number }>;
			for (const parallel of MODES) {
				const rounds = measured[bot][parallel];
				const ms = rounds.flat().flatMap((s) => (s.ms === undefined ? [] : [s.ms]));
				stats[bot][parallel] = { p50: percentile(ms, 50), p99: percentile(ms, 99) };
				const perRoundP50 = rounds.map((r) =>
					percentile(
						r.flatMap((s) => (s.ms === undefined ? [] : [s.ms])),
						50,
					).toFixed(0),
				);
				console.log(
					`| ${BOT_NAMES[bot]} | ${parallel} | ${ms.length} | ${stats[bot][parallel].p50.toFixed(1)} | ${stats[bot][parallel].p99.toFixed(1)} | ${perRoundP50.join(', ')} |`,
				);
			}
		}
		console.log('');
		for (const parallel of BOTS.includes('A') && BOTS.includes('B') ? MODES : []) {
			const p50 = stats.A[parallel].p50 / stats.B[parallel].p50;
			const p99 = stats.A[parallel].p99 / stats.B[parallel].p99;
			console.log(
				parallel === 1
					? `A ÷ B, one at a time: p50 ${goal(p50, 1.2)}, p99 ${goal(p99, 1.3)}`
					: `A ÷ B, ${parallel} at a time: p50 ${p50.toFixed(2)}x, p99 ${p99.toFixed(2)}x (no goal set)`,
			);
		}
		if (BOTS.length === 3)
			console.log(
				`A ÷ C, one at a time: p50 ${(stats.A[1].p50 / stats.C[1].p50).toFixed(2)}x, p99 ${(stats.A[1].p99 / stats.C[1].p99).toFixed(2)}x; C ÷ B: p50 ${(stats.C[1].p50 / stats.B[1].p50).toFixed(2)}x (what a credential costs n8n's own nodes)`,
			);
		console.log(
			`Replies: ${all.length} messages (warm-up and timeline included), ${problems.length ? `${problems.length} problems` : 'each answered exactly once, to its sender'}`,
		);
		for (const t of timelines) console.log(`\n${t}`);
		if (problems.length) {
			console.error(`\n${problems.slice(0, 20).join('\n')}`);
			process.exitCode = 1;
		}
	} finally {
		await server?.stop();
		await gateway.close();
		if (!args.includes('--keep')) rmSync(userFolder, { recursive: true, force: true });
		else log(`kept ${userFolder}`);
	}
}

/** Every message answered once, to its sender, within the time allowed. */
function checkReplies(all: Sent[], gateway: Gateway): string[] {
	const problems: string[] = [];
	const expected = new Set(all.map((s) => `Re: ${s.message}`));
	for (const sent of all) {
		const replies = gateway.replies.get(`Re: ${sent.message}`) ?? [];
		if (sent.problem) problems.push(`${sent.bot} "${sent.message}": ${sent.problem}`);
		if (replies.length !== 1)
			problems.push(`${sent.bot} "${sent.message}": ${replies.length} replies`);
		else if (replies[0].phone !== sent.sender)
			problems.push(`${sent.bot} "${sent.message}": replied to ${replies[0].phone}`);
	}
	for (const text of gateway.replies.keys())
		if (!expected.has(text)) problems.push(`a send no message asked for: "${text}"`);
	return problems;
}

/** One event of an execution's timeline: its time in ms after the inbound message was posted. */
type Events = Map<string, number>;

/**
 * The median timeline of a bot's sample, from the executions n8n saved: when n8n created and
 * started the execution, each node's start and end (n8n's task data), the reply at the gateway,
 * the execution's end.
 */
async function timeline(srv: N8nServer, bot: Bot, sample: Sent[]): Promise<string> {
	const list = await listExecutions(srv, { workflowId: WORKFLOW_IDS[bot] }, sample.length + 5);
	const byMessage = new Map(sample.map((s) => [s.message, s]));
	const events: Events[] = [];
	for (const summary of list) {
		const execution = await getExecution(srv, summary.id);
		const runData = (execution.data?.resultData?.runData ?? {}) as unknown as Record<
			string,
			Array<{
				startTime: number;
				executionTime: number;
				data?: { main?: Array<Array<{ json: Record<string, unknown> }>> };
			}>
		>;
		const first = Object.values(runData)
			.map((tasks) => tasks[0])
			.sort((a, b) => a.startTime - b.startTime)[0];
		const json = first?.data?.main?.[0]?.[0]?.json ?? {};
		const message =
			bot === 'A'
				? String(json.text)
				: String((json.body as { params?: { message?: string } } | undefined)?.params?.message);
		const sent = byMessage.get(message);
		if (!sent?.postedAt || sent.ms === undefined) continue;
		const at = (time: number | string | undefined) =>
			time === undefined ? NaN : new Date(time).getTime() - (sent.postedAt ?? 0);
		const e: Events = new Map();
		e.set('execution created', at(execution.createdAt as string | undefined));
		e.set('execution started', at(execution.startedAt));
		for (const [node, tasks] of Object.entries(runData).sort(
			(a, b) => a[1][0].startTime - b[1][0].startTime,
		)) {
			e.set(`${node} started`, at(tasks[0].startTime));
			e.set(`${node} ended`, at(tasks[0].startTime + tasks[0].executionTime));
		}
		e.set('reply at the gateway', sent.ms);
		e.set('execution stopped', at(execution.stoppedAt));
		events.push(e);
	}
	if (events.length === 0) return `${BOT_NAMES[bot]}: no execution of the sample found`;
	const names = [...events[0].keys()].sort(
		(a, b) => percentile(column(events, a), 50) - percentile(column(events, b), 50),
	);
	const lines = names.map((name) => {
		const values = column(events, name);
		return `  ${name.padEnd(28)} ${percentile(values, 50).toFixed(1).padStart(7)} ms  (${percentile(values, 10).toFixed(1)}–${percentile(values, 90).toFixed(1)})`;
	});
	return [
		`${BOT_NAMES[bot]}: timeline of ${events.length} executions, one at a time, ms after the gateway posted (median, p10–p90; n8n's times have whole milliseconds)`,
		'  inbound posted                   0.0 ms',
		...lines,
	].join('\n');
}

function column(events: Events[], name: string): number[] {
	return events.map((e) => e.get(name) ?? NaN).filter((v) => !Number.isNaN(v));
}

/** Nearest-rank percentile. */
function percentile(values: number[], p: number): number {
	if (values.length === 0) return NaN;
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function goal(ratio: number, limit: number): string {
	return `${ratio.toFixed(2)}x (goal <= ${limit}: ${ratio <= limit ? 'met' : 'NOT met'})`;
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
