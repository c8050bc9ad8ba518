/**
 * The sandbox HTTP server: a stand-in for the messaging and rate service, built on Node's own
 * `http` so nothing hides what goes over the wire. See `types.ts` for the contract.
 */
import { randomUUID } from 'crypto';
import http, { type IncomingMessage as HttpRequest, type ServerResponse } from 'http';
import type { AddressInfo, Socket } from 'net';
import { Agent } from 'undici';
import {
	ApiError,
	errorAnswer,
	isJsonContentType,
	jsonAnswer,
	malformedBody,
	notFoundPage,
	proxyErrorPage,
	rawJsonAnswer,
	resultAnswer,
	serverError,
	sessionExpired,
	retryAfter,
	tooManyRequests,
	unsupportedMediaType,
	type Answer,
} from './answers';
import { CONTROL_PREFIX, handleControl } from './control';
import { FILES_PREFIX, FileServer, drained } from './files';
import {
	bearerTokenOf,
	resolveRoute,
	runOperation,
	newQrPayload,
	selectOperation,
	type Operation,
} from './endpoints';
import { FaultEngine, faultProcessesRequest, type FiredFault } from './faults';
import { resolveOptions, type ResolvedOptions } from './options';
import { NO_WEBHOOK, listeningStopped } from './phone';
import { moveRate } from './rates';
import { SandboxState } from './state';
import type {
	InboxEntry,
	IncomingMessage,
	RequestLogEntry,
	Sandbox,
	SandboxOptions,
} from './types';
import { DEFAULT_SENDER, DEFAULT_TEXT, deliverIncoming, ignoredReason } from './webhook';

export type { Sandbox, SandboxOptions } from './types';

const LOG_STRING_LIMIT = 1024;
const DEFAULT_SLOW_MS = 5000;
const TRUNCATED_JSON = '{"jsonrpc":"2.0","id":null,"result":{"mess';

/** Everything a request handler needs; one per sandbox. */
interface Core {
	state: SandboxState;
	faults: FaultEngine;
	options: ResolvedOptions;
	delays: Delays;
}

/** What happens to a request: an answer (maybe a rejection), or a dropped socket. */
type Outcome =
	| { kind: 'answer'; answer: Answer; rejectReason?: string; trickleMs?: number }
	| { kind: 'huge'; bytes: number; chunked: boolean }
	| { kind: 'drop' };

// ---------------------------------------------------------------------------------------------
// Small helpers

/** Timers that `close()` can cut short, so a `slow` fault never keeps the process alive. */
class Delays {
	private pending = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();

	wait(ms: number): Promise<void> {
		return new Promise((resolve) => {
			const entry = { timer: setTimeout(() => done(), ms), resolve: () => done() };
			const done = () => {
				clearTimeout(entry.timer);
				this.pending.delete(entry);
				resolve();
			};
			this.pending.add(entry);
		});
	}

	cancelAll(): void {
		for (const entry of [...this.pending]) entry.resolve();
	}
}

/** Collects Buffer chunks and concatenates once: large base64 bodies stay cheap. */
function readBody(req: HttpRequest): Promise<Buffer> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		let total = 0;
		req.on('data', (chunk: Buffer) => {
			chunks.push(chunk);
			total += chunk.length;
		});
		req.on('end', () => resolve(Buffer.concat(chunks, total)));
		req.on('error', reject);
	});
}

function pathnameOf(url: string | undefined): string {
	return new URL(url ?? '/', 'http://sandbox').pathname;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
	for (const part of (header ?? '').split(';')) {
		const [key, ...rest] = part.trim().split('=');
		if (key === name) return rest.join('=');
	}
	return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{"params": {...}}` with a JSON content type, or the rejection to answer. */
function parseParams(
	contentType: string | undefined,
	body: Buffer,
): Record<string, unknown> | ApiError {
	if (!isJsonContentType(contentType)) return unsupportedMediaType(contentType);
	if (body.length === 0) return malformedBody();
	let parsed: unknown;
	try {
		parsed = JSON.parse(body.toString('utf8'));
	} catch {
		return malformedBody();
	}
	if (!isPlainObject(parsed) || !isPlainObject(parsed.params)) return malformedBody();
	return parsed.params;
}

/** Log-friendly copy of params: long strings (file bodies) become `<N chars>`. */
function summarize(value: unknown): unknown {
	if (typeof value === 'string')
		return value.length > LOG_STRING_LIMIT ? `<${value.length} chars>` : value;
	if (Array.isArray(value)) return value.map(summarize);
	if (isPlainObject(value))
		return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, summarize(v)]));
	return value;
}

/** What fault rules match on: params.method, or params.function for the rate get. */
function rpcMethodOf(params: Record<string, unknown> | ApiError): string | undefined {
	if (params instanceof ApiError) return undefined;
	const selector = params.method ?? params.function;
	return typeof selector === 'string' ? selector : undefined;
}

function writeAnswer(
	res: ServerResponse,
	answer: Answer,
	extraHeaders: Record<string, string>,
): void {
	res.writeHead(answer.status, {
		...answer.headers,
		...extraHeaders,
		'Content-Length': Buffer.byteLength(answer.body),
	});
	res.end(answer.body);
}

/** An answer written one byte at a time: a client's timeout that restarts with every chunk never fires. */
async function trickleAnswer(
	core: Core,
	req: HttpRequest,
	res: ServerResponse,
	answer: Answer,
	everyMs: number,
): Promise<void> {
	res.writeHead(answer.status, {
		...answer.headers,
		'Content-Length': Buffer.byteLength(answer.body),
	});
	const bytes = Buffer.from(answer.body);
	for (let i = 0; i < bytes.length && !clientHasGone(req, res); i++) {
		res.write(bytes.subarray(i, i + 1));
		await core.delays.wait(everyMs);
	}
	if (!clientHasGone(req, res)) res.end();
}

/** A well-formed JSON answer of `bytes` bytes, streamed in 64 KiB pieces (the sandbox never holds it). */
async function writeHugeAnswer(
	res: ServerResponse,
	bytes: number,
	chunked: boolean,
): Promise<void> {
	const head = '{"jsonrpc":"2.0","id":null,"result":"';
	const tail = '"}';
	res.writeHead(
		200,
		chunked
			? { 'Content-Type': 'application/json' }
			: { 'Content-Type': 'application/json', 'Content-Length': bytes },
	);
	res.write(head);
	const piece = 'a'.repeat(64 * 1024);
	let left = bytes - head.length - tail.length;
	while (left > 0 && !res.destroyed) {
		const chunk = left >= piece.length ? piece : piece.slice(0, left);
		left -= chunk.length;
		// Each wait's listeners go with it: a 'close' left per drain piled up past Node's warning of 10.
		if (!res.write(chunk)) await drained(res);
	}
	if (!res.destroyed) res.end(tail);
}

function clientHasGone(req: HttpRequest, res: ServerResponse): boolean {
	return req.socket.destroyed || res.destroyed;
}

// ---------------------------------------------------------------------------------------------
// Faults that replace processing

function answerForFault(
	core: Core,
	fired: FiredFault,
	bearerToken: string | undefined,
	params: unknown,
): Outcome {
	const answer = (a: Answer): Outcome => ({ kind: 'answer', answer: a });
	const { retryAfterSeconds, retryAfterDate } = fired.rule;
	const retryAfterValue =
		retryAfterSeconds === undefined ? undefined : retryAfter(retryAfterSeconds, retryAfterDate);
	switch (fired.kind) {
		case 'http429':
			return answer(errorAnswer(tooManyRequests(retryAfterValue ?? '1')));
		case 'html502':
			return answer(proxyErrorPage(502));
		case 'html503':
			return answer(proxyErrorPage(503, retryAfterValue));
		case 'html504':
			return answer(proxyErrorPage(504));
		case 'dropBeforeProcessing':
			return { kind: 'drop' };
		case 'expireToken':
			if (bearerToken) core.state.revokeToken(bearerToken);
			return answer(errorAnswer(sessionExpired()));
		case 'malformedJson':
			return answer(rawJsonAnswer(TRUNCATED_JSON));
		case 'emptyBody':
			return answer(rawJsonAnswer(''));
		case 'hugeBody':
			return {
				kind: 'huge',
				bytes: fired.rule.bytes ?? 100 * 1024 * 1024,
				chunked: fired.rule.chunked === true,
			};
		case 'redirect':
			return answer({
				status: 302,
				headers: {
					'Content-Type': 'application/json',
					'Location': fired.rule.location ?? 'http://127.0.0.1:1/moved',
				},
				body: JSON.stringify({
					jsonrpc: '2.0',
					id: null,
					result: { message: { sent: true, message: 'Message sent' } },
				}),
			});
		case 'rpcError': {
			// `{param}` in the message is replaced by the request's param, as servers echo what they refuse.
			const given = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>;
			const message = (fired.rule.message ?? 'Odoo Server Error').replace(
				/\{(\w+)\}/g,
				(_, name: string) => String(given[name] ?? ''),
			);
			return answer(
				errorAnswer(
					new ApiError(
						200,
						fired.rule.code ?? 200,
						message,
						fired.rule.name ?? 'odoo.exceptions.UserError',
						message,
					),
				),
			);
		}
		case 'answer':
			return answer(resultAnswer(fired.rule.result ?? null));
		case 'raw':
			return answer({ ...rawJsonAnswer(fired.rule.body ?? ''), status: fired.rule.status ?? 200 });
		default:
			throw new Error(`Fault ${fired.kind} is applied during processing`);
	}
}

// ---------------------------------------------------------------------------------------------
// API requests

async function processOperation(
	core: Core,
	candidates: Operation[],
	params: Record<string, unknown> | ApiError,
	bearerToken: string | undefined,
	fault: FiredFault | undefined,
): Promise<Outcome> {
	try {
		if (params instanceof ApiError) throw params;
		const operation = selectOperation(candidates, params);
		const result = await runOperation(
			operation,
			{ params, bearerToken, fault },
			core.state,
			core.options,
		);
		return { kind: 'answer', answer: resultAnswer(result) };
	} catch (error) {
		if (error instanceof ApiError)
			return { kind: 'answer', answer: errorAnswer(error), rejectReason: error.message };
		throw error;
	}
}

/** Routing, faults, validation and handling; returns what to do with the connection. */
async function decideOutcome(core: Core, entry: RequestLogEntry, body: Buffer): Promise<Outcome> {
	const route = resolveRoute(entry.path, entry.method);
	if (route.kind === 'notFound')
		return { kind: 'answer', answer: notFoundPage(), rejectReason: 'Not Found' };
	if (route.kind === 'wrongMethod') {
		return { kind: 'answer', answer: errorAnswer(route.error), rejectReason: route.error.message };
	}

	const params = parseParams(entry.contentType, body);
	if (!(params instanceof ApiError)) entry.params = summarize(params) as Record<string, unknown>;
	const bearerToken = bearerTokenOf(entry.authorization);

	const fired = core.faults.pick({
		path: entry.path,
		method: entry.method,
		rpcMethod: rpcMethodOf(params),
	});
	if (fired) entry.fault = fired.kind;
	if (fired && !faultProcessesRequest(fired.kind))
		return answerForFault(core, fired, bearerToken, params);

	const outcome = await processOperation(core, route.candidates, params, bearerToken, fired);
	if (fired?.refusedFirst) delete entry.fault;
	if (fired?.kind === 'dropAfterProcessing') return { kind: 'drop' };
	// The caller drops the answer if the client gave up while we waited.
	if (fired?.kind === 'slow') await core.delays.wait(fired.rule.delayMs ?? DEFAULT_SLOW_MS);
	if (fired?.kind === 'trickle' && outcome.kind === 'answer')
		return { ...outcome, trickleMs: fired.rule.delayMs ?? 250 };
	return outcome;
}

function newLogEntry(core: Core, req: HttpRequest, path: string, body: Buffer): RequestLogEntry {
	const entry: RequestLogEntry = {
		seq: core.state.takeSeq(),
		receivedAt: Date.now(),
		method: req.method ?? 'GET',
		path,
		bodyBytes: body.length,
		status: 0,
	};
	if (req.headers['content-type'] !== undefined) entry.contentType = req.headers['content-type'];
	if (req.headers['content-length'] !== undefined)
		entry.contentLength = Number(req.headers['content-length']);
	if (req.headers.authorization !== undefined) entry.authorization = req.headers.authorization;
	const sessionCookie = cookieValue(req.headers.cookie, 'session_id');
	if (sessionCookie !== undefined) entry.sessionCookie = sessionCookie;
	return entry;
}

/** A request without a session this sandbox knows gets one, like Odoo does. */
function sessionHeaders(core: Core, sessionCookie: string | undefined): Record<string, string> {
	if (core.state.isKnownSession(sessionCookie)) return {};
	return { 'Set-Cookie': `session_id=${core.state.newSession()}; Path=/; HttpOnly` };
}

async function handleApiRequest(
	core: Core,
	req: HttpRequest,
	res: ServerResponse,
	body: Buffer,
): Promise<void> {
	const entry = newLogEntry(core, req, pathnameOf(req.url), body);
	core.state.countRequest(entry.path);
	let outcome: Outcome;
	try {
		outcome = await decideOutcome(core, entry, body);
	} catch (error) {
		// A bug in the sandbox itself: answer like Odoo does for an uncaught exception.
		const message = error instanceof Error ? error.message : String(error);
		outcome = { kind: 'answer', answer: errorAnswer(serverError('builtins.Exception', message)) };
	}

	if (outcome.kind === 'huge' && !clientHasGone(req, res)) {
		entry.status = 200;
		await writeHugeAnswer(res, outcome.bytes, outcome.chunked);
	} else if (outcome.kind === 'answer' && !clientHasGone(req, res)) {
		if (outcome.trickleMs !== undefined)
			await trickleAnswer(core, req, res, outcome.answer, outcome.trickleMs);
		else writeAnswer(res, outcome.answer, sessionHeaders(core, entry.sessionCookie));
		entry.status = outcome.answer.status;
		if (outcome.rejectReason !== undefined) {
			entry.rejected = true;
			entry.rejectReason = outcome.rejectReason;
		}
	} else {
		req.socket.destroy();
	}
	if (core.options.logRequests) core.state.requestLog.push(entry);
}

// ---------------------------------------------------------------------------------------------
// Who may call

const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]'];

/** The names the sandbox answers to: loopback, the host it listens on, and those it was told. */
function servedHosts(options: ResolvedOptions): string[] {
	const named = [options.host, ...(options.allowedHosts ?? [])].map((host) =>
		(host.includes(':') && !host.startsWith('[') ? `[${host}]` : host).toLowerCase(),
	);
	return [...new Set([...LOOPBACK_HOSTS, ...named])];
}

/**
 * A page whose own name was made to point at 127.0.0.1 (DNS rebinding) may read the answers,
 * and its name is in the Host header: every other name is refused, so it reads no secret.
 */
function refusedHost(header: string | undefined, served: string[]): Answer | undefined {
	const name = /^(\[[0-9a-f:.]{2,45}\]|[a-z0-9.-]{1,253})(?::\d{1,5})?$/i
		.exec(header ?? '')?.[1]
		.toLowerCase();
	if (name !== undefined && served.includes(name)) return undefined;
	const asked =
		header === undefined ? 'A request without a Host header' : `Host "${header.slice(0, 100)}"`;
	const list = `${served.slice(0, -1).join(', ')} and ${served.at(-1)}`;
	return jsonAnswer(421, {
		error: `${asked} is not served: this sandbox answers ${list} (any port); start it with --allow-host ${name ?? 'NAME'} (option allowedHosts) to reach it by that name`,
		hosts: served,
	});
}

// ---------------------------------------------------------------------------------------------
// The server

function listen(server: http.Server, port: number, host: string): Promise<number> {
	return new Promise((resolve, reject) => {
		server.once('error', reject);
		server.listen(port, host, () => {
			server.off('error', reject);
			resolve((server.address() as AddressInfo).port);
		});
	});
}

function trackSockets(server: http.Server, connections: { peak: number }): Set<Socket> {
	const sockets = new Set<Socket>();
	server.on('connection', (socket) => {
		sockets.add(socket);
		connections.peak = Math.max(connections.peak, sockets.size);
		socket.on('close', () => sockets.delete(socket));
	});
	return sockets;
}

function configureTimeouts(server: http.Server): void {
	// Clients keep pooled connections; big uploads may take long, so no overall request timeout.
	server.keepAliveTimeout = 30_000;
	server.headersTimeout = 60_000;
	server.requestTimeout = 0;
}

export async function startSandbox(options?: SandboxOptions): Promise<Sandbox> {
	const resolved = resolveOptions(options);
	const core: Core = {
		state: new SandboxState(resolved.accounts, resolved.tokenTtlMs, options?.now),
		faults: new FaultEngine(),
		options: resolved,
		delays: new Delays(),
	};
	const connections = { peak: 0, requests: 0, peakRequests: 0 };
	// Own connection pool for webhook posts, so close() leaves nothing open.
	const webhookAgent = new Agent({ keepAliveTimeout: 1000 });
	const files = new FileServer();

	const sandbox: Sandbox = {
		url: '',
		port: 0,
		options: resolved,
		ledger: () => [...core.state.ledger],
		requests: () => [...core.state.requestLog],
		stats: () => ({
			...core.state.stats(),
			peakConnections: connections.peak,
			peakRequests: connections.peakRequests,
		}),
		accounts: () => core.state.publicAccounts(),
		addFaults: (rules) => core.faults.add(rules),
		clearFaults: () => core.faults.clear(),
		expireTokens: () => core.state.revokeAllTokens(),
		moveRate: (move) => moveRate(core.state.rateMoves, move),
		scan: (clientId) => {
			core.state.accountOrFirst(clientId).status = 'authenticated';
		},
		setWebhook: (clientId, url) => {
			core.state.accountOrFirst(clientId).whatsappWebhook = url;
		},
		logout: (clientId, options) => {
			const account = core.state.accountOrFirst(clientId);
			account.status = options?.showQr ? 'got qr code' : 'init';
			account.qrPayload = options?.showQr ? newQrPayload() : undefined;
		},
		newQr: (clientId) => {
			const account = core.state.accountOrFirst(clientId);
			if (account.status === 'authenticated')
				throw new Error(`Account ${account.clientId} is connected: log it out first`);
			account.status = 'got qr code';
			account.qrPayload = newQrPayload();
			return account.qrPayload;
		},
		deliverIncoming: async (msg: IncomingMessage) => {
			const account = core.state.accountOrFirst(msg.clientId);
			const event = { ...msg, uuid: msg.uuid ?? randomUUID() };
			const isText =
				msg.rawBody === undefined && msg.fileBase64 === undefined && msg.filename === undefined;
			const entry: InboxEntry = {
				clientId: account.clientId,
				sender: msg.sender ?? DEFAULT_SENDER,
				text: isText
					? (msg.message ?? DEFAULT_TEXT)
					: (msg.message ?? (msg.filename ? `(file ${msg.filename})` : '')),
				at: new Date(core.state.now()).toISOString(),
				...(isText ? { uuid: event.uuid } : {}),
			};
			// Kept for the phone page only: the newest few hundred are enough to read a chat.
			core.state.inbox = [...core.state.inbox.slice(-499), entry];
			if (!account.whatsappWebhook) entry.problem = NO_WEBHOOK;
			try {
				const result = await deliverIncoming(
					account,
					event,
					resolved.flatWebhookPayload,
					webhookAgent,
				);
				entry.status = result.status;
				const ignored = ignoredReason(result.body);
				if (ignored) entry.ignored = ignored;
				// n8n answers 404 (or 410) for a webhook that no longer listens.
				if (result.status === 404 || result.status === 410)
					entry.problem = listeningStopped(result.status);
				else if (result.status >= 300) entry.problem = `the webhook answered ${result.status}`;
				return result;
			} catch (error) {
				entry.problem ??= error instanceof Error ? error.message : String(error);
				throw error;
			}
		},
		inbox: () => [...core.state.inbox],
		fileRequests: () => files.requests(),
		usage: (clientId) =>
			core.state.usageOf(core.state.accountOrFirst(clientId).clientId, resolved.blockLimit),
		setUsage: (settings) => core.state.setUsage(settings),
		reset: () => {
			connections.peak = sockets.size;
			connections.peakRequests = connections.requests;
			core.state.reset();
			core.faults.clear();
			files.reset();
		},
		close: () => closeServer(),
	};

	const served = servedHosts(resolved);
	const server = http.createServer((req, res) => {
		const misdirected = refusedHost(req.headers.host, served);
		if (misdirected) {
			writeAnswer(res, misdirected, {});
			return;
		}
		readBody(req)
			.then((body) => {
				const path = pathnameOf(req.url);
				if (path.startsWith(FILES_PREFIX))
					return files.handle(req, res, new URL(req.url ?? '/', 'http://sandbox'));
				if (path.startsWith(CONTROL_PREFIX)) {
					return handleControl(sandbox, req.method ?? 'GET', path, req.headers, body).then(
						(answer) => writeAnswer(res, answer, {}),
					);
				}
				connections.requests++;
				connections.peakRequests = Math.max(connections.peakRequests, connections.requests);
				return handleApiRequest(core, req, res, body).finally(() => connections.requests--);
			})
			.catch(() => req.socket.destroy());
	});
	configureTimeouts(server);
	const sockets = trackSockets(server, connections);

	async function closeServer(): Promise<void> {
		core.delays.cancelAll();
		files.close();
		const closed = new Promise<void>((resolve) => server.close(() => resolve()));
		for (const socket of sockets) socket.destroy();
		await Promise.all([closed, webhookAgent.destroy()]);
	}

	sandbox.port = await listen(server, resolved.port, resolved.host);
	const hostInUrl = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;
	sandbox.url = `http://${hostInUrl}:${sandbox.port}`;
	return sandbox;
}
