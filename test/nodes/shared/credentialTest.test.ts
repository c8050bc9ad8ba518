/**
 * The credential's Test button (`messagingRateApiTest`, what n8n calls): the commonest mistakes
 * each get one line that says what is wrong and what to change; anything else is the gateway's
 * own words. Never the secret, nor Odoo's meaningless JSON-RPC code ("code 200").
 */
import { execFileSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { createServer as createHttpServer, type Server } from 'http';
import { createServer as createHttpsServer } from 'https';
import { createServer as createNetServer, type AddressInfo } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import type { ICredentialDataDecryptedObject, INodeCredentialTestResult } from 'n8n-workflow';

import { messagingRateApiTest } from '../../../nodes/shared/credentialTest';
import { useSandbox } from '../../harness/useSandbox';

const sandbox = useSandbox();
const SECRET = 'demo-secret';
const QR_ROUTE = 'Messaging → Session → Get QR Code';

async function testButton(
	fields: ICredentialDataDecryptedObject,
): Promise<INodeCredentialTestResult> {
	const data = { baseUrl: sandbox.url, clientId: 'demo-client', clientSecret: SECRET, ...fields };
	return await messagingRateApiTest.call({} as never, {
		id: '1',
		name: 'Sandbox',
		type: 'messagingRateApi',
		data,
	});
}

/** A failure as the user reads it: one line, a cause and a fix, nothing secret, no RPC code. */
async function failureOf(fields: ICredentialDataDecryptedObject): Promise<string> {
	const result = await testButton(fields);
	expect(result.status).toBe('Error');
	const message = result.message;
	expect(message).not.toMatch(/\n/);
	expect(message).toMatch(/: .+\.$/);
	expect(message).not.toMatch(/code 200/);
	expect(message).not.toContain(SECRET);
	expect(message).not.toContain(String(fields.clientSecret ?? SECRET));
	return message;
}

async function listen(server: Server): Promise<string> {
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closedPort(): Promise<number> {
	const server = createNetServer();
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	await new Promise((resolve) => server.close(resolve));
	return port;
}

const WEB_PAGE =
	'<!doctype html><html><head><title>Welcome to nginx!</title></head><body><h1>Welcome</h1></body></html>';

describe('the credential Test button', () => {
	it('succeeds with a right credential, with one login, one token check and the session read', async () => {
		const result = await testButton({});
		expect(result).toEqual({
			status: 'OK',
			message: 'Connection successful: a token was issued and accepted, and WhatsApp is connected',
		});
		expect(
			sandbox
				.requests()
				.map((request) => `${request.path} ${String(request.params?.method ?? '')}`),
		).toEqual(['/api/wa/authentication ', '/api/wa/protected ', '/api/wa/2.0/get status']);
	});

	it('a wrong Client Secret: says which fields to check, quotes the gateway, no "code 200"', async () => {
		const message = await failureOf({ clientSecret: 'not-the-secret' });
		expect(message).toMatch(
			/^The gateway refused the Client ID or Client Secret \("Odoo Server Error: Access Denied"\): copy both again/,
		);
		expect(sandbox.requests()).toHaveLength(1);
	});

	it('a wrong Client ID and Client Secret', async () => {
		expect(await failureOf({ clientId: 'someone-else', clientSecret: 'wrong' })).toMatch(
			/refused the Client ID or Client Secret/,
		);
	});

	it.each(['/api/wa/2.0', '/api/wa/2.0/', '/api/wa/authentication', '/API'])(
		'a Base URL with the API path %s: remove it (no request sent)',
		async (path) => {
			const message = await failureOf({ baseUrl: `${sandbox.url}${path}` });
			expect(message).toBe(
				`Base URL contains the API's path ("${new URL(sandbox.url + path).pathname.replace(/\/$/, '')}"): remove it and keep only the gateway's address, e.g. ${sandbox.url}.`,
			);
			expect(sandbox.requests()).toHaveLength(0);
		},
	);

	it('a Base URL with another path: the gateway is not there (HTTP 404)', async () => {
		const message = await failureOf({ baseUrl: `${sandbox.url}/gateway` });
		expect(message).toMatch(
			/^Base URL does not lead to the gateway's API \(HTTP 404 at .*\/gateway\/api\/…\): use only the gateway's address, e\.g\. http:\/\/127\.0\.0\.1:\d+\.$/,
		);
	});

	it('a wrong port: nothing listens there', async () => {
		const port = await closedPort();
		expect(await failureOf({ baseUrl: `http://127.0.0.1:${port}` })).toBe(
			`127.0.0.1:${port} cannot be reached (connection refused): check the host, the port and http:// or https:// in Base URL, and that the gateway is running.`,
		);
	});

	it('a wrong host: not found', async () => {
		expect(await failureOf({ baseUrl: 'http://no-such-host.invalid' })).toBe(
			'The host "no-such-host.invalid" was not found: check the spelling of Base URL.',
		);
	});

	it('https:// for a gateway that speaks http: check http:// or https://', async () => {
		const message = await failureOf({ baseUrl: sandbox.url.replace('http://', 'https://') });
		expect(message).toMatch(
			/^127\.0\.0\.1:\d+ cannot be reached \(.+\): check the host, the port and http:\/\/ or https:\/\/ in Base URL/,
		);
	});

	it('no answer within the timeout: check the port or raise Request Timeout', async () => {
		sandbox.addFaults([
			{ kind: 'slow', delayMs: 3_000, match: { path: '/api/wa/authentication' } },
		]);
		expect(await failureOf({ timeoutSeconds: 1 })).toMatch(
			/^No answer from 127\.0\.0\.1:\d+ within 1 s: check the port in Base URL, or raise "Request Timeout"/,
		);
	});

	it.each([
		[
			'a proxy error page',
			'html502',
			'/api/wa/authentication',
			'HTTP 502 Bad Gateway: "502 Bad Gateway"',
		],
		['rate limiting', 'http429', '/api/wa/authentication', 'HTTP 429'],
		['an answer cut off', 'malformedJson', '/api/wa/authentication', 'a body that is not JSON'],
		['an empty answer', 'emptyBody', '/api/wa/authentication', 'HTTP 200 with an empty body'],
		['a token refused on the check', 'expireToken', '/api/wa/protected', 'Session expired'],
	] as const)(
		"%s: the gateway's own words, check Base URL, test again",
		async (_case, kind, path, words) => {
			sandbox.addFaults([{ kind, times: 2, match: { path } }]);
			const message = await failureOf({});
			expect(message).toMatch(/^The gateway answered the test with an error \(/);
			expect(message).toContain(words);
			expect(message).toMatch(
				/\): check Base URL and test again; if it lasts, ask the gateway's operator\.$/,
			);
		},
	);

	it("a login answer without a token: the gateway's words", async () => {
		sandbox.addFaults([
			{
				kind: 'answer',
				result: { status: 'ok' },
				match: { path: '/api/wa/authentication' },
				times: 1,
			},
		]);
		expect(await failureOf({})).toBe(
			'The gateway answered the test with an error (the answer holds no token: "{"status":"ok"}"): check Base URL and test again; if it lasts, ask the gateway\'s operator.',
		);
	});

	it('a credential field that is wrong before anything is sent', async () => {
		const result = await testButton({ baseUrl: 'gateway.example.com' });
		expect(result).toEqual({
			status: 'Error',
			message: expect.stringMatching(/"Base URL" is not a valid URL .*e\.g\. https:\/\//),
		});
		expect(sandbox.requests()).toHaveLength(0);
	});
});

describe("the credential Test button says the WhatsApp session's state and what to do", () => {
	const accounts = useSandbox({
		accounts: [
			{ clientId: 'demo-client', clientSecret: SECRET, status: 'init' },
			{ clientId: 'scan-client', clientSecret: 'scan-secret', status: 'got qr code' },
		],
	});

	// n8n shows an OK result as its own "Connection tested successfully" and drops the message
	// (n8n 2.40.7's credential modal): only an Error shows what to do, under "Couldn't connect".
	it.each([
		['logged out', 'demo-client', SECRET, 'logged out, status "init"'],
		['waiting for a QR scan', 'scan-client', 'scan-secret', 'the gateway waits for a QR scan'],
	])(
		'an account %s: the settings are right, WhatsApp is not connected; run Get QR Code and scan',
		async (_state, clientId, clientSecret, why) => {
			const result = await messagingRateApiTest.call({} as never, {
				id: '1',
				name: 'Sandbox',
				type: 'messagingRateApi',
				data: { baseUrl: accounts.url, clientId, clientSecret },
			});
			expect(result).toEqual({
				status: 'Error',
				message: `These settings are right, but WhatsApp is not connected (${why}): run ${QR_ROUTE} and scan the image with WhatsApp → Linked devices. Currency Rate works already.`,
			});
		},
	);

	it("names the route npm run n8n's banner and the docs give for a logged-out account", () => {
		const banner = readFileSync(join(__dirname, '../../n8n/n8n-dev.ts'), 'utf8');
		expect(banner).toContain(`${QR_ROUTE} shows the QR image`);
		expect(banner).not.toContain('Session → Login');
		const docs = readFileSync(join(__dirname, '../../../docs/credential.md'), 'utf8');
		expect(docs).toContain(`run ${QR_ROUTE} and scan the image`);
		expect(docs).not.toContain('Session → Login');
	});
});

describe('the credential Test button against servers that are not the gateway', () => {
	let website: Server;
	let websiteHost = '';

	beforeAll(async () => {
		website = createHttpServer((_req, res) => {
			res.writeHead(200, { 'content-type': 'text/html' }).end(WEB_PAGE);
		});
		websiteHost = await listen(website);
	});
	afterAll(async () => {
		await new Promise((resolve) => website.close(resolve));
	});

	it('a Base URL that shows a web page: use the gateway address', async () => {
		expect(await failureOf({ baseUrl: `http://${websiteHost}` })).toBe(
			`Base URL does not lead to the gateway's API (it shows "Welcome to nginx!"): use only the gateway's address, e.g. http://${websiteHost}.`,
		);
	});

	describe('an HTTPS server with a self-signed certificate', () => {
		let folder = '';
		let secure: Server;
		let secureHost = '';

		beforeAll(async () => {
			// A throwaway certificate for 127.0.0.1, made for this test (nothing secret is committed).
			folder = mkdtempSync(join(tmpdir(), 'credential-test-tls-'));
			execFileSync(
				'openssl',
				[
					'req',
					'-x509',
					'-newkey',
					'ec',
					'-pkeyopt',
					'ec_paramgen_curve:prime256v1',
					'-nodes',
					'-days',
					'2',
					'-subj',
					'/CN=127.0.0.1',
					'-keyout',
					join(folder, 'key.pem'),
					'-out',
					join(folder, 'cert.pem'),
				],
				{ stdio: 'ignore' },
			);
			secure = createHttpsServer(
				{
					key: readFileSync(join(folder, 'key.pem')),
					cert: readFileSync(join(folder, 'cert.pem')),
				},
				(_req, res) => {
					res.writeHead(200, { 'content-type': 'text/html' }).end(WEB_PAGE);
				},
			);
			secureHost = await listen(secure);
		});
		afterAll(async () => {
			await new Promise((resolve) => secure.close(resolve));
			rmSync(folder, { recursive: true, force: true });
		});

		it('http:// for a server that speaks https: check http:// or https://', async () => {
			expect(await failureOf({ baseUrl: `http://${secureHost}` })).toMatch(
				/^127\.0\.0\.1:\d+ cannot be reached \(.+\): check the host, the port and http:\/\/ or https:\/\/ in Base URL/,
			);
		});

		it('the certificate is not trusted: fix it, or Ignore SSL Issues for a test server', async () => {
			expect(await failureOf({ baseUrl: `https://${secureHost}` })).toMatch(
				/^The HTTPS certificate of 127\.0\.0\.1:\d+ is not trusted \([A-Z_]+\): fix the server's certificate, or turn on "Ignore SSL Issues"/,
			);
		});

		it('with Ignore SSL Issues the connection is made (and the page is named)', async () => {
			expect(await failureOf({ baseUrl: `https://${secureHost}`, ignoreSSLIssues: true })).toMatch(
				/^Base URL does not lead to the gateway's API \(it shows "Welcome to nginx!"\)/,
			);
		});
	});
});
