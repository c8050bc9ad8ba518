/**
 * Hostile and odd servers against the transport, over real HTTP: answers that never end or never
 * stop growing, redirects with a success body, token answers that say they expired long ago,
 * routes lost after a send, proxies, and fan-out set by an expression.
 */
import { subscribe, unsubscribe } from 'diagnostics_channel';
import net, { type AddressInfo, type Socket } from 'net';
import type { IDataObject } from 'n8n-workflow';

import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../harness/engine';
import {
	ApiClient,
	ApiError,
	TokenCache,
	endpoints,
	parseCredentials,
	type ApiCredentials,
} from '../../nodes/shared/transport';
import {
	startConnectProxy,
	startDroppingProxy,
	withProxyEnvironment,
	type ConnectProxy,
	type DroppingProxy,
} from '../harness/connectProxy';
import { sendOptions } from '../harness/sendOptions';
import { useSandbox } from '../harness/useSandbox';

const sandbox = useSandbox();
/** The transport's cap on sockets per origin (CONTRIBUTING, "Facts behind the code"). */
const MAX_CONNECTIONS_PER_ORIGIN = 64;
const SEND = { method: 'sendMessage', version: '16.0.1.3', phone: '6281288776713', body: 'hello' };
const sendParams = { version: SEND.version, phone: SEND.phone, body: SEND.body };

function credentials(overrides: Record<string, unknown> = {}): ApiCredentials {
	return parseCredentials({
		baseUrl: sandbox.url,
		clientId: 'demo-client',
		clientSecret: 'demo-secret',
		timeoutSeconds: 5,
		...overrides,
	});
}
const client = (overrides: Record<string, unknown> = {}) =>
	new ApiClient(credentials(overrides), new TokenCache());
/** The words a "may have been delivered" send ends with, in its message (not only in its hint). */
const MAY_HAVE_BEEN_DELIVERED =
	/; the message may have been delivered, so it was not sent again: check the recipient before sending it again$/;
const failure = async (promise: Promise<unknown>) =>
	(await promise.then(
		() => undefined,
		(e: unknown) => e,
	)) as ApiError;

describe('answers that do not end', () => {
	it('Request Timeout bounds the whole answer: a byte every 250 ms is cut off at the deadline', async () => {
		sandbox.addFaults([
			{ kind: 'trickle', delayMs: 250, match: { path: '/api/wa/2.0/check' }, times: 5 },
		]);
		const started = Date.now();
		const error = await failure(
			client({ timeoutSeconds: 1 }).call(endpoints.checkNumber, { phone: SEND.phone }),
		);
		const elapsed = Date.now() - started;
		expect(error.kind).toBe('timeout');
		expect(error.message).toMatch(/no complete answer within 1 s \(Request Timeout\)/);
		// A read is retried (4 attempts in all), each cut at 1 s; the answer alone would take ~10 s per attempt.
		expect(error.attempts).toBe(4);
		const answerBytes = 60;
		expect(elapsed / (error.attempts * 1000)).toBeLessThan(2);
		expect(elapsed).toBeLessThan(error.attempts * answerBytes * 250);
	});

	it('a send whose answer trickles is cut off and never sent again (it was processed)', async () => {
		sandbox.addFaults([{ kind: 'trickle', delayMs: 250, match: { rpcMethod: 'sendMessage' } }]);
		const error = await failure(
			client({ timeoutSeconds: 1 }).call(endpoints.sendMessage, sendParams),
		);
		expect(error.kind).toBe('timeout');
		expect(error.deliveryUnknown).toBe(true);
		expect(error.message).toMatch(MAY_HAVE_BEEN_DELIVERED);
		expect(error.attempts).toBe(1);
		expect(sandbox.ledger()).toHaveLength(1);
	});
});

describe('a Request Timeout longer than a timer can hold (2^31 ms, about 24.8 days)', () => {
	it('is refused, naming the field and the largest value', () => {
		expect(() => credentials({ timeoutSeconds: 3_000_000 })).toThrow(
			'Credential field "Request Timeout (Seconds)" must be at most 2147483 (about 24 days; got "3000000")',
		);
		expect(() => credentials({ timeoutSeconds: 1e300 })).toThrow(/must be at most 2147483/);
	});

	it('the largest one allowed does not fire at once: a slow answer still arrives', async () => {
		sandbox.addFaults([{ kind: 'slow', delayMs: 300, match: { path: '/api/wa/2.0/check' } }]);
		const c = client({ timeoutSeconds: 2_147_483 });
		await expect(c.call(endpoints.checkNumber, { phone: SEND.phone })).resolves.toEqual({
			result: 'exists',
		});
	});
});

describe('answers that are too large', () => {
	it.each([
		['with its Content-Length', false],
		['without Content-Length (chunked: its size is known only by reading it)', true],
	])(
		'a 100 MB answer %s is not read: a clear error at the size cap, memory bounded by the cap',
		async (_how, chunked) => {
			sandbox.addFaults([
				{
					kind: 'hugeBody',
					bytes: 100 * 1024 * 1024,
					chunked,
					match: { path: '/api/wa/2.0/check' },
				},
			]);
			const before = process.memoryUsage();
			const error = await failure(
				client({ maxResponseMegabytes: 2 }).call(endpoints.checkNumber, { phone: SEND.phone }),
			);
			const after = process.memoryUsage();
			expect(error.message).toMatch(
				/larger than 2 MB, the credential's "Max Response Size \(MB\)"; it was not read/,
			);
			expect(error.attempts).toBe(1);
			expect(error.kind).toBe('invalid-response');
			expect(error.hint).toMatch(
				/larger than the credential's "Max Response Size \(MB\)"\. Raise it/,
			);
			// What the process took for the answer is a small multiple of the cap, not the 100 MB answer.
			const grown = after.rss - before.rss;
			expect(grown / (2 * 1024 * 1024)).toBeLessThan(10);
		},
	);

	it('a 100 MB answer to a send: not read, and the message says it may have been delivered', async () => {
		sandbox.addFaults([
			{ kind: 'hugeBody', bytes: 100 * 1024 * 1024, match: { rpcMethod: 'sendMessage' } },
		]);
		const error = await failure(
			client({ maxResponseMegabytes: 2 }).call(endpoints.sendMessage, sendParams),
		);
		expect(error.deliveryUnknown).toBe(true);
		expect(error.attempts).toBe(1);
		expect(error.message).toMatch(MAY_HAVE_BEEN_DELIVERED);
	});

	it.each([false, true])(
		'an answer of exactly the cap is read whole (chunked: %s)',
		async (chunked) => {
			const bytes = 1024 * 1024;
			sandbox.addFaults([
				{ kind: 'hugeBody', bytes, chunked, match: { path: '/api/wa/2.0/check' } },
			]);
			const answer = await client({ maxResponseMegabytes: 1 }).call(endpoints.checkNumber, {
				phone: SEND.phone,
			});
			expect(JSON.stringify(answer).length).toBeGreaterThan(bytes - 100);
		},
	);

	it('the default cap is 16 MB', () => {
		expect(credentials().maxResponseMegabytes).toBe(16);
	});
});

describe('odd answers', () => {
	it('a 3xx with a JSON success body is an error, not a sent message', async () => {
		sandbox.addFaults([
			{
				kind: 'redirect',
				location: 'https://elsewhere.example/api',
				match: { rpcMethod: 'sendMessage' },
			},
		]);
		const error = await failure(client().call(endpoints.sendMessage, sendParams));
		expect(error.httpStatus).toBe(302);
		expect(error.message).toMatch(
			/redirects to https:\/\/elsewhere\.example\/api, and redirects are not followed/,
		);
		expect(sandbox.ledger()).toHaveLength(0);
	});

	it('an expires_at in the past does not make every call fetch a token: 20 sends, 1 token', async () => {
		await sandbox.restart({
			tokenAnswerExtra: { expires_at: Math.floor(Date.now() / 1000) - 3600 },
		});
		const c = client();
		for (let i = 0; i < 20; i++)
			await c.call(endpoints.sendMessage, { ...sendParams, body: `m${i}` });
		expect(sandbox.stats().tokensIssued.wa).toBe(1);
		expect(sandbox.ledger()).toHaveLength(20);
		await sandbox.restart();
	});

	it('user:pass@ in the Base URL is refused, without repeating the password', () => {
		expect(() => credentials({ baseUrl: 'https://me:hunter22@gateway.example.com' })).toThrow(
			/must not contain a user name or password/,
		);
		try {
			credentials({ baseUrl: 'https://me:hunter22@gateway.example.com' });
		} catch (error) {
			expect((error as Error).message).not.toContain('hunter22');
		}
		try {
			credentials({ baseUrl: 'not a url me:hunter22@' });
		} catch (error) {
			expect((error as Error).message).not.toContain('hunter22');
		}
	});
});

describe('a network lost after the request left vs before', () => {
	/** Fails the socket of the next request whose headers went out, with `code`, as a lost route would. */
	function failAfterHeaders(code: string): () => void {
		let done = false;
		const onHeaders = (message: unknown) => {
			const { socket } = message as { socket: Socket };
			if (done) return;
			done = true;
			socket.destroy(Object.assign(new Error(`write ${code}`), { code }));
		};
		subscribe('undici:client:sendHeaders', onHeaders);
		return () => unsubscribe('undici:client:sendHeaders', onHeaders);
	}

	it('EHOSTUNREACH on a write that was handed to a socket: not retried, delivery unknown', async () => {
		const c = client();
		await c.token('wa');
		const stop = failAfterHeaders('EHOSTUNREACH');
		const error = await failure(c.call(endpoints.sendMessage, sendParams));
		stop();
		expect(error.causeCode).toBe('EHOSTUNREACH');
		expect(error.attempts).toBe(1);
		expect(error.deliveryUnknown).toBe(true);
		expect(error.message).toMatch(MAY_HAVE_BEEN_DELIVERED);
	});

	it('ENETUNREACH on a read: retried, and it succeeds', async () => {
		const stop = failAfterHeaders('ENETUNREACH');
		await expect(client().call(endpoints.checkNumber, { phone: SEND.phone })).resolves.toEqual({
			result: 'exists',
		});
		stop();
	});

	it('a write whose connection was never made is retried (it never left)', async () => {
		const closed = net.createServer();
		await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
		const port = (closed.address() as AddressInfo).port;
		await new Promise<void>((resolve) => closed.close(() => resolve()));
		const c = new ApiClient(
			credentials({ baseUrl: `http://127.0.0.1:${port}` }),
			new TokenCache(),
			{
				maxRetries: 2,
				baseDelayMs: 1,
				maxDelayMs: 2,
				maxRetryAfterSeconds: 1,
			},
		);
		const error = await failure(
			c.call(endpoints.updateAccount, { version: '1', whatsapp_number: '1', whatsapp_webhook: '' }),
		);
		expect(error.causeCode).toBe('ECONNREFUSED');
		expect(error.attempts).toBe(3);
		expect(error.deliveryUnknown).toBe(false);
	});
});

describe('fan-out', () => {
	const fanOut = (parallel: string, items: IDataObject[]) =>
		runWorkflow(
			singleNodeWorkflow(
				'messaging',
				{
					resource: 'message',
					operation: 'sendText',
					phone: SEND.phone,
					text: '={{ $json.text }}',
					// Pacing off: the test is about how many sends are in flight.
					options: sendOptions({ parallel }),
				},
				items,
			),
			sandboxCredential(sandbox.url),
		);

	it('Parallel Requests from an expression above 50 (={{100000}}) is refused before any send', async () => {
		const run = await fanOut('={{ 100000 }}', [{ text: 'm0' }, { text: 'm1' }]);
		expect(run.error?.message).toBe(
			'Field "Options → Parallel Requests" is 100000, not a whole number from 1 to 50 [item 0]',
		);
		expect(sandbox.ledger()).toHaveLength(0);
	});

	it('Parallel Requests 50 from an expression: at most 50 sends at once', async () => {
		sandbox.addFaults([
			{ kind: 'slow', delayMs: 150, match: { rpcMethod: 'sendMessage' }, times: 1000 },
		]);
		const run = await fanOut(
			'={{ 50 }}',
			Array.from({ length: 150 }, (_, i) => ({ text: `m${i}` })),
		);
		expect(run.error).toBeUndefined();
		expect(sandbox.ledger()).toHaveLength(150);
		expect(sandbox.stats().peakRequests).toBeGreaterThan(10);
		expect(sandbox.stats().peakRequests).toBeLessThanOrEqual(50);
	});

	it(`connections per origin are capped at ${MAX_CONNECTIONS_PER_ORIGIN} however many calls run at once`, async () => {
		await sandbox.restart(); // a new origin: no pooled connection of an earlier test counts
		sandbox.addFaults([
			{ kind: 'slow', delayMs: 100, match: { path: '/api/wa/2.0/check' }, times: 1000 },
		]);
		// A client each, as each execution makes its own: the cap is the process's, not a client's.
		const tokens = new TokenCache();
		await Promise.all(
			Array.from({ length: 300 }, () =>
				new ApiClient(credentials(), tokens).call(endpoints.checkNumber, { phone: SEND.phone }),
			),
		);
		expect(sandbox.stats().peakConnections).toBeLessThanOrEqual(MAX_CONNECTIONS_PER_ORIGIN);
		expect(sandbox.stats().peakConnections).toBeGreaterThan(MAX_CONNECTIONS_PER_ORIGIN / 2);
	});
});

describe('proxies (HTTP_PROXY / NO_PROXY), with a CONNECT proxy on loopback', () => {
	let proxy: ConnectProxy;
	let restore: () => void = () => undefined;

	beforeAll(async () => {
		proxy = await startConnectProxy();
	});
	afterEach(() => restore());
	afterAll(async () => {
		await proxy.close();
	});

	it('goes through HTTP_PROXY, and direct for a host in NO_PROXY', async () => {
		restore = withProxyEnvironment({ HTTP_PROXY: proxy.url, NO_PROXY: undefined });
		const before = proxy.tunnels.length;
		await expect(client().call(endpoints.checkNumber, { phone: SEND.phone })).resolves.toEqual({
			result: 'exists',
		});
		expect(proxy.tunnels.length).toBeGreaterThan(before);

		process.env.NO_PROXY = '127.0.0.1';
		const direct = proxy.tunnels.length;
		await expect(client().call(endpoints.checkNumber, { phone: SEND.phone })).resolves.toEqual({
			result: 'exists',
		});
		expect(proxy.tunnels.length).toBe(direct);
	});

	it("a proxy that is not running: its own error code, said as the proxy's", async () => {
		// Nothing listens on port 9 (discard) on loopback, as the Base URL test also takes.
		restore = withProxyEnvironment({ HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: undefined });
		const error = await failure(client().call(endpoints.checkNumber, { phone: SEND.phone }));
		expect(error.kind).toBe('network');
		expect(error.causeCode).toBe('ECONNREFUSED');
		expect(error.message).toMatch(/through the proxy \(HTTP\(S\)_PROXY\)/);
	});

	it('a proxy that cannot reach the service: a network error, and a write is retried (it never left)', async () => {
		restore = withProxyEnvironment({ HTTP_PROXY: proxy.url, NO_PROXY: undefined });
		const c = new ApiClient(credentials({ baseUrl: 'http://127.0.0.1:1' }), new TokenCache(), {
			maxRetries: 1,
			baseDelayMs: 1,
			maxDelayMs: 1,
			maxRetryAfterSeconds: 1,
		});
		const error = await failure(
			c.call(endpoints.updateAccount, { version: '1', whatsapp_number: '1', whatsapp_webhook: '' }),
		);
		expect(error.kind).toBe('network');
		expect(error.attempts).toBe(2);
		expect(error.deliveryUnknown).toBe(false);
	});
});

/** A proxy that takes the connection and never answers CONNECT. */
async function startSilentProxy(): Promise<{ url: string; close(): Promise<void> }> {
	const sockets = new Set<Socket>();
	const server = net.createServer((socket) => void sockets.add(socket));
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		close: async () => {
			for (const socket of sockets) socket.destroy();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

describe('a proxy that accepts and closes every connection (crashed, overloaded, a firewall reset)', () => {
	let proxy: DroppingProxy;
	let restore: () => void = () => undefined;
	beforeEach(async () => {
		proxy = await startDroppingProxy();
	});
	afterEach(async () => {
		restore();
		await proxy.close();
	});

	it.each([
		['a read', endpoints.checkNumber, { phone: SEND.phone }],
		['a send', endpoints.sendMessage, sendParams],
	] as const)(
		'%s fails within Request Timeout with a clear error, and the proxy sees one connection per attempt',
		async (_what, endpoint, params) => {
			const tokens = new TokenCache();
			// The token before the proxy: the send itself is what meets it.
			await new ApiClient(credentials(), tokens).token('wa');
			restore = withProxyEnvironment({ HTTP_PROXY: proxy.url, NO_PROXY: undefined });
			const c = new ApiClient(credentials({ timeoutSeconds: 2 }), tokens);
			const started = Date.now();
			const outcome = await Promise.race([
				failure(c.call(endpoint, params)),
				new Promise((resolve) => setTimeout(() => resolve('still waiting after 8 s'), 8_000)),
			]);
			const elapsed = Date.now() - started;
			expect(outcome).toBeInstanceOf(ApiError);
			const error = outcome as ApiError;
			expect(error.message).toMatch(
				/failed: the connection failed \(PROXY_CONNECTION_CLOSED: through the proxy \(HTTP\(S\)_PROXY\): other side closed\)$/,
			);
			// Nothing left this machine for the gateway: a send is known not delivered, and retried.
			expect(error.deliveryUnknown).toBe(false);
			expect(error.attempts).toBe(4);
			expect(elapsed).toBeLessThan(4_000);
			expect(proxy.connections()).toBe(error.attempts);
		},
	);

	it('a Send Text run ends with the error in bounded time', async () => {
		restore = withProxyEnvironment({ HTTP_PROXY: proxy.url, NO_PROXY: undefined });
		const started = Date.now();
		const run = await runWorkflow(
			singleNodeWorkflow('messaging', {
				resource: 'message',
				operation: 'sendText',
				phone: SEND.phone,
				text: 'hello',
			}),
			sandboxCredential(sandbox.url),
		);
		expect(String(run.error?.message)).toMatch(/PROXY_CONNECTION_CLOSED/);
		expect(Date.now() - started).toBeLessThan(10_000);
		expect(proxy.connections()).toBeLessThanOrEqual(8);
		expect(sandbox.ledger()).toHaveLength(0);
	});
});

describe('a proxy that never answers', () => {
	it("n8n's cancel ends a call whose proxy never answers CONNECT, at once", async () => {
		const silent = await startSilentProxy();
		const restore = withProxyEnvironment({ HTTP_PROXY: silent.url, NO_PROXY: undefined });
		try {
			const cancel = new AbortController();
			const c = new ApiClient(credentials({ timeoutSeconds: 30 }), new TokenCache());
			const call = failure(
				c.call(endpoints.checkNumber, { phone: SEND.phone }, { signal: cancel.signal }),
			);
			setTimeout(() => cancel.abort(), 300);
			const started = Date.now();
			const error = await call;
			expect(error.kind).toBe('aborted');
			expect(error.message).toMatch(/failed: the execution was cancelled/);
			expect(error.deliveryUnknown).toBe(false);
			expect(Date.now() - started).toBeLessThan(1_500);
		} finally {
			restore();
			await silent.close();
		}
	});

	it('Request Timeout ends a call whose proxy never answers CONNECT', async () => {
		const silent = await startSilentProxy();
		let restore = () => undefined as void;
		try {
			const tokens = new TokenCache();
			await new ApiClient(credentials(), tokens).token('wa');
			restore = withProxyEnvironment({ HTTP_PROXY: silent.url, NO_PROXY: undefined });
			const c = new ApiClient(credentials({ timeoutSeconds: 1 }), tokens, {
				maxRetries: 0,
				baseDelayMs: 1,
				maxDelayMs: 1,
				maxRetryAfterSeconds: 1,
			});
			const started = Date.now();
			const error = await failure(c.call(endpoints.sendMessage, sendParams));
			expect(error.kind).toBe('timeout');
			expect(error.deliveryUnknown).toBe(false);
			expect(Date.now() - started).toBeLessThan(2_500);
		} finally {
			restore();
			await silent.close();
		}
	});
});

void SEND;
