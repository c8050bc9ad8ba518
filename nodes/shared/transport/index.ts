import { createHash } from 'crypto';
import type { buildConnector, Dispatcher } from 'undici';

import { abortReason, clock } from '../clock';
import { environment } from '../store';
import { TokenCache, tokenExpiry, type ApiCredentials, type Token } from './credentials';
import {
	buildBody,
	callerParams,
	isSourceFailure,
	tokenEndpoint,
	type ApiGroup,
	type Endpoint,
	type ParamValue,
	type RequestBody,
} from './endpoints';
import {
	ApiError,
	parseEnvelope,
	Redactor,
	statusAnswer,
	writeRetried,
	type Answer,
} from './envelope';

export * from './credentials';
export * from './endpoints';
export * from './envelope';

// A read is retried on any transient failure; a write only when the answer shows the server did
// not act on it (WRITE_ANSWERS): undici never handed it to a socket, or the server said 429.
export const DEFAULT_RETRY_POLICY = {
	maxRetries: 3,
	baseDelayMs: 300,
	maxDelayMs: 5_000,
	// A Retry-After longer than this is not waited for: the call fails and says so.
	maxRetryAfterSeconds: 60,
};

export type RetryPolicy = Readonly<typeof DEFAULT_RETRY_POLICY>;

const READ_RETRY_STATUSES = new Set([429, 502, 503, 504]);

/** Half to all of an exponential ceiling, so that many callers failing together spread out. */
function retryDelayMs(retry: number, policy: RetryPolicy, retryAfterSeconds?: number): number {
	if (retryAfterSeconds !== undefined) return retryAfterSeconds * 1000;
	const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
	return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

function parseRetryAfter(value: string | undefined): number | undefined {
	if (!value) return undefined;
	const seconds = Number(value);
	if (Number.isFinite(seconds) && seconds >= 0) return seconds;
	const date = Date.parse(value);
	return Number.isFinite(date) ? Math.max(0, (date - Date.now()) / 1000) : undefined;
}

/** A slow uplink's pace: the limit bounds uploads without failing honest ones. */
const UPLOAD_ALLOWANCE_MS_PER_MIB = 1000;
const MIB = 1024 * 1024;
const TIMEOUT_CODES = new Set([
	'UND_ERR_HEADERS_TIMEOUT',
	'UND_ERR_BODY_TIMEOUT',
	'UND_ERR_CONNECT_TIMEOUT',
]);

const TIMED_OUT = new Error('aborted: no complete answer within Request Timeout');

/** An attempt that ended without an answer, and whether its request may have left. */
class NoAnswer {
	constructor(
		readonly cause: unknown,
		readonly sent: boolean,
		readonly timedOut: boolean,
	) {}
}

export const sharedTokenCache = new TokenCache();
const sessionCookies = new Map<string, string>();

export class ApiClient {
	private readonly credentialKey: string;
	private lastRedactor: { key: string; generation: number; redactor: Redactor } | undefined;
	/** Looked up once: the proxy variables are read once per run's client, not per request. */
	private dispatcher: Dispatcher | undefined;
	private readonly targets = new Map<string, URL>();

	constructor(
		private readonly credentials: ApiCredentials,
		private readonly tokens: TokenCache = sharedTokenCache,
		private readonly retryPolicy: RetryPolicy = DEFAULT_RETRY_POLICY,
	) {
		const secretHash = createHash('sha256').update(credentials.clientSecret).digest('hex');
		this.credentialKey = `${credentials.baseUrl}|${credentials.clientId}|${secretHash.slice(0, 16)}`;
	}

	async call(
		endpoint: Endpoint,
		params: Record<string, ParamValue> = {},
		{ signal }: { signal?: AbortSignal } = {},
	): Promise<unknown> {
		const body = buildBody(this.fullParams(endpoint, params));
		if (!endpoint.bearer) return await this.send(endpoint, body, undefined, signal);
		const token = await this.token(endpoint.group, { signal });
		return await this.send(endpoint, body, token, signal).catch(async (error: unknown) => {
			if (!(error instanceof ApiError && error.authFailure)) throw error;
			// The token expired or was revoked: one new token, one more try, never more.
			this.tokens.invalidate(this.tokenKey(endpoint.group), token);
			return await this.send(endpoint, body, await this.token(endpoint.group, { signal }), signal);
		});
	}

	async token(group: ApiGroup, { signal }: { signal?: AbortSignal } = {}): Promise<Token> {
		const fetchToken = async () => await this.fetchToken(group, signal);
		return await this.tokens.get(this.tokenKey(group), fetchToken);
	}

	async renewToken(
		group: ApiGroup,
		{ signal }: { signal?: AbortSignal } = {},
	): Promise<{ token: Token; answer: unknown }> {
		this.tokens.invalidate(this.tokenKey(group));
		let answer: unknown;
		const token = await this.tokens.get(this.tokenKey(group), async () => {
			const fetched = await this.fetchToken(group, signal);
			answer = fetched.answer;
			return fetched;
		});
		return { token, answer: answer ?? {} };
	}

	redact<T>(value: T): T {
		return this.redactor().value(value);
	}

	private async fetchToken(
		group: ApiGroup,
		signal?: AbortSignal,
	): Promise<Token & { answer: unknown }> {
		const endpoint = tokenEndpoint[group];
		const body = buildBody(this.fullParams(endpoint, {}));
		const raw = await this.send(endpoint, body, undefined, signal, false);
		const fields: Record<string, unknown> = raw && typeof raw === 'object' ? { ...raw } : {};
		const { token: value, ...answer } = fields;
		if (typeof value !== 'string' || value === '') {
			const said = JSON.stringify(this.redact({ token: value, ...answer }));
			const serverMessage = said.length > 300 ? `${said.slice(0, 300)}…` : said;
			const reason = 'the answer holds no token';
			throw new ApiError(endpoint, { kind: 'unexpected-answer', reason, serverMessage });
		}
		const fallbackMs = this.credentials.tokenLifetimeMinutes * 60_000;
		return { value, expiresAt: tokenExpiry(answer, Date.now(), fallbackMs), answer };
	}

	private tokenKey(group: ApiGroup): string {
		return `${this.credentialKey}|${group}`;
	}

	private fullParams(
		endpoint: Endpoint,
		params: Record<string, ParamValue>,
	): Record<string, ParamValue> {
		const expected = callerParams(endpoint);
		const unexpected = Object.keys(params).filter((name) => !expected.includes(name));
		const missing = expected.filter((name) => params[name] === undefined);
		if (unexpected.length || missing.length) {
			// A programming error in an operation, never a user's: say exactly what is wrong.
			throw new ApiError(endpoint, {
				kind: 'invalid-request',
				reason: `params do not match the spec (missing: ${missing.join(', ') || 'none'}; unexpected: ${unexpected.join(', ') || 'none'})`,
			});
		}
		const { clientId, clientSecret } = this.credentials;
		const own: Record<string, string> = { client_id: clientId, client_secret: clientSecret };
		return Object.fromEntries(
			endpoint.params.map((name) => [name, own[name] ?? endpoint.fixed?.[name] ?? params[name]]),
		);
	}

	/** This credential's secret and tokens (cached and just retired); rebuilt only when they change. */
	private redactor(): Redactor {
		const generation = this.tokens.generation;
		if (this.lastRedactor?.generation === generation) return this.lastRedactor.redactor;
		const secrets = [
			this.credentials.clientSecret,
			...this.tokens.values(`${this.credentialKey}|`),
		];
		const key = secrets.join('\u0000');
		const redactor =
			this.lastRedactor?.key === key ? this.lastRedactor.redactor : new Redactor(secrets);
		this.lastRedactor = { key, generation, redactor };
		return redactor;
	}

	private async send(
		endpoint: Endpoint,
		body: RequestBody,
		token: Token | undefined,
		signal: AbortSignal | undefined,
		redactResult = true,
	): Promise<unknown> {
		const isWrite = endpoint.httpMethod === 'POST';
		const policy = this.retryPolicy;
		for (let attempt = 1; ; attempt++) {
			const mayRetry = attempt <= policy.maxRetries;
			let delayMs: number;
			try {
				const answer = await this.attempt(endpoint, body, token, signal);
				const retryAfter = answer.retryAfterSeconds;
				const retried = isWrite
					? writeRetried(statusAnswer(answer.status))
					: READ_RETRY_STATUSES.has(answer.status);
				if (!mayRetry || !retried || (retryAfter ?? 0) > policy.maxRetryAfterSeconds) {
					const result = parseEnvelope(endpoint, answer, this.redactor());
					return redactResult ? this.redact(result) : result;
				}
				delayMs = retryDelayMs(attempt - 1, policy, retryAfter);
			} catch (failure) {
				if (failure instanceof NoAnswer && isSourceFailure(failure.cause)) throw failure.cause;
				const error =
					failure instanceof NoAnswer ? this.noAnswerError(endpoint, failure, signal) : failure;
				if (error instanceof ApiError) error.attempts = attempt;
				const retried =
					failure instanceof NoAnswer &&
					mayRetry &&
					!signal?.aborted &&
					(!isWrite || writeRetried(failure.sent ? 'lost' : 'notWritten'));
				if (!retried) throw error;
				delayMs = retryDelayMs(attempt - 1, policy);
			}
			await clock.sleep(delayMs, signal).catch(() => undefined);
		}
	}

	// undici honours an abort only once the request has a socket, which a failing proxy may never
	// give: one signal, for n8n's cancel and Request Timeout, both aborts it and ends the race.
	private async attempt(
		endpoint: Endpoint,
		body: RequestBody,
		token: Token | undefined,
		signal: AbortSignal | undefined,
	): Promise<Answer> {
		const timeoutMs = this.credentials.timeoutSeconds * 1000;
		// A body of unknown length (a download sent as it arrives) gets the allowance of its size cap.
		const uploadMiB = (body.maxLength ?? 0) / MIB;
		const limitMs = timeoutMs + (uploadMiB > 1 ? uploadMiB * UPLOAD_ALLOWANCE_MS_PER_MIB : 0);
		const stop = new Stop();
		const cancel = () => stop.abort(signal ? abortReason(signal) : TIMED_OUT);
		signal?.addEventListener('abort', cancel);
		if (signal?.aborted) cancel();
		const endLimit = clock.limit(limitMs, () => stop.abort(TIMED_OUT));
		let sent = false;
		const request = this.exchange(endpoint, body, token, limitMs, stop, () => (sent = true));
		try {
			return await new Promise<Answer>((resolve, reject) => {
				stop.addEventListener('abort', () => reject(stop.reason));
				if (stop.aborted) reject(stop.reason);
				request.then(resolve, reject);
			});
		} catch (cause) {
			throw cause instanceof ApiError
				? cause
				: new NoAnswer(cause, sent, stop.reason === TIMED_OUT);
		} finally {
			endLimit();
			signal?.removeEventListener('abort', cancel);
		}
	}

	private async exchange(
		endpoint: Endpoint,
		body: RequestBody,
		token: Token | undefined,
		limitMs: number,
		stop: Stop,
		onSent: () => void,
	): Promise<Answer> {
		const headers: Record<string, string> = {
			'content-type': 'application/json',
			'accept': 'application/json',
		};
		if (body.length !== undefined) headers['content-length'] = String(body.length);
		if (token) headers.authorization = `Bearer ${token.value}`;
		const session = sessionCookies.get(this.credentialKey);
		if (session) headers.cookie = `session_id=${session}`;
		const { allowUnauthorizedCerts, timeoutSeconds, baseUrl } = this.credentials;
		const connectTimeoutMs = Math.min(timeoutSeconds * 1000, 10_000);
		this.dispatcher ??= dispatcherFor(allowUnauthorizedCerts, connectTimeoutMs);
		let url = this.targets.get(endpoint.path);
		if (!url) this.targets.set(endpoint.path, (url = new URL(`${baseUrl}${endpoint.path}`)));
		const options: Dispatcher.RequestOptions & { onSent?: () => void } = {
			origin: url.origin,
			path: `${url.pathname}${url.search}`,
			method: endpoint.httpMethod,
			headers,
			// undici writes an async iterable body too (its type list omits it).
			body: (body.buffer ?? body.chunks()) as Buffer,
			// undici closes a connection after a GET with a body; this server reads them.
			reset: false,
			headersTimeout: limitMs,
			bodyTimeout: limitMs,
			signal: stop as unknown as AbortSignal,
			onSent: endpoint.httpMethod === 'POST' ? onSent : undefined,
		};
		const response = await this.dispatcher.request(options);
		const { statusCode: status, headers: said } = response;
		const first = (value: string | string[] | undefined) =>
			Array.isArray(value) ? value[0] : value;
		if (said['set-cookie']) this.keepSessionCookie([said['set-cookie']].flat());
		return {
			status,
			text: await this.readAnswer(endpoint, response.body, Number(first(said['content-length']))),
			retryAfterSeconds: parseRetryAfter(first(said['retry-after'])),
			location: first(said.location),
		};
	}

	private async readAnswer(
		endpoint: Endpoint,
		body: AsyncIterable<Buffer> & { destroy(): void; text(): Promise<string> },
		contentLength: number,
	): Promise<string> {
		const maxBytes = this.credentials.maxResponseMegabytes * MIB;
		// undici reads no more than a Content-Length says.
		if (contentLength <= maxBytes) return await body.text();
		if (!(contentLength > maxBytes)) {
			const chunks: Buffer[] = [];
			let size = 0;
			for await (const chunk of body) {
				if ((size += chunk.length) > maxBytes) break;
				chunks.push(chunk);
			}
			if (size <= maxBytes) return Buffer.concat(chunks, size).toString('utf8');
		}
		body.destroy();
		const reason = `the answer is larger than ${this.credentials.maxResponseMegabytes} MB, the credential's "Max Response Size (MB)"; it was not read`;
		throw new ApiError(endpoint, { kind: 'invalid-response', reason, answer: 'tooLarge' });
	}

	/** The service may set a `session_id` cookie; later requests of this credential send it back. */
	private keepSessionCookie(lines: string[]): void {
		for (const line of lines) {
			const match = /(?:^|;\s*)session_id=([^;]*)/.exec(line);
			if (match) sessionCookies.set(this.credentialKey, match[1]);
		}
	}

	private noAnswerError(endpoint: Endpoint, failure: NoAnswer, signal?: AbortSignal): ApiError {
		const err = (failure.cause ?? {}) as Partial<NodeJS.ErrnoException>;
		const code = err.code ?? (err.cause as { code?: string } | undefined)?.code;
		// Sent (even in part) and then no answer: the server may have processed it.
		const answer = failure.sent ? 'lost' : 'notWritten';
		if (signal?.aborted) {
			const reason = 'the execution was cancelled';
			return new ApiError(endpoint, { kind: 'aborted', reason, answer });
		}
		const seconds = this.credentials.timeoutSeconds;
		if (failure.timedOut) {
			const reason = `no complete answer within ${seconds} s (Request Timeout)`;
			return new ApiError(endpoint, { kind: 'timeout', reason, answer });
		}
		if (code && TIMEOUT_CODES.has(code)) {
			const reason = `no answer within ${seconds} s (${code})`;
			return new ApiError(endpoint, { kind: 'timeout', reason, causeCode: code, answer });
		}
		const detail = err.message ? `: ${this.redactor().text(err.message).slice(0, 300)}` : '';
		const reason = `the connection failed (${code ?? err.name ?? 'unknown error'}${detail})`;
		return new ApiError(endpoint, { kind: 'network', reason, causeCode: code, answer });
	}
}

// Lighter than an AbortController per attempt (CONTRIBUTING: Facts); undici takes it as a signal.
class Stop {
	reason: unknown;
	private listeners: Array<() => void> = [];

	get aborted(): boolean {
		return this.reason !== undefined;
	}

	addEventListener(_type: 'abort', listener: () => void): void {
		this.listeners.push(listener);
	}

	removeEventListener(_type: 'abort', listener: () => void): void {
		this.listeners = this.listeners.filter((known) => known !== listener);
	}

	abort(reason: unknown): void {
		if (this.reason !== undefined) return;
		this.reason = reason;
		for (const listener of this.listeners) listener();
	}
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use: start-up (CONTRIBUTING)
const undici = () => require('undici') as typeof import('undici');

// One dispatcher per TLS setting and proxy environment, shared by the process, so the cap on
// sockets per origin holds whatever the parallelism.
const MAX_CONNECTIONS_PER_ORIGIN = 64;
const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'];

const dispatchers = new Map<string, Dispatcher>();

function dispatcherFor(allowUnauthorizedCerts: boolean, connectTimeoutMs: number): Dispatcher {
	const env = environment();
	const proxied = PROXY_VARIABLES.some((name) => env[name]);
	const proxies = [...PROXY_VARIABLES, 'NO_PROXY', 'no_proxy'].map((name) => env[name] ?? '');
	const key = `${allowUnauthorizedCerts}|${connectTimeoutMs}|${proxies.join('\n')}`;
	let found = dispatchers.get(key);
	if (!found) {
		const tls = { rejectUnauthorized: !allowUnauthorizedCerts };
		const options = {
			keepAliveTimeout: 10_000,
			keepAliveMaxTimeout: 60_000,
			connections: MAX_CONNECTIONS_PER_ORIGIN,
			connect: { ...tls, timeout: connectTimeoutMs },
		};
		// Through a proxy the connection to the service is TLS inside the tunnel: same rule for it.
		const agent = proxied
			? new (undici().EnvHttpProxyAgent)({ ...options, requestTls: tls, factory: poolFailingFast })
			: new (undici().Agent)(options);
		found = tellingSent(agent);
		dispatchers.set(key, found);
	}
	return found;
}

// undici reconnects at once, forever, after a socket error while a request waits (a proxy closing
// every tunnel): tunnel errors get another code, so requests fail and the retry rules decide.
function poolFailingFast(origin: string | URL, options: object): Dispatcher {
	const connect = (options as { connect?: unknown }).connect;
	if (typeof connect !== 'function') return new (undici().Pool)(origin, options);
	const tunnel = connect as buildConnector.connector;
	return new (undici().Pool)(origin, {
		...options,
		connect: (settings: buildConnector.Options, callback: buildConnector.Callback) =>
			tunnel(settings, (...args) => {
				const [error] = args;
				if (!error) return callback(...args);
				const code = (error as { code?: string }).code;
				const retried = code === 'UND_ERR_SOCKET' || code === 'UND_ERR_INFO';
				callback(
					Object.assign(new Error(`through the proxy (HTTP(S)_PROXY): ${error.message}`), {
						code: retried ? 'PROXY_CONNECTION_CLOSED' : code,
						cause: error,
					}),
					null,
				);
			}),
	});
}

// `onSent` runs when undici binds the request to a socket (`onConnect`), before a byte is written:
// error codes cannot tell if a request left, so a write's retry rests on this (CONTRIBUTING: Facts).
function tellingSent(dispatcher: Dispatcher): Dispatcher {
	const dispatch: Dispatcher['dispatch'] = (options, handler) => {
		const onSent = (options as { onSent?: () => void }).onSent;
		const onConnect = onSent && handler.onConnect?.bind(handler);
		if (onConnect) {
			handler.onConnect = (abort) => {
				onSent();
				onConnect(abort);
			};
		} else onSent?.(); // a handler without `onConnect`: taken as sent, so never sent twice
		return dispatcher.dispatch(options, handler);
	};
	return Object.create(dispatcher, { dispatch: { value: dispatch } }) as Dispatcher;
}
