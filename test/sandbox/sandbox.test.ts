/**
 * Tests of the sandbox itself, over real HTTP on 127.0.0.1 with undici's `request()`
 * (WHATWG fetch refuses GET bodies; this API needs them).
 */
import { createHash } from 'crypto';
import http from 'http';
import type { AddressInfo } from 'net';
import { Agent, request } from 'undici';
import { startSandbox } from '../../sandbox/server';
import type { FaultRule, Sandbox, SandboxOptions } from '../../sandbox/types';

const ID = 'demo-client';
const SECRET = 'demo-secret';
const PHONE = '6281288776713';
const VERSION = '16.0.1.3';

let agent: Agent;
let sandbox: Sandbox;

interface Reply {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	text: string;
	// eslint-disable-next-line @typescript-eslint/no-explicit-any
	json: any;
}

interface CallOptions {
	method?: string;
	token?: string;
	headers?: Record<string, string>;
	/** Sent verbatim instead of `{"params": ...}`; `null` sends no body at all. */
	rawBody?: string | null;
	signal?: AbortSignal;
}

async function call(
	path: string,
	params: Record<string, unknown> = {},
	opts: CallOptions = {},
): Promise<Reply> {
	const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
	if (opts.token) headers.authorization = `Bearer ${opts.token}`;
	const body =
		opts.rawBody === undefined ? JSON.stringify({ params }) : (opts.rawBody ?? undefined);
	const res = await request(`${sandbox.url}${path}`, {
		method: (opts.method ?? 'GET') as 'GET',
		headers,
		body,
		dispatcher: agent,
		signal: opts.signal,
	});
	const text = await res.body.text();
	let json: unknown;
	try {
		json = JSON.parse(text);
	} catch {
		json = undefined;
	}
	return { status: res.statusCode, headers: res.headers, text, json };
}

async function control(method: string, path: string, body?: unknown): Promise<Reply> {
	return call(
		`/__sandbox/${path}`,
		{},
		{ method, rawBody: body === undefined ? null : JSON.stringify(body) },
	);
}

async function waToken(clientId = ID, clientSecret = SECRET): Promise<string> {
	const reply = await call('/api/wa/authentication', {
		client_id: clientId,
		client_secret: clientSecret,
	});
	return reply.json.result.token;
}

async function rateToken(): Promise<string> {
	const reply = await call('/api/rate/1.0/authentication', {
		client_id: ID,
		client_secret: SECRET,
	});
	return reply.json.result.token;
}

function sendMessage(token: string, phone = PHONE, body = 'Hello') {
	return call(
		'/api/wa/2.0/post',
		{ method: 'sendMessage', client_secret: SECRET, version: VERSION, phone, body },
		{ method: 'POST', token },
	);
}

function sendFile(token: string, body: string, filename = 'note.txt') {
	return call(
		'/api/wa/2.0/post',
		{
			method: 'sendFile',
			client_secret: SECRET,
			version: VERSION,
			phone: PHONE,
			body,
			filename,
			caption: 'A file',
		},
		{ method: 'POST', token },
	);
}

function updateAccount(webhook: string, number = PHONE) {
	return call(
		'/api/wa/2.0/post',
		{
			method: 'update',
			client_secret: SECRET,
			version: VERSION,
			whatsapp_number: number,
			whatsapp_webhook: webhook,
		},
		{ method: 'POST' },
	);
}

async function restart(options: SandboxOptions): Promise<void> {
	await sandbox.close();
	sandbox = await startSandbox(options);
}

function expectRpcError(reply: Reply, dataName: string, message: string, status = 200): void {
	expect(reply.status).toBe(status);
	expect(reply.json).toMatchObject({
		jsonrpc: '2.0',
		id: null,
		error: { data: { name: dataName, message } },
	});
	expect(reply.json.result).toBeUndefined();
}

beforeAll(() => {
	agent = new Agent({ keepAliveTimeout: 1000 });
});

afterAll(async () => {
	await agent.close();
});

beforeEach(async () => {
	sandbox = await startSandbox();
});

afterEach(async () => {
	await sandbox.close();
});

describe('messaging endpoints', () => {
	it('issues a wa token and accepts it on protected', async () => {
		const auth = await call('/api/wa/authentication', { client_id: ID, client_secret: SECRET });
		expect(auth.status).toBe(200);
		expect(auth.json).toEqual({
			jsonrpc: '2.0',
			id: null,
			result: { connection: 'ok', token: expect.any(String) },
		});
		const token = auth.json.result.token;
		expect(token.length).toBeGreaterThan(16);

		const prot = await call('/api/wa/protected', { client_secret: SECRET }, { token });
		expect(prot.json.result).toEqual({ valid: true, message: 'Token is valid' });
		expect(sandbox.stats().tokensIssued).toEqual({ wa: 1, rate: 0 });
	});

	it('adds expires_in only when asked', async () => {
		await restart({ tokenExpiresInField: true, tokenTtlMs: 120_000 });
		const auth = await call('/api/wa/authentication', { client_id: ID, client_secret: SECRET });
		expect(auth.json.result.expires_in).toBe(120);
	});

	it('reports the limit and counts sends', async () => {
		await restart({ blockLimit: 1 });
		const before = await call('/api/wa/2.0/limit', { client_secret: SECRET });
		expect(before.json.result).toEqual({ block: false, block_limit: 1, limit_qty: 0 });

		const token = await waToken();
		expect((await sendMessage(token)).json.result.message.sent).toBe(true);
		const after = await call('/api/wa/2.0/limit', { client_secret: SECRET });
		expect(after.json.result).toEqual({ block: true, block_limit: 1, limit_qty: 1 });

		const refused = await sendMessage(token);
		expect(refused.json.result).toEqual({
			message: { sent: false, message: 'Message limit reached' },
		});
		expect(sandbox.ledger()).toHaveLength(1);
	});

	it('checks numbers', async () => {
		const exists = await call('/api/wa/2.0/check', { phone: PHONE });
		expect(exists.json.result).toEqual({ result: 'exists' });
		const missing = await call('/api/wa/2.0/check', { phone: '6281200000000' });
		expect(missing.json.result).toEqual({ result: 'not exists' });
		expectRpcError(
			await call('/api/wa/2.0/check', { phone: '+62 812' }),
			'odoo.exceptions.ValidationError',
			'Invalid phone number',
		);

		await restart({ unregisteredNumbers: [PHONE] });
		expect((await call('/api/wa/2.0/check', { phone: PHONE })).json.result.result).toBe(
			'not exists',
		);
		expect((await call('/api/wa/2.0/check', { phone: '6281200000000' })).json.result.result).toBe(
			'exists',
		);
	});

	it('walks the QR flow: init → got qr code → scan → authenticated', async () => {
		await restart({ accounts: [{ clientId: ID, clientSecret: SECRET }] });
		const token = await waToken();
		const status = () =>
			call('/api/wa/2.0/get', { method: 'status', client_secret: SECRET }, { token });
		expect((await status()).json.result).toEqual({ accountStatus: 'init' });

		const refused = await sendMessage(token);
		expect(refused.json.result.message).toEqual({
			sent: false,
			message: 'WhatsApp is not connected: scan the QR code first',
		});

		const qr = await call('/api/wa/2.0/qr', { client_secret: SECRET });
		const qrCode: string = qr.json.result.qrCode;
		expect(qrCode).toMatch(/^2@[^,]+,[^,]+==,[^,]+==$/);
		expect((await call('/api/wa/2.0/qr', { client_secret: SECRET })).json.result.qrCode).toBe(
			qrCode,
		);
		expect((await status()).json.result).toEqual({ accountStatus: 'got qr code', qrCode });
		expect(
			(await call('/api/wa/2.0/get', { method: 'login', client_secret: SECRET })).json.result,
		).toEqual({
			accountStatus: 'got qr code',
			qrCode,
		});

		sandbox.scan();
		expect((await call('/api/wa/2.0/qr', { client_secret: SECRET })).json.result).toEqual({
			device_status: 'connected',
			accountStatus: 'authenticated',
		});
		expect(
			(await call('/api/wa/2.0/get', { method: 'login', client_secret: SECRET })).json.result,
		).toEqual({
			accountStatus: 'authenticated',
			device_status: 'connected',
		});
		expect((await status()).json.result).toEqual({ accountStatus: 'authenticated' });
		expect((await sendMessage(token)).json.result.message.sent).toBe(true);
	});

	it('moves a fresh account to got qr code on login, and can render the QR as a PNG data URI', async () => {
		await restart({
			accounts: [{ clientId: ID, clientSecret: SECRET, status: 'init' }],
			qrAsDataUri: true,
		});
		const login = await call('/api/wa/2.0/get', { method: 'login', client_secret: SECRET });
		expect(login.json.result.accountStatus).toBe('got qr code');
		expect(login.json.result.qrCode).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
		expect(sandbox.accounts()[0].status).toBe('got qr code');
	});

	it('updates and checks the account registration', async () => {
		const token = await waToken();
		const check = (number: string) =>
			call(
				'/api/wa/2.0/post',
				{
					method: 'check',
					client_secret: SECRET,
					version: VERSION,
					whatsapp_number: number,
					whatsapp_webhook: 'x',
				},
				{ method: 'POST', token },
			);
		expect((await check(PHONE)).json.result.message).toEqual({
			whatsapp_number: null,
			whatsapp_webhook: null,
			accountStatus: 'authenticated',
			registered: false,
		});

		const update = await updateAccount('https://example.test/hook');
		expect(update.json.result).toEqual({
			message: {
				updated: true,
				whatsapp_number: PHONE,
				whatsapp_webhook: 'https://example.test/hook',
			},
		});
		expect((await check(PHONE)).json.result.message).toMatchObject({
			registered: true,
			whatsapp_webhook: 'https://example.test/hook',
		});
		expect((await check('6281111111111')).json.result.message.registered).toBe(false);

		await updateAccount('');
		expect(sandbox.accounts()[0].whatsappWebhook).toBeUndefined();
	});

	it('sends a text message and records it in the ledger', async () => {
		const token = await waToken();
		const reply = await sendMessage(token, PHONE, 'Hi there');
		const id: string = reply.json.result.message.id;
		expect(reply.json.result.message).toMatchObject({ sent: true, message: 'Message sent' });
		expect(id).toMatch(new RegExp(`^true_${PHONE}@c\\.us_[0-9A-F]{20}$`));
		expect(sandbox.ledger()).toEqual([
			{
				id,
				clientId: ID,
				kind: 'text',
				phone: PHONE,
				text: 'Hi there',
				version: VERSION,
				at: expect.any(String),
			},
		]);
		expect((await sendMessage(token, '12ab')).json.result.message).toEqual({
			sent: false,
			message: 'Invalid phone number',
		});
	});

	it('sends a file and keeps only its facts', async () => {
		const token = await waToken();
		const content = Buffer.from('hello file');
		const reply = await sendFile(token, `data:text/plain;base64,${content.toString('base64')}`);
		expect(reply.json.result.message.sent).toBe(true);
		const [entry] = sandbox.ledger();
		expect(entry).toMatchObject({
			kind: 'file',
			caption: 'A file',
			file: {
				mimeType: 'text/plain',
				filename: 'note.txt',
				size: content.length,
				sha256: createHash('sha256').update(content).digest('hex'),
			},
		});
		expect(JSON.stringify(entry)).not.toContain(content.toString('base64'));
	});

	it('refuses files that are not strict base64 data URIs', async () => {
		const token = await waToken();
		const invalid = { sent: false, message: 'Invalid file: body must be a base64 data URI' };
		expect((await sendFile(token, 'aGVsbG8=')).json.result.message).toEqual(invalid);
		expect((await sendFile(token, 'data:text/plain;base64,aGVsbG8')).json.result.message).toEqual(
			invalid,
		);
		expect((await sendFile(token, 'data:text/plain;base64,aGV$bG8=')).json.result.message).toEqual(
			invalid,
		);
		expect((await sendFile(token, 'data:text/plain;base64,')).json.result.message).toEqual({
			sent: false,
			message: 'Invalid file: empty',
		});
		expect(sandbox.ledger()).toHaveLength(0);
	});

	it('takes a large file body and summarises it in the request log', async () => {
		const token = await waToken();
		const content = Buffer.alloc(12 * 1024 * 1024, 7);
		const base64 = content.toString('base64');
		const reply = await sendFile(
			token,
			`data:application/octet-stream;base64,${base64}`,
			'big.bin',
		);
		expect(reply.json.result.message.sent).toBe(true);
		expect(sandbox.ledger()[0].file?.size).toBe(content.length);
		const logged = sandbox.requests().at(-1);
		expect(logged?.params?.body).toBe(`<${base64.length + 37} chars>`);
		expect(logged?.bodyBytes).toBeGreaterThan(base64.length);
	});
});

describe('rate endpoints', () => {
	const getKurs = (token: string, provider: string, fn = 'getkurs') =>
		call(
			'/api/rate/1.0/get',
			{
				version: '1.0',
				client_id: ID,
				client_secret: SECRET,
				function: fn,
				currency_id_provider: provider,
			},
			{ token },
		);

	it('issues a rate token', async () => {
		const auth = await call('/api/rate/1.0/authentication', {
			client_id: ID,
			client_secret: SECRET,
		});
		expect(auth.json.result).toEqual({ status: 'success', token: expect.any(String) });
		expect(sandbox.stats().tokensIssued.rate).toBe(1);
	});

	it.each(['kmk', 'bca', 'bni', 'bri', 'cimb'])('answers getkurs for %s', async (provider) => {
		const reply = await getKurs(await rateToken(), provider);
		expect(reply.json.result.success).toBe(true);
		const rows: Array<Record<string, string | number>> = reply.json.result.response;
		expect(rows.length).toBeGreaterThanOrEqual(8);
		expect(rows.length).toBeLessThanOrEqual(12);
		for (const code of ['USD', 'EUR', 'SGD', 'JPY', 'GBP', 'AUD', 'CNY', 'MYR']) {
			expect(rows.map((row) => row.name)).toContain(code);
		}
		for (const row of rows) {
			expect(row.provider).toBe(provider);
			const [buy, sell, avg] = [row.rate_buy, row.rate_sell, row.rate_avg].map(Number);
			expect(buy).toBeGreaterThan(0);
			expect(sell).toBeGreaterThanOrEqual(buy);
			expect(avg).toBeCloseTo((buy + sell) / 2, 1);
			if (provider === 'cimb') expect(row.rate_buy).toMatch(/^\d+\.\d{2}$/);
			else expect(typeof row.rate_buy).toBe('number');
			if (provider === 'kmk') expect(new Set([buy, sell, avg]).size).toBe(1);
		}
		const usd = Number(rows.find((row) => row.name === 'USD')?.rate_avg);
		expect(usd).toBeGreaterThan(10_000);
		expect(usd).toBeLessThan(20_000);
	});

	it('answers unknown providers and functions', async () => {
		const token = await rateToken();
		expect((await getKurs(token, 'xyz')).json.result).toEqual({
			success: false,
			message: 'Unknown provider: xyz',
		});
		expectRpcError(
			await getKurs(token, 'bca', 'convert'),
			'werkzeug.exceptions.BadRequest',
			'Unknown function: convert',
		);
	});

	it('keeps tokens per group', async () => {
		const wa = await waToken();
		const reply = await getKurs(wa, 'bca');
		expect(reply.status).toBe(401);
		expect(reply.json.error.data.message).toBe('Invalid token');
		const rate = await rateToken();
		expect(
			(await call('/api/wa/protected', { client_secret: SECRET }, { token: rate })).status,
		).toBe(401);
	});
});

describe('validation', () => {
	it('rejects a GET without a body, and bodies without params', async () => {
		const noBody = await call('/api/wa/2.0/limit', {}, { rawBody: null });
		expectRpcError(
			noBody,
			'werkzeug.exceptions.BadRequest',
			'Request body must be JSON of the form {"params": {...}}',
			400,
		);
		expect((await call('/api/wa/2.0/limit', {}, { rawBody: '{"client_secret":"x"}' })).status).toBe(
			400,
		);
		expect((await call('/api/wa/2.0/limit', {}, { rawBody: '{not json' })).status).toBe(400);
		const entry = sandbox.requests()[0];
		expect(entry).toMatchObject({ status: 400, rejected: true, bodyBytes: 0 });
		expect(entry.rejectReason).toContain('params');
	});

	it('rejects a non-JSON content type with 415', async () => {
		const reply = await call(
			'/api/wa/2.0/limit',
			{ client_secret: SECRET },
			{ headers: { 'content-type': 'text/plain' } },
		);
		expect(reply.status).toBe(415);
		expect(reply.json.error.code).toBe(415);
	});

	it('rejects missing, unexpected and non-string params', async () => {
		expectRpcError(
			await call('/api/wa/2.0/limit', {}),
			'werkzeug.exceptions.BadRequest',
			'Missing parameter: client_secret',
		);
		expectRpcError(
			await call('/api/wa/2.0/limit', { client_secret: SECRET, extra: '1' }),
			'werkzeug.exceptions.BadRequest',
			'Unexpected parameter: extra',
		);
		expectRpcError(
			await call('/api/wa/2.0/limit', { client_secret: 42 }),
			'werkzeug.exceptions.BadRequest',
			'Parameter client_secret must be a string',
		);
		expect(sandbox.requests().map((entry) => entry.rejectReason)).toEqual([
			'Missing parameter: client_secret',
			'Unexpected parameter: extra',
			'Parameter client_secret must be a string',
		]);
	});

	it('rejects wrong credentials with AccessDenied', async () => {
		const reply = await call('/api/wa/authentication', { client_id: ID, client_secret: 'wrong' });
		expectRpcError(reply, 'odoo.exceptions.AccessDenied', 'Access Denied');
		expect(reply.json.error.code).toBe(200);
		expectRpcError(
			await call('/api/wa/2.0/limit', { client_secret: 'wrong' }),
			'odoo.exceptions.AccessDenied',
			'Access Denied',
		);
		expect(sandbox.stats().tokensIssued.wa).toBe(0);
	});

	it('answers 401 without a bearer token or with an unknown one', async () => {
		const missing = await call('/api/wa/protected', { client_secret: SECRET });
		expect(missing.status).toBe(401);
		expect(missing.json.error).toMatchObject({
			code: 401,
			message: 'Unauthorized',
			data: { message: 'Missing bearer token' },
		});
		const unknown = await call('/api/wa/protected', { client_secret: SECRET }, { token: 'nope' });
		expect(unknown.status).toBe(401);
		expect(unknown.json.error.data.message).toBe('Invalid token');
	});

	it('refuses a token of another client', async () => {
		await restart({
			accounts: [
				{ clientId: 'a', clientSecret: 'sa', status: 'authenticated' },
				{ clientId: 'b', clientSecret: 'sb', status: 'authenticated' },
			],
		});
		const tokenA = await waToken('a', 'sa');
		const reply = await call('/api/wa/protected', { client_secret: 'sb' }, { token: tokenA });
		expect(reply.status).toBe(401);
		expect(
			(await call('/api/wa/protected', { client_secret: 'sa' }, { token: tokenA })).status,
		).toBe(200);
	});

	it('answers an expired session with code 100 (expireTokens and TTL)', async () => {
		const token = await waToken();
		sandbox.expireTokens();
		const reply = await call('/api/wa/protected', { client_secret: SECRET }, { token });
		expectRpcError(
			reply,
			'odoo.http.SessionExpiredException',
			'Session expired: token is no longer valid',
		);
		expect(reply.json.error).toMatchObject({ code: 100, message: 'Odoo Session Expired' });

		// Long enough that a loaded machine still makes the first call in time.
		await restart({ tokenTtlMs: 1000 });
		const shortLived = await waToken();
		expect(
			(await call('/api/wa/protected', { client_secret: SECRET }, { token: shortLived })).json
				.result.valid,
		).toBe(true);
		await new Promise((resolve) => setTimeout(resolve, 1100));
		expect(
			(await call('/api/wa/protected', { client_secret: SECRET }, { token: shortLived })).json.error
				.code,
		).toBe(100);
	});

	it('answers unknown paths with a werkzeug 404 page and wrong methods with 405', async () => {
		const notFound = await call('/api/wa/nothing', { client_secret: SECRET });
		expect(notFound.status).toBe(404);
		expect(notFound.headers['content-type']).toContain('text/html');
		expect(notFound.text).toContain('<title>404 Not Found</title>');

		const wrongMethod = await call(
			'/api/wa/2.0/limit',
			{ client_secret: SECRET },
			{ method: 'POST' },
		);
		expect(wrongMethod.status).toBe(405);
		expect(wrongMethod.headers.allow).toBe('GET');
		expect(wrongMethod.json.error.code).toBe(405);
		expect(sandbox.requests().map((entry) => entry.rejected)).toEqual([true, true]);
	});

	it('selects POST operations by params.method', async () => {
		const token = await waToken();
		const base = { client_secret: SECRET, version: VERSION, phone: PHONE, body: 'x' };
		expectRpcError(
			await call('/api/wa/2.0/post', { ...base, method: 'explode' }, { method: 'POST', token }),
			'werkzeug.exceptions.BadRequest',
			'Unknown method: explode',
		);
		expectRpcError(
			await call('/api/wa/2.0/post', base, { method: 'POST', token }),
			'werkzeug.exceptions.BadRequest',
			'Missing parameter: method',
		);
		// sendMessage params on sendFile miss filename and caption
		expectRpcError(
			await call('/api/wa/2.0/post', { ...base, method: 'sendFile' }, { method: 'POST', token }),
			'werkzeug.exceptions.BadRequest',
			'Missing parameter: filename',
		);
	});
});

describe('session cookie and request log', () => {
	it('sets a session cookie once and recognises it', async () => {
		const first = await call('/api/wa/2.0/limit', { client_secret: SECRET });
		const setCookie = String(first.headers['set-cookie']);
		const match = /^session_id=([^;]+); Path=\/; HttpOnly$/.exec(setCookie);
		expect(match).not.toBeNull();
		const sessionId = match![1];

		const second = await call(
			'/api/wa/2.0/limit',
			{ client_secret: SECRET },
			{ headers: { cookie: `session_id=${sessionId}` } },
		);
		expect(second.headers['set-cookie']).toBeUndefined();
		const unknown = await call(
			'/api/wa/2.0/limit',
			{ client_secret: SECRET },
			{ headers: { cookie: 'session_id=forged' } },
		);
		expect(unknown.headers['set-cookie']).toBeDefined();
		expect(sandbox.requests().map((entry) => entry.sessionCookie)).toEqual([
			undefined,
			sessionId,
			'forged',
		]);
	});

	it('logs API calls with their facts but not control calls', async () => {
		const token = await waToken();
		await sendMessage(token);
		await control('GET', 'ledger');
		const log = sandbox.requests();
		expect(log).toHaveLength(2);
		expect(log[1]).toMatchObject({
			seq: 2,
			method: 'POST',
			path: '/api/wa/2.0/post',
			contentType: 'application/json',
			authorization: `Bearer ${token}`,
			status: 200,
			params: { method: 'sendMessage', phone: PHONE },
		});
		expect(log[0].authorization).toBeUndefined();
		expect(sandbox.stats().requestsByPath).toEqual({
			'/api/wa/authentication': 1,
			'/api/wa/2.0/post': 1,
		});
	});
});

describe('faults', () => {
	const limit = () => call('/api/wa/2.0/limit', { client_secret: SECRET });

	it('http429 answers 429 with Retry-After and an error envelope, then passes', async () => {
		sandbox.addFaults([{ kind: 'http429', retryAfterSeconds: 3 }]);
		const limited = await limit();
		expect(limited.status).toBe(429);
		expect(limited.headers['retry-after']).toBe('3');
		expect(limited.json.error.code).toBe(429);
		expect((await limit()).status).toBe(200);
		expect(sandbox.requests()[0]).toMatchObject({ status: 429, fault: 'http429' });
	});

	it.each([
		['html502', 502, '502 Bad Gateway'],
		['html503', 503, '503 Service Temporarily Unavailable'],
		['html504', 504, '504 Gateway Time-out'],
	] as const)('%s answers an nginx HTML page', async (kind, status, title) => {
		sandbox.addFaults([{ kind }]);
		const reply = await limit();
		expect(reply.status).toBe(status);
		expect(reply.headers['content-type']).toContain('text/html');
		expect(reply.text).toBe(
			`<html><head><title>${title}</title></head><body><center><h1>${title}</h1></center><hr><center>nginx</center></body></html>`,
		);
	});

	it('dropBeforeProcessing closes the socket and records nothing', async () => {
		const token = await waToken();
		sandbox.addFaults([{ kind: 'dropBeforeProcessing' }]);
		await expect(sendMessage(token)).rejects.toThrow();
		expect(sandbox.ledger()).toHaveLength(0);
		expect(sandbox.requests().at(-1)).toMatchObject({ status: 0, fault: 'dropBeforeProcessing' });
	});

	it('dropAfterProcessing records the send, then closes the socket', async () => {
		const token = await waToken();
		sandbox.addFaults([{ kind: 'dropAfterProcessing', match: { rpcMethod: 'sendMessage' } }]);
		await expect(sendMessage(token)).rejects.toThrow();
		expect(sandbox.ledger()).toEqual([
			expect.objectContaining({ phone: PHONE, fault: 'dropAfterProcessing' }),
		]);
		expect(sandbox.requests().at(-1)).toMatchObject({ status: 0, fault: 'dropAfterProcessing' });
	});

	it.each([
		['http500AfterProcessing', 500],
		['http503AfterProcessing', 503],
		['rpcErrorAfterProcessing', 200],
	] as const)(
		'%s records the send, then answers %i with an error envelope',
		async (kind, status) => {
			const token = await waToken();
			sandbox.addFaults([{ kind, message: 'Worker lost', match: { rpcMethod: 'sendMessage' } }]);
			const reply = await sendMessage(token);
			expect(reply.status).toBe(status);
			expect(reply.json.error).toMatchObject({ code: 200, message: 'Worker lost' });
			expect(sandbox.ledger()).toEqual([expect.objectContaining({ phone: PHONE, fault: kind })]);
			expect((await sendMessage(token)).json.result.message.sent).toBe(true);
		},
	);

	it('an error after processing does not apply to a request refused first', async () => {
		const token = await waToken();
		sandbox.expireTokens();
		sandbox.addFaults([{ kind: 'rpcErrorAfterProcessing', match: { rpcMethod: 'sendMessage' } }]);
		const reply = await sendMessage(token);
		expect(reply.json.error.code).toBe(100);
		expect(sandbox.ledger()).toHaveLength(0);
		expect(sandbox.requests().at(-1)?.fault).toBeUndefined();
	});

	it('slow answers after the delay', async () => {
		const token = await waToken();
		sandbox.addFaults([{ kind: 'slow', delayMs: 300 }]);
		const started = Date.now();
		const reply = await sendMessage(token);
		expect(Date.now() - started).toBeGreaterThanOrEqual(280);
		expect(reply.json.result.message.sent).toBe(true);
		expect(sandbox.ledger()[0].fault).toBe('slow');
	});

	it('slow drops the answer when the client gave up', async () => {
		const token = await waToken();
		sandbox.addFaults([{ kind: 'slow', delayMs: 300 }]);
		const impatient = call(
			'/api/wa/2.0/post',
			{ method: 'sendMessage', client_secret: SECRET, version: VERSION, phone: PHONE, body: 'x' },
			{ method: 'POST', token, signal: AbortSignal.timeout(50) },
		);
		await expect(impatient).rejects.toThrow();
		await new Promise((resolve) => setTimeout(resolve, 400));
		expect(
			sandbox.requests().find((entry) => entry.fault === 'slow' && entry.status === 0),
		).toBeDefined();
	});

	it('expireToken invalidates the token used', async () => {
		const token = await waToken();
		sandbox.addFaults([{ kind: 'expireToken' }]);
		const first = await call('/api/wa/protected', { client_secret: SECRET }, { token });
		expect(first.json.error.code).toBe(100);
		const second = await call('/api/wa/protected', { client_secret: SECRET }, { token });
		expect(second.json.error.code).toBe(100);
		const fresh = await waToken();
		expect(
			(await call('/api/wa/protected', { client_secret: SECRET }, { token: fresh })).json.result
				.valid,
		).toBe(true);
	});

	it('sentFalse answers sent false without recording, and is not spent on other calls', async () => {
		sandbox.addFaults([{ kind: 'sentFalse', message: 'Phone offline' }]);
		const token = await waToken();
		expect(sandbox.requests()[0].fault).toBeUndefined();
		const reply = await sendMessage(token);
		expect(reply.json.result).toEqual({ message: { sent: false, message: 'Phone offline' } });
		expect(sandbox.ledger()).toHaveLength(0);
		expect((await sendMessage(token)).json.result.message.sent).toBe(true);
	});

	it('malformedJson, emptyBody and rpcError answer 200 with bodies a client must survive', async () => {
		sandbox.addFaults([
			{ kind: 'malformedJson' },
			{ kind: 'emptyBody' },
			{ kind: 'rpcError', message: 'Boom' },
		]);
		const malformed = await limit();
		expect(malformed.status).toBe(200);
		expect(malformed.text).toBe('{"jsonrpc":"2.0","id":null,"result":{"mess');
		expect(() => JSON.parse(malformed.text)).toThrow();

		const empty = await limit();
		expect(empty.status).toBe(200);
		expect(empty.headers['content-type']).toBe('application/json');
		expect(empty.text).toBe('');

		const rpc = await limit();
		expect(rpc.json.error).toMatchObject({ code: 200, message: 'Boom', data: { message: 'Boom' } });
		expect((await limit()).json.result.block).toBe(false);
	});

	it('honours times and match', async () => {
		sandbox.addFaults([
			{ kind: 'html502', times: 2, match: { path: '/api/wa/2.0/limit', method: 'GET' } },
		]);
		expect((await call('/api/wa/2.0/check', { phone: PHONE })).status).toBe(200);
		expect((await limit()).status).toBe(502);
		expect((await limit()).status).toBe(502);
		expect((await limit()).status).toBe(200);
	});

	it('fires probability rules reproducibly from the seed', async () => {
		const rule: FaultRule = { kinds: ['html502', 'html503'], probability: 0.5, seed: 42 };
		const run = async () => {
			sandbox.reset();
			sandbox.addFaults([rule]);
			const statuses: number[] = [];
			for (let i = 0; i < 12; i++) statuses.push((await limit()).status);
			return statuses;
		};
		const first = await run();
		expect(await run()).toEqual(first);
		expect(first).toContain(200);
		expect(first.some((status) => status === 502 || status === 503)).toBe(true);
	});

	it('never faults control calls, and clearFaults removes rules', async () => {
		sandbox.addFaults([{ kind: 'html502', probability: 1 }]);
		expect((await control('GET', 'stats')).status).toBe(200);
		expect((await limit()).status).toBe(502);
		sandbox.clearFaults();
		expect((await limit()).status).toBe(200);
	});

	it('rejects unknown fault kinds', () => {
		expect(() => sandbox.addFaults([{ kind: 'explode' as never }])).toThrow('Unknown fault kind');
	});
});

describe('control API over HTTP', () => {
	it('drives faults, tokens, scans, resets and reads state', async () => {
		expect((await control('POST', 'faults', { rules: [{ kind: 'html503' }] })).json).toEqual({
			ok: true,
		});
		expect((await call('/api/wa/2.0/limit', { client_secret: SECRET })).status).toBe(503);
		await control('POST', 'faults', { rules: [{ kind: 'html503' }] });
		await control('DELETE', 'faults');
		expect((await call('/api/wa/2.0/limit', { client_secret: SECRET })).status).toBe(200);

		const token = await waToken();
		await sendMessage(token);
		expect((await control('GET', 'ledger')).json).toHaveLength(1);
		expect((await control('GET', 'requests')).json).toHaveLength(4);
		expect((await control('GET', 'stats')).json.tokensIssued.wa).toBe(1);

		await control('POST', 'expire-tokens');
		expect(
			(await call('/api/wa/protected', { client_secret: SECRET }, { token })).json.error.code,
		).toBe(100);

		await control('POST', 'reset');
		expect((await control('GET', 'ledger')).json).toEqual([]);
		expect(sandbox.stats().tokensIssued.wa).toBe(0);

		await restart({ accounts: [{ clientId: ID, clientSecret: SECRET, status: 'init' }] });
		await control('POST', 'scan', { clientId: ID });
		expect((await control('GET', 'accounts')).json[0].status).toBe('authenticated');
		expect((await control('POST', 'faults', { rules: 'nope' })).status).toBe(400);
		expect((await control('GET', 'nothing')).status).toBe(404);
	});
});

describe('who may call the sandbox (it holds the accounts and their secrets)', () => {
	const port = () => new URL(sandbox.url).port;

	it('answers only the loopback names and the host it was told about: a rebound name gets 421', async () => {
		const token = await waToken();
		await sendMessage(token);
		for (const path of ['/__sandbox/accounts', '/__sandbox/ledger', '/__sandbox/phone']) {
			const refused = await call(path, {}, { headers: { host: `evil.example:${port()}` } });
			expect(refused.status).toBe(421);
			expect(refused.json).toEqual({
				error: `Host "evil.example:${port()}" is not served: this sandbox answers 127.0.0.1, localhost and [::1] (any port); start it with --allow-host evil.example (option allowedHosts) to reach it by that name`,
				hosts: ['127.0.0.1', 'localhost', '[::1]'],
			});
			expect(refused.text).not.toContain(SECRET);
		}
		const api = await call(
			'/api/wa/2.0/limit',
			{ client_secret: SECRET },
			{ token, headers: { host: 'evil.example' } },
		);
		expect(api.status).toBe(421);
		expect(sandbox.requests().filter((entry) => entry.path === '/api/wa/2.0/limit')).toEqual([]);
		expect((await call('/files/a.pdf', {}, { headers: { host: 'evil.example' } })).status).toBe(
			421,
		);

		for (const host of [
			`localhost:${port()}`,
			`[::1]:${port()}`,
			'LOCALHOST',
			`127.0.0.1:${port()}`,
		])
			expect((await call('/__sandbox/ledger', {}, { headers: { host } })).json).toHaveLength(1);

		await restart({ allowedHosts: ['sandbox.test'] });
		expect(
			(await call('/__sandbox/ledger', {}, { headers: { host: 'sandbox.test:8069' } })).status,
		).toBe(200);
		expect(
			(await call('/__sandbox/ledger', {}, { headers: { host: 'evil.example' } })).json.hosts,
		).toEqual(['127.0.0.1', 'localhost', '[::1]', 'sandbox.test']);
	});

	it('takes control calls as JSON only: a text/plain or bare POST (what any page may send) changes nothing', async () => {
		const token = await waToken();
		for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', undefined]) {
			const response = await request(`${sandbox.url}/__sandbox/webhook`, {
				method: 'POST',
				headers: contentType ? { 'content-type': contentType } : {},
				body: '{"clientId": "demo-client", "url": "https://evil.example/hook"}',
				dispatcher: agent,
			});
			expect(response.statusCode).toBe(415);
			expect(await response.body.json()).toEqual({
				error: `Control calls take JSON: send Content-Type: application/json (got ${contentType ?? 'none'})`,
			});
			const reset = await request(`${sandbox.url}/__sandbox/expire-tokens`, {
				method: 'POST',
				headers: contentType ? { 'content-type': contentType } : {},
				dispatcher: agent,
			});
			expect(reset.statusCode).toBe(415);
			await reset.body.dump();
		}
		expect(sandbox.accounts()[0].whatsappWebhook).toBeUndefined();
		expect(
			(await call('/api/wa/protected', { client_secret: SECRET }, { token })).json.result,
		).toBeDefined();
	});

	it('refuses a control call from another site (its Origin, or Sec-Fetch-Site: cross-site); its own page passes', async () => {
		const otherSites: Array<Record<string, string>> = [
			{ origin: 'http://evil.example' },
			{ origin: 'http://localhost:5678' },
			{ origin: 'null' },
			{ 'sec-fetch-site': 'cross-site' },
		];
		for (const headers of otherSites) {
			const refused = await call(
				'/__sandbox/webhook',
				{},
				{ method: 'POST', headers, rawBody: '{"url": "https://evil.example/hook"}' },
			);
			expect(refused.status).toBe(403);
			expect(refused.json.error).toMatch(
				/^Control calls come from the sandbox's own pages or from programs, not from another site \(/,
			);
		}
		expect(sandbox.accounts()[0].whatsappWebhook).toBeUndefined();

		const own = await call(
			'/__sandbox/webhook',
			{},
			{
				method: 'POST',
				headers: { 'origin': sandbox.url, 'sec-fetch-site': 'same-origin' },
				rawBody: '{"url": "https://n8n.example/hook"}',
			},
		);
		expect(own.json).toEqual({ ok: true });
		expect(sandbox.accounts()[0].whatsappWebhook).toBe('https://n8n.example/hook');
	});
});

describe('incoming messages', () => {
	interface Received {
		url: string;
		headers: http.IncomingHttpHeaders;
		body: string;
	}
	let receiver: http.Server;
	let received: Received[];
	let hookUrl: string;

	beforeEach(async () => {
		received = [];
		receiver = http.createServer((req, res) => {
			const chunks: Buffer[] = [];
			req.on('data', (chunk: Buffer) => chunks.push(chunk));
			req.on('end', () => {
				received.push({
					url: req.url ?? '',
					headers: req.headers,
					body: Buffer.concat(chunks).toString(),
				});
				res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
			});
		});
		await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
		hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhook`;
	});

	afterEach(async () => {
		receiver.closeAllConnections();
		await new Promise((resolve) => receiver.close(resolve));
	});

	it('refuses to deliver without a registered webhook', async () => {
		await expect(sandbox.deliverIncoming({ message: 'hi' })).rejects.toThrow(
			/no registered webhook/,
		);
	});

	it('posts a JSON-RPC text event to the registered webhook', async () => {
		await updateAccount(hookUrl);
		const result = await sandbox.deliverIncoming({
			message: 'Halo',
			apiKey: 'k1',
			headers: { 'x-shared-secret': 's3' },
			query: { token: 'q1' },
		});
		expect(result).toEqual({ url: `${hookUrl}?token=q1`, status: 200, body: '{"ok":true}' });
		expect(received).toHaveLength(1);
		expect(received[0].url).toBe('/webhook?token=q1');
		expect(received[0].headers['content-type']).toBe('application/json');
		expect(received[0].headers['x-shared-secret']).toBe('s3');
		const payload = JSON.parse(received[0].body);
		expect(payload.jsonrpc).toBe('2.0');
		expect(payload.params).toEqual({
			'uuid': expect.stringMatching(/^[0-9a-f-]{36}$/),
			'x-api-key': 'k1',
			'sender': '6281200000001',
			'recipient': PHONE,
			'message': 'Halo',
			'sendername': 'Sandbox Sender',
			'senderkeyhash': expect.stringMatching(/^[0-9a-f]+$/),
			'recipientkeyhash': expect.stringMatching(/^[0-9a-f]+$/),
			'type': 'text',
		});
	});

	it('posts media as a data URI, flat when asked, and raw bodies verbatim', async () => {
		await restart({ flatWebhookPayload: true });
		await updateAccount(hookUrl);
		const png = Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64');
		await sandbox.deliverIncoming({
			fileBase64: png,
			mimeType: 'image/png',
			filename: 'pic.png',
			sender: '6281300000002',
		});
		const flat = JSON.parse(received[0].body);
		expect(flat.params).toBeUndefined();
		expect(flat).toMatchObject({
			type: 'image',
			message: 'undefined',
			filename: 'pic.png',
			body: `data:image/png;base64,${png}`,
			sender: '6281300000002',
		});
		expect(flat['x-api-key']).toBeUndefined();

		const viaControl = await control('POST', 'incoming', { rawBody: '{"broken' });
		expect(viaControl.json).toMatchObject({ status: 200, url: hookUrl });
		expect(received[1].body).toBe('{"broken');
	});
});

describe('lifecycle', () => {
	it('close() ends kept-alive connections promptly', async () => {
		await call('/api/wa/2.0/limit', { client_secret: SECRET });
		const started = Date.now();
		await sandbox.close();
		expect(Date.now() - started).toBeLessThan(1000);
		await expect(call('/api/wa/2.0/limit', { client_secret: SECRET })).rejects.toThrow();
		sandbox = await startSandbox(); // afterEach closes it
	});
});
