/**
 * The transport against the sandbox over real HTTP: wire format, bearer placement, token cache,
 * refresh, error model, retry matrix and secrecy.
 */
import { createHash } from 'crypto';
import { getEventListeners } from 'events';
import { createServer } from 'net';

import { startSandbox, type Sandbox } from '../../../../sandbox/server';
import {
	ApiClient,
	ApiError,
	TokenCache,
	endpoints,
	parseCredentials,
	type ApiCredentials,
	type Endpoint,
	type RetryPolicy,
} from '../../../../nodes/shared/transport';
import { callerParams, type ParamValue } from '../../../../nodes/shared/transport/endpoints';
import { clock } from '../../../../nodes/shared/clock';
import { useSandbox } from '../../../harness/useSandbox';

const SECRET = 'demo-secret';
const FAST_RETRIES: RetryPolicy = {
	maxRetries: 3,
	baseDelayMs: 20,
	maxDelayMs: 100,
	maxRetryAfterSeconds: 5,
};

const sandbox = useSandbox();

function credentials(overrides: Partial<ApiCredentials> = {}): ApiCredentials {
	return parseCredentials({
		baseUrl: `${sandbox.url}/`,
		clientId: 'demo-client',
		clientSecret: SECRET,
		timeoutSeconds: 5,
		...overrides,
	});
}

/** A client with its own token cache, so tests never share tokens. */
function newClient(overrides: Partial<ApiCredentials> = {}, tokens = new TokenCache()): ApiClient {
	return new ApiClient(credentials(overrides), tokens, FAST_RETRIES);
}

/** A valid value of each caller param, by its name; a param not listed here gets "1". */
const SAMPLE_VALUES: Record<string, ParamValue> = {
	version: '16.0.1.3',
	phone: '6281288776713',
	whatsapp_number: '6281288776713',
	whatsapp_webhook: 'http://127.0.0.1:1/hook',
	body: 'hello',
	filename: 'a.txt',
	caption: '',
	currency_id_provider: 'bca',
};

/** Where an endpoint needs another value than its params' names give. */
const SAMPLE_OVERRIDES: Partial<Record<keyof typeof endpoints, Record<string, ParamValue>>> = {
	sendFile: {
		body: {
			kind: 'dataUri',
			mimeType: 'text/plain',
			base64: Buffer.from('file body').toString('base64'),
		},
	},
	getKurs: { version: '1.0' },
};

/**
 * Minimal valid caller params for each endpoint, built from the endpoint rows, so that a new
 * endpoint gets the wire-format test below without an edit here.
 */
const sampleParams = Object.fromEntries(
	(Object.entries(endpoints) as Array<[keyof typeof endpoints, Endpoint]>).map(
		([name, endpoint]) => [
			name,
			{
				...Object.fromEntries(
					callerParams(endpoint).map((param) => [param, SAMPLE_VALUES[param] ?? '1']),
				),
				...SAMPLE_OVERRIDES[name],
			},
		],
	),
) as Record<keyof typeof endpoints, Record<string, ParamValue>>;

const apiEndpoints = Object.entries(endpoints).filter(
	([name]) => !name.endsWith('uthenticate'),
) as Array<[string, Endpoint]>;

describe('wire format', () => {
	test.each(apiEndpoints)(
		'%s sends exactly the spec params as JSON, bearer only where the spec says',
		async (name, endpoint) => {
			const result = await newClient().call(endpoint, sampleParams[name as keyof typeof endpoints]);
			expect(result).toBeDefined();

			const calls = sandbox
				.requests()
				.filter(
					(r) =>
						r.path === endpoint.path &&
						(!endpoint.fixed?.method || r.params?.method === endpoint.fixed.method),
				);
			expect(calls).toHaveLength(1);
			const [call] = calls;
			expect(call.method).toBe(endpoint.httpMethod);
			expect(call.contentType).toBe('application/json');
			expect(call.rejected).toBeFalsy();
			expect(Object.keys(call.params ?? {}).sort()).toEqual([...endpoint.params].sort());
			if (endpoint.params.includes('client_secret'))
				expect(call.params?.client_secret).toBe(SECRET);
			expect(call.authorization !== undefined).toBe(endpoint.bearer);
			if (endpoint.bearer) expect(call.authorization).toMatch(/^Bearer \S+$/);
			expect(call.contentType).toBe('application/json');
		},
	);

	test('GET requests carry the JSON body (a GET without one is rejected by the sandbox)', async () => {
		await newClient().call(endpoints.checkNumber, { phone: '6281288776713' });
		const [call] = sandbox.requests();
		expect(call.method).toBe('GET');
		expect(call.bodyBytes).toBeGreaterThan(0);
		expect(call.params).toEqual({ phone: '6281288776713' });
	});

	test('token requests carry client id and secret and no bearer', async () => {
		await newClient().call(endpoints.status);
		const auth = sandbox.requests().find((r) => r.path === '/api/wa/authentication');
		expect(auth?.method).toBe('GET');
		expect(auth?.authorization).toBeUndefined();
		expect(auth?.params).toEqual({ client_id: 'demo-client', client_secret: SECRET });
	});

	test('the session_id cookie a response sets is sent back on later requests', async () => {
		// A client id of its own: the cookie jar is per credential and process-wide.
		const client = newClient({ clientId: 'cookie-test-client' });
		await client.call(endpoints.checkNumber, { phone: '6281288776713' });
		await client.call(endpoints.checkNumber, { phone: '6281288776714' });
		const [first, second] = sandbox.requests();
		expect(first.sessionCookie).toBeUndefined();
		// The whole value the sandbox set: forty hex digits.
		expect(second.sessionCookie).toMatch(/^[0-9a-f]{40}$/);
	});

	test('callers cannot send params the spec does not list, nor leave one out', async () => {
		const refusal = (params: Record<string, ParamValue>) =>
			newClient()
				.call(endpoints.sendMessage, params)
				.catch((error: ApiError) => [error.kind, error.message]);
		const all = { ...sampleParams.sendMessage, client_secret: 'x', extra: '1' };
		expect(await refusal(all)).toEqual([
			'invalid-request',
			expect.stringContaining('(missing: none; unexpected: client_secret, extra)'),
		]);
		const missing = callerParams(endpoints.sendMessage).join(', ');
		expect(await refusal({})).toEqual([
			'invalid-request',
			expect.stringContaining(`(missing: ${missing}; unexpected: none)`),
		]);
		expect(sandbox.requests()).toHaveLength(0);
	});

	test('a file param is streamed as a data URI with a correct Content-Length', async () => {
		const content = Buffer.alloc(300_001, 7);
		const { Readable } = await import('stream');
		await newClient().call(endpoints.sendFile, {
			...sampleParams.sendFile,
			body: {
				kind: 'dataUri',
				mimeType: 'application/octet-stream',
				open: () => Readable.from([content.subarray(0, 1000), content.subarray(1000)]),
				byteLength: content.length,
			},
		});
		const [entry] = sandbox.ledger();
		expect(entry.file?.size).toBe(content.length);
		const [sent] = sandbox.requests().filter((r) => r.params?.method === 'sendFile');
		expect(sent.contentLength).toBe(sent.bodyBytes);
		expect(entry.file?.sha256).toBe(createHash('sha256').update(content).digest('hex'));
	});
});

// Token counts, not timeouts: a loaded machine must not time a request out and retry it.
const UNHURRIED = { timeoutSeconds: 60 };

describe('token cache', () => {
	test('1000 concurrent calls cause exactly 1 token request', async () => {
		const client = newClient(UNHURRIED);
		await Promise.all(
			Array.from({ length: 1000 }, async () => await client.call(endpoints.status)),
		);
		expect(sandbox.stats().tokensIssued.wa).toBe(1);
		// A loaded machine may time a read out and retry it: every request still carries the one token.
		const reads = sandbox.requests().filter((r) => r.path === '/api/wa/2.0/get');
		expect(reads.length).toBeGreaterThanOrEqual(1000);
		expect(new Set(reads.map((r) => r.authorization)).size).toBe(1);
	});

	test('messaging and rate groups have their own tokens', async () => {
		const client = newClient(UNHURRIED);
		await client.call(endpoints.status);
		await client.call(endpoints.getKurs, sampleParams.getKurs);
		expect(sandbox.stats().tokensIssued).toEqual({ wa: 1, rate: 1 });
	});

	test('an expired token causes exactly one refresh and the call succeeds', async () => {
		const tokens = new TokenCache();
		const client = newClient(UNHURRIED, tokens);
		await client.call(endpoints.status);
		sandbox.expireTokens();
		await Promise.all(Array.from({ length: 50 }, async () => await client.call(endpoints.status)));
		expect(sandbox.stats().tokensIssued.wa).toBe(2);
	});

	test("n8n's cancel ends a call waiting for its token", async () => {
		sandbox.addFaults([
			{ kind: 'slow', delayMs: 3_000, match: { path: '/api/wa/authentication' } },
		]);
		const cancel = new AbortController();
		const call = newClient(UNHURRIED)
			.call(endpoints.status, {}, { signal: cancel.signal })
			.catch((e) => e);
		await new Promise((resolve) => setTimeout(resolve, 200));
		const cancelled = Date.now();
		cancel.abort();
		expect(((await call) as ApiError).kind).toBe('aborted');
		// Not after the token's answer, three seconds later.
		expect(Date.now() - cancelled).toBeLessThan(1_500);
	});

	test('a token refused twice is not refreshed a second time', async () => {
		const client = newClient(UNHURRIED);
		sandbox.addFaults([{ kind: 'expireToken', match: { path: '/api/wa/2.0/get' }, times: 5 }]);
		const error = await client.call(endpoints.status).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ApiError);
		expect((error as ApiError).message).toMatch(/Session Expired/i);
		expect(sandbox.stats().tokensIssued.wa).toBe(2);
		expect(sandbox.requests().filter((r) => r.path === '/api/wa/2.0/get')).toHaveLength(2);
	});

	test('the lifetime stated by the token answer is used when present', async () => {
		await sandbox.restart({ tokenExpiresInField: true, tokenTtlMs: 3_000 });
		const client = newClient(UNHURRIED);
		await client.call(endpoints.status);
		await new Promise((resolve) => setTimeout(resolve, 3_100));
		await client.call(endpoints.status);
		// The credential says 60 minutes; the answer said 3 s, so a second token was fetched
		// before the server could refuse the first one.
		expect(sandbox.stats().tokensIssued.wa).toBe(2);
		expect(
			sandbox.requests().filter((r) => r.path === '/api/wa/2.0/get' && r.status !== 200),
		).toHaveLength(0);
		await sandbox.restart();
	});
});

describe('error model', () => {
	test('a JSON-RPC error gives an ApiError with the server words', async () => {
		sandbox.addFaults([
			{
				kind: 'rpcError',
				message: 'Database is locked for maintenance',
				match: { path: '/api/wa/2.0/check' },
			},
		]);
		const error = (await newClient()
			.call(endpoints.checkNumber, { phone: '6281288776713' })
			.catch((e) => e)) as ApiError;
		expect(error).toBeInstanceOf(ApiError);
		expect(error.kind).toBe('rpc');
		expect(error.message).toContain('Check Number (GET /api/wa/2.0/check)');
		expect(error.message).toContain('Database is locked for maintenance');
	});

	test('an HTML 502 page gives an ApiError with the page title (after the read retries)', async () => {
		sandbox.addFaults([{ kind: 'html502', match: { path: '/api/wa/2.0/check' }, times: 10 }]);
		const error = (await newClient()
			.call(endpoints.checkNumber, { phone: '6281288776713' })
			.catch((e) => e)) as ApiError;
		expect(error.kind).toBe('http');
		expect(error.httpStatus).toBe(502);
		expect(error.message).toMatch(/HTTP 502 Bad Gateway: "502 Bad Gateway"/);
		expect(error.attempts).toBe(4);
	});

	test.each([
		['malformedJson', /not JSON/],
		['emptyBody', /empty body/],
	] as const)('%s gives a clear invalid-response error', async (kind, text) => {
		sandbox.addFaults([{ kind, match: { path: '/api/wa/2.0/limit' } }]);
		const error = (await newClient()
			.call(endpoints.limit)
			.catch((e) => e)) as ApiError;
		expect(error.kind).toBe('invalid-response');
		expect(error.message).toMatch(text);
	});

	test('sent:false is a rejected send with the server words', async () => {
		sandbox.addFaults([{ kind: 'sentFalse', message: 'Number is banned' }]);
		const error = (await newClient()
			.call(endpoints.sendMessage, sampleParams.sendMessage)
			.catch((e) => e)) as ApiError;
		expect(error.kind).toBe('rejected');
		expect(error.message).toMatch(/not sent: "Number is banned"/);
		expect(sandbox.ledger()).toHaveLength(0);
	});

	test('success:false from getkurs is a rejected call with the server words', async () => {
		const error = (await newClient()
			.call(endpoints.getKurs, { version: '1.0', currency_id_provider: 'nope' })
			.catch((e) => e)) as ApiError;
		expect(error.kind).toBe('rejected');
		expect(error.message).toContain('Unknown provider: nope');
	});

	test('the secret and tokens appear in no error text, even when the server echoes them', async () => {
		const client = newClient();
		await client.call(endpoints.status);
		const token =
			sandbox
				.requests()
				.find((r) => r.authorization)
				?.authorization?.replace('Bearer ', '') ?? 'missing';
		sandbox.addFaults([
			{
				kind: 'rpcError',
				message: `bad secret ${SECRET} and token ${token}`,
				match: { path: '/api/wa/2.0/limit' },
			},
		]);
		const error = (await client.call(endpoints.limit).catch((e) => e)) as ApiError;
		expect(error.message).toContain('[redacted]');
		expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).not.toContain(
			SECRET,
		);
		expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).not.toContain(
			token,
		);
	});

	test.each([
		['no token', { expires_in: 3600 }, '{"expires_in":3600}'],
		['an empty token', { token: '' }, '{"token":""}'],
		['a token that is no text (redacted by its key)', { token: 42 }, '{"token":"[redacted]"}'],
		['no object', 'welcome', '{}'],
	])('a login answer with %s is refused, in its words', async (_case, result, said) => {
		sandbox.addFaults([{ kind: 'answer', match: { path: '/api/wa/authentication' }, result }]);
		const error = (await newClient()
			.call(endpoints.status)
			.catch((e) => e)) as ApiError;
		expect(error.kind).toBe('unexpected-answer');
		expect(error.message).toContain(`failed: the answer holds no token`);
		expect(error.serverMessage).toBe(said);
	});

	test("a login answer's words are cut at 300 characters", async () => {
		const result = { note: 'n'.repeat(400) };
		sandbox.addFaults([{ kind: 'answer', match: { path: '/api/wa/authentication' }, result }]);
		const error = (await newClient()
			.call(endpoints.status)
			.catch((e) => e)) as ApiError;
		expect(error.serverMessage).toBe(`${JSON.stringify(result).slice(0, 300)}…`);
	});

	test('wrong credentials give Access Denied without the secret', async () => {
		const error = (await newClient({ clientSecret: 'wrong-secret-123' })
			.call(endpoints.status)
			.catch((e) => e)) as ApiError;
		expect(error.message).toMatch(/Access Denied/);
		expect(error.message).not.toContain('wrong-secret-123');
	});
});

describe('retry matrix', () => {
	const read = () => newClient().call(endpoints.checkNumber, { phone: '6281288776713' });
	const write = (body: string) =>
		newClient().call(endpoints.sendMessage, { ...sampleParams.sendMessage, body });
	const checkCalls = () => sandbox.requests().filter((r) => r.path === '/api/wa/2.0/check').length;
	const sendCalls = () =>
		sandbox.requests().filter((r) => r.params?.method === 'sendMessage').length;

	test.each([
		'dropBeforeProcessing',
		'dropAfterProcessing',
		'html502',
		'html503',
		'html504',
		'http429',
	] as const)('a read retries after %s and succeeds', async (kind) => {
		sandbox.addFaults([{ kind, match: { path: '/api/wa/2.0/check' }, retryAfterSeconds: 0 }]);
		await expect(read()).resolves.toEqual({ result: 'exists' });
		expect(checkCalls()).toBe(2);
	});

	test('a read retries on a slow answer past the timeout', async () => {
		sandbox.addFaults([{ kind: 'slow', delayMs: 2_500, match: { path: '/api/wa/2.0/check' } }]);
		await expect(
			newClient({ timeoutSeconds: 1 }).call(endpoints.checkNumber, { phone: '6281288776713' }),
		).resolves.toEqual({ result: 'exists' });
	});

	test('a write retries after a 429 (the gateway did not act) and is recorded once', async () => {
		sandbox.addFaults([
			{ kind: 'http429', match: { rpcMethod: 'sendMessage' }, retryAfterSeconds: 1 },
		]);
		const started = Date.now();
		await expect(write('retry-429')).resolves.toBeDefined();
		expect(Date.now() - started).toBeGreaterThanOrEqual(950); // Retry-After: 1 honoured
		expect(sandbox.ledger().filter((e) => e.text === 'retry-429')).toHaveLength(1);
		expect(sendCalls()).toBe(2);
	});

	test("n8n's Stop during a retry's wait: no further attempt, nothing sent", async () => {
		sandbox.addFaults([
			{ kind: 'http429', match: { rpcMethod: 'sendMessage' }, retryAfterSeconds: 2 },
		]);
		const cancel = new AbortController();
		const call = newClient()
			.call(
				endpoints.sendMessage,
				{ ...sampleParams.sendMessage, body: 'stopped' },
				{ signal: cancel.signal },
			)
			.catch((e) => e);
		await new Promise((resolve) => setTimeout(resolve, 300));
		cancel.abort();
		expect(((await call) as ApiError).kind).toBe('aborted');
		expect(sendCalls()).toBe(1);
		expect(sandbox.ledger()).toHaveLength(0);
	});

	test('Retry-After as an HTTP date is waited for; one past the limit is not, nor retried', async () => {
		// An HTTP date has whole seconds: two seconds ahead is more than one second from now.
		sandbox.addFaults([
			{
				kind: 'http429',
				match: { rpcMethod: 'sendMessage' },
				retryAfterSeconds: 2,
				retryAfterDate: true,
			},
		]);
		const waits = jest.spyOn(clock, 'sleep');
		try {
			await expect(write('retry-date')).resolves.toBeDefined();
			const [[waitedMs]] = waits.mock.calls;
			expect(waitedMs).toBeGreaterThan(1_000);
			expect(waitedMs).toBeLessThanOrEqual(2_000);
		} finally {
			waits.mockRestore();
		}
		expect(sendCalls()).toBe(2);
		sandbox.addFaults([
			{
				kind: 'http429',
				match: { rpcMethod: 'sendMessage' },
				retryAfterSeconds: 30,
				retryAfterDate: true,
			},
		]);
		const error = (await write('retry-date-far').catch((e) => e)) as ApiError;
		expect(error.httpStatus).toBe(429);
		expect(error.attempts).toBe(1);
		expect(sandbox.ledger().map((e) => e.text)).toEqual(['retry-date']);
	});

	test('a Retry-After date already past is retried at once', async () => {
		sandbox.addFaults([
			{
				kind: 'html503',
				match: { path: '/api/wa/2.0/check' },
				retryAfterSeconds: -60,
				retryAfterDate: true,
			},
		]);
		await expect(read()).resolves.toEqual({ result: 'exists' });
		expect(checkCalls()).toBe(2);
	});

	test('retries without Retry-After wait half to all of a doubling delay, up to its ceiling', async () => {
		sandbox.addFaults([{ kind: 'html503', match: { path: '/api/wa/2.0/check' }, times: 3 }]);
		const policy = { maxRetries: 3, baseDelayMs: 200, maxDelayMs: 400, maxRetryAfterSeconds: 5 };
		const client = new ApiClient(credentials(), new TokenCache(), policy);
		const waits = jest.spyOn(clock, 'sleep').mockResolvedValue(undefined);
		const random = jest.spyOn(Math, 'random').mockReturnValue(0.9);
		try {
			await expect(client.call(endpoints.checkNumber, { phone: '6281288776713' })).resolves.toEqual(
				{ result: 'exists' },
			);
			// Ceilings 200, 400 (doubled), 400 (capped); a wait is half its ceiling plus a random half.
			const ceilings = [200, 400, 400];
			expect(waits.mock.calls.map(([ms]) => ms)).toEqual(
				ceilings.map((c) => c / 2 + (0.9 * c) / 2),
			);
		} finally {
			waits.mockRestore();
			random.mockRestore();
		}
	});

	// A 503 says nothing of what the application behind it did: a router may give up while it goes on.
	test.each([
		'dropBeforeProcessing',
		'dropAfterProcessing',
		'html503',
		'http503AfterProcessing',
	] as const)(
		'a write is NOT retried after %s: one attempt, error says it may have been delivered',
		async (kind) => {
			sandbox.addFaults([{ kind, match: { rpcMethod: 'sendMessage' } }]);
			const error = (await write(`drop-${kind}`).catch((e) => e)) as ApiError;
			expect(error).toBeInstanceOf(ApiError);
			expect(error.deliveryUnknown).toBe(true);
			expect(error.attempts).toBe(1);
			expect(error.hint).toMatch(/may have been delivered/);
			const recorded = sandbox.ledger().filter((e) => e.text === `drop-${kind}`);
			expect(recorded).toHaveLength(kind.includes('After') ? 1 : 0);
			expect(sandbox.requests().filter((r) => r.params?.body === `drop-${kind}`)).toHaveLength(1);
		},
	);

	test('a write is NOT retried after a timeout, and a 502 is not retried for a write', async () => {
		sandbox.addFaults([{ kind: 'slow', delayMs: 2_500, match: { rpcMethod: 'sendMessage' } }]);
		const slow = (await newClient({ timeoutSeconds: 1 })
			.call(endpoints.sendMessage, { ...sampleParams.sendMessage, body: 'slow-1' })
			.catch((e) => e)) as ApiError;
		expect(slow.kind).toBe('timeout');
		expect(slow.deliveryUnknown).toBe(true);
		sandbox.addFaults([{ kind: 'html502', match: { rpcMethod: 'sendMessage' } }]);
		const bad = (await write('bad-gateway').catch((e) => e)) as ApiError;
		expect(bad.httpStatus).toBe(502);
		expect(bad.attempts).toBe(1);
		await new Promise((resolve) => setTimeout(resolve, 1_600)); // let the slow answer finish
		expect(sandbox.ledger().filter((e) => e.text === 'slow-1')).toHaveLength(1);
		expect(sandbox.ledger().filter((e) => e.text === 'bad-gateway')).toHaveLength(0);
	});

	test('a write IS retried when the connection is refused, and lands once when the server comes up', async () => {
		const port = await freePort();
		const client = new ApiClient(
			parseCredentials({
				baseUrl: `http://127.0.0.1:${port}`,
				clientId: 'demo-client',
				clientSecret: SECRET,
			}),
			new TokenCache(),
			{ maxRetries: 5, baseDelayMs: 200, maxDelayMs: 400, maxRetryAfterSeconds: 5 },
		);
		let late: Sandbox | undefined;
		setTimeout(() => void startSandbox({ port }).then((s) => (late = s)), 300);
		try {
			await expect(
				client.call(endpoints.sendMessage, {
					...sampleParams.sendMessage,
					body: 'refused-then-ok',
				}),
			).resolves.toBeDefined();
			expect(late?.ledger().map((e) => e.text)).toEqual(['refused-then-ok']);
		} finally {
			await late?.close();
		}
	});

	test('an upload over a MiB gets a second a MiB beyond Request Timeout; a smaller one none', async () => {
		const limits = jest.spyOn(clock, 'limit');
		const file = (bytes: number) => ({
			...sampleParams.sendFile,
			body: {
				kind: 'dataUri' as const,
				mimeType: 'application/octet-stream',
				base64: Buffer.alloc(bytes, 7).toString('base64'),
			},
		});
		try {
			const client = newClient();
			await client.call(endpoints.sendMessage, { ...sampleParams.sendMessage, body: 'small' });
			await client.call(endpoints.sendFile, file(512 * 1024));
			await client.call(endpoints.sendFile, file(3 * 1024 * 1024));
			const asked = limits.mock.calls.map(([ms]) => ms);
			// The token's request, the text's and the smaller file's: Request Timeout alone.
			expect(asked.slice(0, -1)).toEqual([5_000, 5_000, 5_000]);
			// Base64 makes the larger file's three MiB four on the wire.
			expect(asked.at(-1)).toBeGreaterThan(5_000 + 4_000);
			expect(asked.at(-1)).toBeLessThan(5_000 + 4_100);
		} finally {
			limits.mockRestore();
		}
	});

	test("calls under one execution's signal leave no listener on it", async () => {
		const signal = new AbortController().signal;
		const client = newClient();
		for (let i = 0; i < 3; i++)
			await client.call(endpoints.checkNumber, { phone: '6281288776713' }, { signal });
		// Each left behind would hold its attempt until the execution ends: a long run's leak.
		expect(getEventListeners(signal, 'abort')).toHaveLength(0);
	});

	test('the retry budget is bounded', async () => {
		sandbox.addFaults([
			{ kind: 'http429', match: { rpcMethod: 'sendMessage' }, times: 100, retryAfterSeconds: 0 },
		]);
		const error = (await write('never').catch((e) => e)) as ApiError;
		expect(error.httpStatus).toBe(429);
		expect(error.attempts).toBe(FAST_RETRIES.maxRetries + 1);
		expect(sandbox.ledger()).toHaveLength(0);
	});
});

describe('credential', () => {
	test.each([
		[{ baseUrl: 'ftp://host' }, /must start with http:\/\/ or https:\/\//],
		[{ baseUrl: 'not a url' }, /"Base URL" is not a valid URL/],
		[{ clientId: '' }, /"Client ID" is empty/],
		[{ clientSecret: '' }, /"Client Secret" is empty/],
		[{ timeoutSeconds: -1 }, /"Request Timeout \(Seconds\)" must be a number above 0/],
	])('%j is refused with a clear message', (override, message) => {
		expect(() =>
			parseCredentials({
				baseUrl: 'https://x.example',
				clientId: 'a',
				clientSecret: 'b',
				...override,
			}),
		).toThrow(message);
	});

	test('a trailing slash and a path prefix are kept right', () => {
		expect(
			parseCredentials({ baseUrl: 'https://x.example/odoo//', clientId: 'a', clientSecret: 'b' })
				.baseUrl,
		).toBe('https://x.example/odoo');
	});

	test('the credential test authenticates, calls the token check and reads the session', async () => {
		const { messagingRateApiTest } = await import('../../../../nodes/shared/credentialTest');
		const good = await messagingRateApiTest.call({} as never, {
			id: '1',
			name: 'x',
			type: 'messagingRateApi',
			data: { baseUrl: sandbox.url, clientId: 'demo-client', clientSecret: SECRET },
		});
		expect(good.status).toBe('OK');
		expect(sandbox.requests().map((r) => r.path)).toEqual([
			'/api/wa/authentication',
			'/api/wa/protected',
			'/api/wa/2.0/get',
		]);
		const bad = await messagingRateApiTest.call({} as never, {
			id: '1',
			name: 'x',
			type: 'messagingRateApi',
			data: { baseUrl: sandbox.url, clientId: 'demo-client', clientSecret: 'not-the-secret' },
		});
		expect(bad.status).toBe('Error');
		expect(bad.message).toMatch(/Access Denied/);
		expect(bad.message).not.toContain('not-the-secret');
	});
});

async function freePort(): Promise<number> {
	return await new Promise((resolve) => {
		const server = createServer();
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address() as { port: number };
			server.close(() => resolve(port));
		});
	});
}
