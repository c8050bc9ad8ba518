import { createHash } from 'crypto';
import { Agent, request, type Dispatcher } from 'undici';

import { buildBody, type ParamValue, type RequestBody } from './body';
import { callerParams, tokenEndpoint, type ApiGroup, type Endpoint } from './endpoints';
import { parseEnvelope } from './envelope';
import { ApiError, redact, redactDeep } from './errors';
import {
	DEFAULT_RETRY_POLICY,
	isRetryableNetworkError,
	isRetryableStatus,
	isTimeoutCode,
	neverSent,
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
	readonly timeoutSeconds: number;
	readonly allowUnauthorizedCerts: boolean;
}

export interface CallOptions {
	/** n8n's execution-cancel signal: stops waiting and stops retrying. */
	readonly signal?: AbortSignal;
}

/** Process-wide state: every node, item and execution in this process shares it. */
export const sharedTokenCache = new TokenCache();
const sessionCookies = new Map<string, string>();
const agents = new Map<string, Agent>();

/** One keep-alive pool per origin (undici's Agent keeps a Pool per origin), per TLS setting. */
function agentFor(credentials: ApiCredentials): Dispatcher {
	const key = `${credentials.allowUnauthorizedCerts}:${credentials.timeoutSeconds}`;
	let agent = agents.get(key);
	if (!agent) {
		agent = new Agent({
			keepAliveTimeout: 10_000,
			keepAliveMaxTimeout: 60_000,
			connect: {
				rejectUnauthorized: !credentials.allowUnauthorizedCerts,
				timeout: Math.min(credentials.timeoutSeconds * 1000, 10_000),
			},
		});
		agents.set(key, agent);
	}
	return agent;
}

/** Closes the pooled connections (tests and short-lived scripts; n8n never needs to). */
export async function closeConnections(): Promise<void> {
	const closing = [...agents.values()].map(async (agent) => await agent.close());
	agents.clear();
	await Promise.all(closing);
}

export class ApiClient {
	/** Identifies the credential without holding its secret. */
	private readonly credentialKey: string;

	constructor(
		private readonly credentials: ApiCredentials,
		private readonly tokens: TokenCache = sharedTokenCache,
		private readonly retryPolicy: RetryPolicy = DEFAULT_RETRY_POLICY,
	) {
		const secretHash = createHash('sha256').update(credentials.clientSecret).digest('hex').slice(0, 16);
		this.credentialKey = `${credentials.baseUrl}|${credentials.clientId}|${secretHash}`;
	}

	/**
	 * Calls one endpoint and returns its JSON-RPC `result`, with the secret and tokens redacted.
	 * `params` holds the caller's fields only; credential and fixed fields are added here.
	 */
	async call(endpoint: Endpoint, params: Record<string, ParamValue> = {}, options: CallOptions = {}): Promise<unknown> {
		const body = buildBody(this.fullParams(endpoint, params));
		if (!endpoint.bearer) return await this.send(endpoint, body, undefined, options);

		const token = await this.token(endpoint.group, options);
		try {
			return await this.send(endpoint, body, token, options);
		} catch (error) {
			if (!(error instanceof ApiError && error.authFailure)) throw error;
			// The token expired or was revoked: one new token, one more try, never more.
			this.tokens.invalidate(this.tokenKey(endpoint.group), token);
			const fresh = await this.token(endpoint.group, options);
			return await this.send(endpoint, body, fresh, options);
		}
	}

	/** The cached token of a group, fetching one if needed (shared with concurrent callers). */
	async token(group: ApiGroup, options: CallOptions = {}): Promise<Token> {
		return await this.tokens.get(this.tokenKey(group), async () => await this.fetchToken(group, options));
	}

	/** Drops the cached token and fetches a new one (the "Get Token" operations). */
	async renewToken(group: ApiGroup, options: CallOptions = {}): Promise<{ token: Token; answer: unknown }> {
		this.tokens.invalidate(this.tokenKey(group));
		let answer: unknown;
		const token = await this.tokens.get(this.tokenKey(group), async () => {
			const fetched = await this.fetchToken(group, options);
			answer = fetched.answer;
			return fetched;
		});
		return { token, answer: answer ?? {} };
	}

	private async fetchToken(group: ApiGroup, options: CallOptions): Promise<Token & { answer: unknown }> {
		const endpoint = tokenEndpoint[group];
		const raw = await this.send(endpoint, buildBody(this.fullParams(endpoint, {})), undefined, options, false);
		const answer = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
		const value = answer.token;
		if (typeof value !== 'string' || value === '') {
			const said = JSON.stringify(redactDeep(answer, this.secrets()));
			throw new ApiError(endpoint, {
				kind: 'invalid-response',
				reason: 'the answer holds no token',
				serverMessage: said.length > 300 ? `${said.slice(0, 300)}…` : said,
			});
		}
		const expiresAt = tokenExpiry(answer, Date.now(), this.credentials.tokenLifetimeMinutes * 60_000);
		const { token: _token, ...rest } = answer;
		return { value, expiresAt, answer: rest };
	}

	private tokenKey(group: ApiGroup): string {
		return `${this.credentialKey}|${group}`;
	}

	/** The spec's params for this endpoint: exactly its listed fields, in its order. */
	private fullParams(endpoint: Endpoint, params: Record<string, ParamValue>): Record<string, ParamValue> {
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

	private secrets(): string[] {
		return [this.credentials.clientSecret, ...this.tokens.values()];
	}

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
			let response: { status: number; text: string; retryAfter?: number };
			try {
				response = await this.attempt(endpoint, body, token, options.signal);
			} catch (cause) {
				const error = this.networkError(endpoint, cause, isWrite, options.signal);
				error.attempts = attempt + 1;
				if (error.kind === 'aborted' || !canRetry || !isRetryableNetworkError(error.causeCode, isWrite)) throw error;
				await sleep(retryDelayMs(attempt, this.retryPolicy), options.signal);
				continue;
			}

			const retryAfter = response.retryAfter;
			if (
				canRetry &&
				isRetryableStatus(response.status, isWrite) &&
				(retryAfter === undefined || retryAfter <= this.retryPolicy.maxRetryAfterSeconds)
			) {
				await sleep(retryDelayMs(attempt, this.retryPolicy, retryAfter), options.signal);
				continue;
			}
			try {
				const result = parseEnvelope(endpoint, response.status, response.text, this.secrets(), retryAfter);
				return redactResult ? redactDeep(result, this.secrets()) : result;
			} catch (error) {
				if (error instanceof ApiError) error.attempts = attempt + 1;
				throw error;
			}
		}
	}

	private async attempt(
		endpoint: Endpoint,
		body: RequestBody,
		token: Token | undefined,
		signal: AbortSignal | undefined,
	): Promise<{ status: number; text: string; retryAfter?: number }> {
		const headers: Record<string, string> = {
			'content-type': 'application/json',
			accept: 'application/json',
		};
		if (body.length !== undefined) headers['content-length'] = String(body.length);
		if (token) headers.authorization = `Bearer ${token.value}`;
		const session = sessionCookies.get(this.credentialKey);
		if (session) headers.cookie = `session_id=${session}`;

		const timeoutMs = this.credentials.timeoutSeconds * 1000;
		const response = await request(`${this.credentials.baseUrl}${endpoint.path}`, {
			method: endpoint.httpMethod,
			headers,
			// undici also writes an async iterable body (its type list omits it), string by string.
			body: body.open() as Buffer,
			// undici closes the connection after any GET that carries a body (a guard for servers
			// that do not read one), and then opened a new TCP connection for every request of
			// this API. This server reads GET bodies (Content-Length is always set): keep it alive.
			reset: false,
			dispatcher: agentFor(this.credentials),
			headersTimeout: timeoutMs,
			bodyTimeout: timeoutMs,
			signal,
		});
		this.keepSessionCookie(response.headers['set-cookie']);
		const text = await response.body.text();
		return { status: response.statusCode, text, retryAfter: parseRetryAfter(response.headers['retry-after']) };
	}

	/** The service may set a `session_id` cookie; later requests of this credential send it back. */
	private keepSessionCookie(header: string | string[] | undefined): void {
		for (const line of Array.isArray(header) ? header : header ? [header] : []) {
			const match = /(?:^|;\s*)session_id=([^;]*)/.exec(line);
			if (match) sessionCookies.set(this.credentialKey, match[1]);
		}
	}

	private networkError(endpoint: Endpoint, cause: unknown, isWrite: boolean, signal?: AbortSignal): ApiError {
		const err = cause as { code?: string; name?: string; message?: string; cause?: { code?: string } };
		const code = err?.code ?? err?.cause?.code;
		if (signal?.aborted || err?.name === 'AbortError' || code === 'UND_ERR_ABORTED') {
			return new ApiError(endpoint, { kind: 'aborted', reason: 'the execution was cancelled', causeCode: code });
		}
		const timeout = isTimeoutCode(code);
		const deliveryUnknown = isWrite && !neverSent(code);
		const reason = timeout
			? `no answer within ${this.credentials.timeoutSeconds} s (${code})`
			: `the connection failed (${code ?? err?.name ?? 'unknown error'}${err?.message ? `: ${redact(err.message, this.secrets())}` : ''})`;
		return new ApiError(endpoint, { kind: timeout ? 'timeout' : 'network', reason, causeCode: code, deliveryUnknown });
	}
}

async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
	if (ms <= 0) return;
	await new Promise<void>((resolve) => {
		const timer = setTimeout(done, ms);
		function done() {
			clearTimeout(timer);
			signal?.removeEventListener('abort', done);
			resolve();
		}
		signal?.addEventListener('abort', done, { once: true });
	});
	// After an abort the next attempt fails at once with undici's abort error.
}
