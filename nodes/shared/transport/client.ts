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

export interface ApiCredentials {
	readonly baseUrl: string;
	readonly clientId: string;
	readonly clientSecret: string;
	/** Used when a token answer states no expiry (the real service states none). */
	readonly tokenLifetimeMinutes: number;
	readonly timeoutSeconds: number;
	readonly allowUnauthorizedCerts: boolean;
	readonly maxResponseMegabytes: number;
}

export const DEFAULT_MAX_RESPONSE_MEGABYTES = 16;

/** 1 s per MiB is a slow 8 Mbit/s uplink: the limit bounds uploads without failing honest ones. */
const UPLOAD_ALLOWANCE_MS_PER_MIB = 1000;

interface AttemptAnswer {
	status: number;
	text: string;
	retryAfter?: number;
	location?: string;
}

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
	readonly signal?: AbortSignal;
}

export const sharedTokenCache = new TokenCache();
const sessionCookies = new Map<string, string>();

export class ApiClient {
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

	async call(
		endpoint: Endpoint,
		params: Record<string, ParamValue> = {},
		options: CallOptions = {},
	): Promise<unknown> {
		const body = buildBody(this.fullParams(endpoint, params));
		if (!endpoint.bearer) return await this.send(endpoint, body, undefined, options);

		const token = await this.token(endpoint.group, options);
		// The transport knows no n8n node: toNodeError (errors.ts) converts its errors.
		return await this.send(endpoint, body, token, options).catch(async (error: unknown) => {
			if (!(error instanceof ApiError && error.authFailure)) throw error;
			// The token expired or was revoked: one new token, one more try, never more.
			this.tokens.invalidate(this.tokenKey(endpoint.group), token);
			const fresh = await this.token(endpoint.group, options);
			return await this.send(endpoint, body, fresh, options);
		});
	}

	async token(group: ApiGroup, options: CallOptions = {}): Promise<Token> {
		return await this.tokens.get(
			this.tokenKey(group),
			async () => await this.fetchToken(group, options),
		);
	}

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

	redact<T>(value: T): T {
		return this.redactor().value(value);
	}

	/** Rebuilt only when this credential's secrets changed, not for every answer. */
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

	// undici's `dispatch`, not `request`, whose stream per answer was most of the transport's cost.
	// Until `onRequestStart` nothing has left this machine; error codes cannot tell, since ECONNRESET
	// also comes from a socket that already carried the request.
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
		// A body of unknown length (a download sent as it arrives) gets the allowance of its size cap.
		const uploadMiB = (body.length ?? body.maxLength ?? 0) / (1024 * 1024);
		const limitMs = timeoutMs + (uploadMiB > 1 ? uploadMiB * UPLOAD_ALLOWANCE_MS_PER_MIB : 0);
		const maxBytes = this.credentials.maxResponseMegabytes * 1024 * 1024;
		const target = this.target(endpoint);
		const pool = this.pool(timeoutMs);

		return await new Promise<AttemptAnswer>((resolve, reject) => {
			let controller: Dispatcher.DispatchController | undefined;
			let stopped: Error | undefined;
			let dispatched = false;
			let status = 0;
			let answerHeaders: Record<string, string | string[] | undefined> = {};
			const chunks: Buffer[] = [];
			let size = 0;

			const stop = (reason: Error) => {
				if (stopped) return;
				stopped = reason;
				// Nothing to abort before onRequestStart: undici is told then, before a byte is written.
				controller?.abort(reason);
			};
			let timedOut = false;
			const cancelLimit = clock.limit(limitMs, () => {
				timedOut = true;
				stop(new Error(`aborted: no complete answer within ${limitMs} ms (Request Timeout)`));
			});
			// A listener, not AbortSignal.any: a long-lived signal keeps combined ones alive (Node 20).
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
						// undici closes a connection after a GET with a body, so each request opened a new one;
						// this server reads GET bodies (Content-Length is always set).
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

	/** Looked up once per client: the proxy variables are read once per run, not per request. */
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

async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
	if (ms > 0) await clock.sleep(ms, signal).catch(() => undefined);
}
