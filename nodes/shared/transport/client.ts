import { createHash } from 'crypto';
import type { Dispatcher } from 'undici';

import { abortReason, clock } from '../clock';
import { buildBody, isSourceFailure, type ParamValue, type RequestBody } from './body';
import { callerParams, tokenEndpoint, type ApiGroup, type Endpoint } from './endpoints';
import { parseEnvelope } from './envelope';
import { poolFor, poolGeneration } from './connections';
import { ApiError } from './errors';
import { Redactor } from './redact';
import {
	DEFAULT_RETRY_POLICY,
	isRetryableNetworkError,
	isRetryableStatus,
	isTimeoutCode,
	parseRetryAfter,
	retryDelayMs,
	type RetryPolicy,
} from './retry';
import { TokenCache, tokenExpiry, type Token } from './tokenCache';

/** What the transport needs from the credential, already validated by `parseCredentials`. */
export interface ApiCredentials {
	/** http(s) origin plus optional path prefix, without a trailing slash. */
	readonly baseUrl: string;
	readonly clientId: string;
	readonly clientSecret: string;
	/** Used when a token answer states no expiry (the real service states none). */
	readonly tokenLifetimeMinutes: number;
	/** Bounds each attempt as a whole: connecting, sending, waiting, and reading the answer to its last byte. */
	readonly timeoutSeconds: number;
	readonly allowUnauthorizedCerts: boolean;
	/** Answers larger than this are not read (the connection is closed) and fail the call. */
	readonly maxResponseMegabytes: number;
}

/** The credential's "Max Response Size (MB)" when it has none (answers of this API are a few KB). */
export const DEFAULT_MAX_RESPONSE_MEGABYTES = 16;

/**
 * A file upload gets this much more time per MiB of body on top of Request Timeout (1 s per MiB:
 * a 50 MB file over a slow 8 Mbit/s uplink), so the deadline bounds the whole request without
 * failing honest large sends.
 */
const UPLOAD_ALLOWANCE_MS_PER_MIB = 1000;

/** What one attempt got back. */
interface AttemptAnswer {
	status: number;
	text: string;
	retryAfter?: number;
	location?: string;
}

/** Why one attempt got no answer, with what is known about whether it left. */
class AttemptFailure extends Error {
	constructor(
		readonly cause: unknown,
		readonly dispatched: boolean,
		readonly deadline: boolean,
	) {
		super('attempt failed');
	}
}

export interface CallOptions {
	/** n8n's execution-cancel signal: stops waiting and stops retrying. */
	readonly signal?: AbortSignal;
}

/** Process-wide state: every node, item and execution in this process shares it. */
export const sharedTokenCache = new TokenCache();
const sessionCookies = new Map<string, string>();

export class ApiClient {
	/** Identifies the credential without holding its secret. */
	private readonly credentialKey: string;

	constructor(
		private readonly credentials: ApiCredentials,
		private readonly tokens: TokenCache = sharedTokenCache,
		private readonly retryPolicy: RetryPolicy = DEFAULT_RETRY_POLICY,
	) {
		const secretHash = createHash('sha256')
			.update(credentials.clientSecret)
			.digest('hex')
			.slice(0, 16);
		this.credentialKey = `${credentials.baseUrl}|${credentials.clientId}|${secretHash}`;
	}

	/**
	 * Calls one endpoint and returns its JSON-RPC `result`, with the secret and tokens redacted.
	 * `params` holds the caller's fields only; credential and fixed fields are added here.
	 */
	async call(
		endpoint: Endpoint,
		params: Record<string, ParamValue> = {},
		options: CallOptions = {},
	): Promise<unknown> {
		const body = buildBody(this.fullParams(endpoint, params));
		if (!endpoint.bearer) return await this.send(endpoint, body, undefined, options);

		const token = await this.token(endpoint.group, options);
		// Errors pass on as ApiError: the transport knows no n8n node, toNodeError (errors.ts) converts them.
		return await this.send(endpoint, body, token, options).catch(async (error: unknown) => {
			if (!(error instanceof ApiError && error.authFailure)) throw error;
			// The token expired or was revoked: one new token, one more try, never more.
			this.tokens.invalidate(this.tokenKey(endpoint.group), token);
			const fresh = await this.token(endpoint.group, options);
			return await this.send(endpoint, body, fresh, options);
		});
	}

	/** The cached token of a group, fetching one if needed (shared with concurrent callers). */
	async token(group: ApiGroup, options: CallOptions = {}): Promise<Token> {
		return await this.tokens.get(
			this.tokenKey(group),
			async () => await this.fetchToken(group, options),
		);
	}

	/** Drops the cached token and fetches a new one (the "Get Token" operations). */
	async renewToken(
		group: ApiGroup,
		options: CallOptions = {},
	): Promise<{ token: Token; answer: unknown }> {
		this.tokens.invalidate(this.tokenKey(group));
		let answer: unknown;
		const token = await this.tokens.get(this.tokenKey(group), async () => {
			const fetched = await this.fetchToken(group, options);
			answer = fetched.answer;
			return fetched;
		});
		return { token, answer: answer ?? {} };
	}

	private async fetchToken(
		group: ApiGroup,
		options: CallOptions,
	): Promise<Token & { answer: unknown }> {
		const endpoint = tokenEndpoint[group];
		const raw = await this.send(
			endpoint,
			buildBody(this.fullParams(endpoint, {})),
			undefined,
			options,
			false,
		);
		const answer = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
		const value = answer.token;
		if (typeof value !== 'string' || value === '') {
			const said = JSON.stringify(this.redactor().value(answer));
			throw new ApiError(endpoint, {
				kind: 'unexpected-answer',
				reason: 'the answer holds no token',
				serverMessage: said.length > 300 ? `${said.slice(0, 300)}…` : said,
			});
		}
		const expiresAt = tokenExpiry(
			answer,
			Date.now(),
			this.credentials.tokenLifetimeMinutes * 60_000,
		);
		const { token: _token, ...rest } = answer;
		return { value, expiresAt, answer: rest };
	}

	private tokenKey(group: ApiGroup): string {
		return `${this.credentialKey}|${group}`;
	}

	/** The spec's params for this endpoint: exactly its listed fields, in its order. */
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
		const full: Record<string, ParamValue> = {};
		for (const name of endpoint.params) {
			if (name === 'client_id') full[name] = this.credentials.clientId;
			else if (name === 'client_secret') full[name] = this.credentials.clientSecret;
			else full[name] = endpoint.fixed?.[name] ?? params[name];
		}
		return full;
	}

	/**
	 * A value with every secret known to the process redacted, by value in every form redact.ts
	 * lists and by key (token, refresh_token, client_secret, …): what any answer shown to the user
	 * goes through.
	 */
	redact<T>(value: T): T {
		return this.redactor().value(value);
	}

	/**
	 * The secrets known now: the client secret, the cached tokens and the ones just retired. Their
	 * forms are built again only when the set changes, not for every answer;
	 * the set is not even listed again while no token was added (the cache's `generation`).
	 */
	private redactor(): Redactor {
		const generation = this.tokens.generation;
		if (this.lastRedactor?.generation === generation) return this.lastRedactor.redactor;
		// This credential's tokens (cached and just retired), not every credential's the process saw.
		const secrets = [
			this.credentials.clientSecret,
			...this.tokens.values(`${this.credentialKey}|`),
		];
		const key = secrets.join('\u0000');
		this.lastRedactor =
			this.lastRedactor?.key === key
				? { ...this.lastRedactor, generation }
				: { key, generation, redactor: new Redactor(secrets) };
		return this.lastRedactor.redactor;
	}

	private lastRedactor: { key: string; generation: number; redactor: Redactor } | undefined;

	/** One logical request: attempts, retries as the policy allows, parses the answer. */
	private async send(
		endpoint: Endpoint,
		body: RequestBody,
		token: Token | undefined,
		options: CallOptions,
		redactResult = true,
	): Promise<unknown> {
		const isWrite = endpoint.httpMethod === 'POST';
		for (let attempt = 0; ; attempt++) {
			const canRetry = attempt < this.retryPolicy.maxRetries;
			const outcome = await this.attempt(endpoint, body, token, options.signal).then(
				(answer) => ({ answer }),
				(failure: unknown) => ({ failure }),
			);
			if ('failure' in outcome) {
				const { failure } = outcome;
				if (failure instanceof ApiError) {
					failure.attempts = attempt + 1;
					throw failure;
				}
				const { cause, dispatched, deadline } = failure as AttemptFailure;
				if (isSourceFailure(cause)) throw cause;
				const error = this.networkError(endpoint, cause, {
					isWrite,
					dispatched,
					deadline,
					signal: options.signal,
				});
				error.attempts = attempt + 1;
				if (error.kind === 'aborted' || !canRetry || !isRetryableNetworkError(isWrite, dispatched))
					throw error;
				await sleep(retryDelayMs(attempt, this.retryPolicy), options.signal);
				continue;
			}

			const response = outcome.answer;
			const retryAfter = response.retryAfter;
			if (
				canRetry &&
				isRetryableStatus(response.status, isWrite) &&
				(retryAfter === undefined || retryAfter <= this.retryPolicy.maxRetryAfterSeconds)
			) {
				await sleep(retryDelayMs(attempt, this.retryPolicy, retryAfter), options.signal);
				continue;
			}
			const redactor = this.redactor();
			return await Promise.resolve()
				.then(() => {
					const result = parseEnvelope(
						endpoint,
						response.status,
						response.text,
						redactor,
						retryAfter,
						response.location,
					);
					return redactResult ? redactor.value(result) : result;
				})
				.catch((error: unknown) => {
					if (error instanceof ApiError) error.attempts = attempt + 1;
					throw error;
				});
		}
	}

	/**
	 * One HTTP exchange, bounded as a whole by the credential's timeout (plus an allowance for
	 * a file upload): a server that trickles its answer a byte at a time is cut off at the
	 * deadline, not given a new timeout for every chunk. The answer is read up to the
	 * credential's size limit and no further.
	 *
	 * undici's `dispatch` with a handler of our own, not `request`: an answer of this API is a few
	 * KB of JSON, read whole, so `request`'s stream per answer, its async iterator and its abort
	 * signal bookkeeping were most of the transport's cost per request (CONTRIBUTING, "Where a
	 * send's time goes"). The handler's `onRequestStart` is undici's word that the request is
	 * about to be written on a connected socket: until then nothing of it has left this machine,
	 * whatever the error (refused, unreachable, DNS, a failed proxy tunnel, a connect timeout, a
	 * deadline while queued). That, not an error code, is what proves a write was never sent: the
	 * same codes (EHOSTUNREACH, ENETUNREACH, ECONNRESET) can come from a socket that already
	 * carried the request.
	 */
	private async attempt(
		endpoint: Endpoint,
		body: RequestBody,
		token: Token | undefined,
		signal: AbortSignal | undefined,
	): Promise<AttemptAnswer> {
		const headers: Record<string, string> = {
			'content-type': 'application/json',
			'accept': 'application/json',
		};
		if (body.length !== undefined) headers['content-length'] = String(body.length);
		if (token) headers.authorization = `Bearer ${token.value}`;
		const session = sessionCookies.get(this.credentialKey);
		if (session) headers.cookie = `session_id=${session}`;

		const timeoutMs = this.credentials.timeoutSeconds * 1000;
		// A body of unknown length (a file downloaded while it is sent) gets the allowance of its size cap.
		const uploadMiB = (body.length ?? body.maxLength ?? 0) / (1024 * 1024);
		const limitMs = timeoutMs + (uploadMiB > 1 ? uploadMiB * UPLOAD_ALLOWANCE_MS_PER_MIB : 0);
		const maxBytes = this.credentials.maxResponseMegabytes * 1024 * 1024;
		const target = this.target(endpoint);
		const pool = this.pool(timeoutMs);

		return await new Promise<AttemptAnswer>((resolve, reject) => {
			let controller: Dispatcher.DispatchController | undefined;
			/** Why the attempt was stopped (deadline, cancel, answer too large); undici is told once it has started. */
			let stopped: Error | undefined;
			let dispatched = false;
			let status = 0;
			let answerHeaders: Record<string, string | string[] | undefined> = {};
			const chunks: Buffer[] = [];
			let size = 0;

			const stop = (reason: Error) => {
				if (stopped) return;
				stopped = reason;
				// While the request waits for a socket there is nothing to abort yet: undici is told at
				// onRequestStart, before a byte is written (as its own `request` does with a signal).
				controller?.abort(reason);
			};
			let timedOut = false;
			const cancelLimit = clock.limit(limitMs, () => {
				timedOut = true;
				stop(new Error(`aborted: no complete answer within ${limitMs} ms (Request Timeout)`));
			});
			// The execution's cancel signal stops this attempt too (a listener removed afterwards rather
			// than AbortSignal.any, whose combined signals a long-lived signal keeps alive on Node 20).
			const cancel = () => {
				if (signal) stop(abortReason(signal));
			};
			signal?.addEventListener('abort', cancel, { once: true });
			if (signal?.aborted) cancel();
			const settle = () => {
				cancelLimit();
				signal?.removeEventListener('abort', cancel);
			};
			const fail = (cause: unknown) => {
				settle();
				// The transport knows no n8n node: toNodeError (errors.ts) converts what send() makes of this.
				reject(
					cause instanceof ApiError
						? cause
						: new AttemptFailure(cause, dispatched, timedOut && !signal?.aborted),
				);
			};
			const tooLarge = () =>
				new ApiError(endpoint, {
					kind: 'invalid-response',
					reason: `the answer is larger than ${this.credentials.maxResponseMegabytes} MB, the credential's "Max Response Size (MB)"; it was not read`,
					// A write was answered, so the server may well have done it: never sent again.
					deliveryUnknown: endpoint.httpMethod === 'POST',
				});

			const handler: Dispatcher.DispatchHandler = {
				onRequestStart: (started) => {
					controller = started;
					dispatched = true;
					if (stopped) started.abort(stopped);
				},
				onResponseStart: (_controller, statusCode, responseHeaders) => {
					status = statusCode;
					answerHeaders = responseHeaders;
					this.keepSessionCookie(responseHeaders['set-cookie']);
					if (Number(responseHeaders['content-length']) > maxBytes) stop(tooLarge());
				},
				onResponseData: (_controller, chunk) => {
					size += chunk.length;
					if (size > maxBytes) stop(tooLarge());
					else chunks.push(chunk);
				},
				onResponseEnd: () => {
					settle();
					const location = answerHeaders.location;
					resolve({
						status,
						text: Buffer.concat(chunks, size).toString('utf8'),
						retryAfter: parseRetryAfter(answerHeaders['retry-after']),
						location: Array.isArray(location) ? location[0] : location,
					});
				},
				onResponseError: (_controller, error) => fail(error),
			};
			try {
				pool.dispatch(
					{
						origin: target.origin,
						path: target.path,
						method: endpoint.httpMethod,
						headers,
						// undici also writes an async iterable body (its type list omits it), string by string.
						body: body.open() as Buffer,
						// undici closes the connection after any GET that carries a body (a guard for servers
						// that do not read one), and then opened a new TCP connection for every request of
						// this API. This server reads GET bodies (Content-Length is always set): keep it alive.
						reset: false,
						headersTimeout: timeoutMs,
						bodyTimeout: timeoutMs,
					},
					handler,
				);
			} catch (error) {
				fail(error);
			}
		});
	}

	/** Where an endpoint's requests go: the origin and the path (the base URL's prefix included), parsed once. */
	private target(endpoint: Endpoint): { origin: string; path: string } {
		let target = this.targets.get(endpoint.path);
		if (!target) {
			const url = new URL(`${this.credentials.baseUrl}${endpoint.path}`);
			target = { origin: url.origin, path: `${url.pathname}${url.search}` };
			this.targets.set(endpoint.path, target);
		}
		return target;
	}

	private readonly targets = new Map<string, { origin: string; path: string }>();

	/**
	 * The connection pool of this client's requests, looked up once per client (a run's client:
	 * the proxy variables are read when a run first sends, not for every request).
	 */
	private pool(timeoutMs: number): Dispatcher {
		const generation = poolGeneration();
		if (this.connections?.generation !== generation) {
			const pool = poolFor({
				allowUnauthorizedCerts: this.credentials.allowUnauthorizedCerts,
				connectTimeoutMs: Math.min(timeoutMs, 10_000),
			});
			this.connections = { pool, generation };
		}
		return this.connections.pool;
	}

	private connections: { pool: Dispatcher; generation: number } | undefined;

	/** The service may set a `session_id` cookie; later requests of this credential send it back. */
	private keepSessionCookie(header: string | string[] | undefined): void {
		for (const line of Array.isArray(header) ? header : header ? [header] : []) {
			const match = /(?:^|;\s*)session_id=([^;]*)/.exec(line);
			if (match) sessionCookies.set(this.credentialKey, match[1]);
		}
	}

	private networkError(
		endpoint: Endpoint,
		cause: unknown,
		{
			isWrite,
			dispatched,
			deadline,
			signal,
		}: { isWrite: boolean; dispatched: boolean; deadline: boolean; signal?: AbortSignal },
	): ApiError {
		const err = cause as {
			code?: string;
			name?: string;
			message?: string;
			cause?: { code?: string };
		};
		const code = err?.code ?? err?.cause?.code;
		if (signal?.aborted) {
			return new ApiError(endpoint, {
				kind: 'aborted',
				reason: 'the execution was cancelled',
				causeCode: code,
			});
		}
		// Sent (even in part) and then no answer: the server may have processed it.
		const deliveryUnknown = isWrite && dispatched;
		if (deadline || isTimeoutCode(code)) {
			const seconds = this.credentials.timeoutSeconds;
			return new ApiError(endpoint, {
				kind: 'timeout',
				reason: deadline
					? `no complete answer within ${seconds} s (Request Timeout)`
					: `no answer within ${seconds} s (${code})`,
				causeCode: deadline ? 'REQUEST_TIMEOUT' : code,
				deliveryUnknown,
			});
		}
		const detail = err?.message ? `: ${this.redactor().text(err.message).slice(0, 300)}` : '';
		return new ApiError(endpoint, {
			kind: 'network',
			reason: `the connection failed (${code ?? err?.name ?? 'unknown error'}${detail})`,
			causeCode: code,
			deliveryUnknown,
		});
	}
}

/** A wait between attempts; an abort ends it early, and the next attempt then fails at once with undici's abort error. */
async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
	if (ms > 0) await clock.sleep(ms, signal).catch(() => undefined);
}
