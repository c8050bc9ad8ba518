/**
 * No secret in any field of any output, error or log, in any form of the redaction's list (as is,
 * JSON-escaped, URL-encoded, base64, base64url, hex), from any path: the nodes run through n8n's
 * engine against a sandbox whose answers echo secrets the way odd servers do, and everything the
 * run produced (the whole run data, errors with descriptions, every line logged through n8n's
 * logger or the console) is scanned for every form of every secret.
 */
import http from 'http';
import type { AddressInfo } from 'net';

import { LoggerProxy, type IDataObject } from 'n8n-workflow';

import {
	runWorkflow,
	sandboxCredential,
	singleNodeWorkflow,
	type EngineRun,
} from '../harness/engine';
import { expectNoSecret, stringsIn } from '../harness/hostile';
import { stackEscapings } from '../harness/serverEscapes';
import { messagingRateApiTest } from '../../nodes/shared/credentialTest';
import { sharedTokenCache } from '../../nodes/shared/transport';
import { useSandbox } from '../harness/useSandbox';

/** A secret with every character that changes under JSON, HTML and URL encoding. */
const SECRET = 'se"cr\\et<&>+/ \'x9';
const ACCESS = 'AT-access-token-1234';
const REFRESH = 'RT-refresh-token-5678';
const PHONE = '6281288776713';

/** Deeper than the transport checks an answer (its bound is an internal, not a promise). */
const MAX_DEPTH_SEEN = 100;
const nestedIn = (depth: number, value: unknown): unknown =>
	depth === 0 ? value : { down: nestedIn(depth - 1, value) };
const listedIn = (depth: number, value: unknown): unknown =>
	depth === 0 ? value : [listedIn(depth - 1, value)];

/** Under keys that only resemble a secret's, or flags and blanks: kept as they are. */
const UNKEYED = {
	token_type: 'bearer',
	tokens_left: 3,
	password: false,
	secret: '',
	token: null,
	secretary: 'Ms Ada',
};

const logged: string[] = [];
const capture = (...args: unknown[]) =>
	logged.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));

beforeAll(() => {
	LoggerProxy.init({
		error: capture,
		warn: capture,
		info: capture,
		debug: capture,
		verbose: capture,
	} as never);
	for (const method of ['log', 'warn', 'error', 'info', 'debug'] as const)
		jest.spyOn(console, method).mockImplementation(capture);
});
afterAll(() => jest.restoreAllMocks());

const sandbox = useSandbox({
	accounts: [{ clientId: 'hostile-client', clientSecret: SECRET, status: 'authenticated' }],
	tokenAnswerExtra: {
		access_token: ACCESS,
		refresh_token: REFRESH,
		client_secret: SECRET,
		echoed: { deep: [`secret=${encodeURIComponent(SECRET)}`] },
		keyed: {
			'password': 'value-of-password',
			'passwd': 'value-of-passwd',
			'X-Api-Key': 'value-of-api-key',
			'Authorization': 'value-of-authorization',
			'Set-Cookie': 'value-of-cookie',
			'session_id': 'value-of-session',
			'userSecret': 'value-of-user-secret',
			'id_token': { nested: 'value-of-id-token' },
		},
		unkeyed: UNKEYED,
		nested: nestedIn(MAX_DEPTH_SEEN + 20, 'value-at-the-bottom'),
		nestedLists: listedIn(MAX_DEPTH_SEEN + 20, 'value-at-the-bottom-of-lists'),
	},
});

const credential = (secret = SECRET, clientId = 'hostile-client') =>
	sandboxCredential(sandbox.url, { clientId, clientSecret: secret });

/** Every secret this process knows of now: the client secret, the token answer's extras, every token issued. */
function secretsNow(extra: string[] = []): string[] {
	const bearer = sandbox
		.requests()
		.flatMap((r) => (r.authorization ? [r.authorization.replace(/^Bearer\s+/, '')] : []));
	return [SECRET, ACCESS, REFRESH, ...sharedTokenCache.values(), ...bearer, ...extra];
}

function expectClean(where: string, run: EngineRun, secrets = secretsNow()): void {
	expectNoSecret(`${where}: run data`, run.run, secrets);
	expectNoSecret(`${where}: error`, run.error, secrets);
	expectNoSecret(`${where}: logs`, logged, secrets);
}

const CONTINUE = { onError: 'continueRegularOutput' } as const;

describe('Get Token, both nodes: redacted by key and by value', () => {
	it.each([
		['messaging', { resource: 'auth', operation: 'getToken' }],
		['currencyRate', { resource: 'auth', operation: 'getToken' }],
	] as const)('%s', async (node, parameters) => {
		const run = await runWorkflow(singleNodeWorkflow(node, parameters), credential());
		expect(run.error).toBeUndefined();
		const json = run.output('Node')[0].json as IDataObject;
		expect(json.tokenRenewed).toBe(true);
		const response = json.response as IDataObject;
		expect(response.access_token).toBe('[redacted]');
		expect(response.refresh_token).toBe('[redacted]');
		expect(response.client_secret).toBe('[redacted]');
		expectClean(`Get Token (${node})`, run);
	});
});

describe("an answer's values under a secret's key, that no secret list names", () => {
	/** Get Token's output shows the token answer, after redaction. */
	const tokenResponse = async () => {
		const run = await runWorkflow(
			singleNodeWorkflow('messaging', { resource: 'auth', operation: 'getToken' }),
			credential(),
		);
		return run.output('Node')[0].json.response as IDataObject;
	};

	it('are redacted whatever the case or separators of the key; flags, blanks and other words stay', async () => {
		const response = await tokenResponse();
		expect(response.keyed).toEqual({
			'password': '[redacted]',
			'passwd': '[redacted]',
			'X-Api-Key': '[redacted]',
			'Authorization': '[redacted]',
			'Set-Cookie': '[redacted]',
			'session_id': '[redacted]',
			'userSecret': '[redacted]',
			'id_token': '[redacted]',
		});
		expect(response.unkeyed).toEqual(UNKEYED);
	});

	it('an answer nested deeper than is checked is cut there, not passed on unchecked', async () => {
		const response = await tokenResponse();
		const text = JSON.stringify(response);
		expect(text).toContain('[nested too deep]');
		expect(text).not.toContain('value-at-the-bottom');
		expect(text.split('[nested too deep]')).toHaveLength(3);
		// Ordinary nesting is kept whole.
		expect(response.echoed).toEqual({
			deep: ['secret=[redacted]'],
		});
	});
});

describe('errors that echo the secret in each form of the list', () => {
	const bytes = Buffer.from(SECRET);
	const stacks = stackEscapings(SECRET);
	const forms = {
		'as is': SECRET,
		'JSON-escaped': JSON.stringify({ client_secret: SECRET }),
		'JSON-escaped by PHP (`\\/`, upper-case `\\u` escapes)':
			stacks['PHP json_encode JSON_HEX_TAG|AMP|APOS|QUOT'],
		'URL-encoded': `https://x/?s=${encodeURIComponent(SECRET)}`,
		'URL-encoded by .NET (`+` for space, lower-case hex)': stacks['.NET HttpUtility.UrlEncode'],
		'base64': `Basic ${Buffer.from(`hostile-client:${SECRET}`).toString('base64')}`,
		'base64url': `state=${bytes.toString('base64url')}`,
		'hex': bytes.toString('hex'),
		'hex, upper case': bytes.toString('hex').toUpperCase(),
	};
	it.each(Object.entries(forms))('%s', async (_form, message) => {
		sandbox.addFaults([
			{ kind: 'rpcError', message: `bad request: ${message}`, match: { rpcMethod: 'sendMessage' } },
		]);
		const run = await runWorkflow(
			singleNodeWorkflow(
				'messaging',
				{ resource: 'message', operation: 'sendText', phone: PHONE, text: 'hi' },
				[{}],
				CONTINUE,
			),
			credential(),
		);
		expect(String(run.output('Node')[0].json.error)).toContain('[redacted]');
		expectClean('send error', run);
	});
});

describe('tokens', () => {
	it('a token just invalidated is still redacted when a later answer echoes it', async () => {
		const first = await runWorkflow(
			singleNodeWorkflow('messaging', {
				resource: 'message',
				operation: 'sendText',
				phone: PHONE,
				text: 'one',
			}),
			credential(),
		);
		expect(first.error).toBeUndefined();
		const oldToken = sandbox
			.requests()
			.find((r) => r.authorization)!
			.authorization!.replace(/^Bearer\s+/, '');
		sandbox.addFaults([
			{ kind: 'expireToken', match: { rpcMethod: 'sendMessage' } },
			{
				kind: 'rpcError',
				message: `token ${oldToken} was replaced`,
				match: { rpcMethod: 'sendMessage' },
			},
		]);
		const run = await runWorkflow(
			singleNodeWorkflow(
				'messaging',
				{ resource: 'message', operation: 'sendText', phone: PHONE, text: 'two' },
				[{}],
				CONTINUE,
			),
			credential(),
		);
		expect(String(run.output('Node')[0].json.error)).toMatch(/was replaced/);
		expectClean('retired token', run, secretsNow([oldToken]));
	});
});

describe('an answer quoted in an error', () => {
	it('a send answer with an unknown token under a credential-like key: the error shows the key, not the value', async () => {
		const unseen = 'refresh-7d1b0c9e4a';
		sandbox.addFaults([
			{
				kind: 'answer',
				result: { message: { queued: true, refresh_token: unseen } },
				match: { rpcMethod: 'sendMessage' },
				times: 1,
			},
		]);
		const run = await runWorkflow(
			singleNodeWorkflow('messaging', {
				resource: 'message',
				operation: 'sendText',
				phone: '+62 812 8877 6713',
				text: 'hi',
			}),
			credential(),
		);
		expect(`${run.error?.message} ${run.error?.description}`).toContain('refresh_token');
		expectNoSecret(
			'send error',
			[{ json: { message: run.error?.message, description: run.error?.description } }],
			[unseen],
		);
	});
});

describe("a trigger's secret in the account's webhook URL", () => {
	it('Account → Check and Update show the webhook without its query values', async () => {
		const triggerSecret = 'trigger-secret-7f3a9c';
		const webhookUrl = `https://n8n.example.com/webhook/abc/messaging?secret=${triggerSecret}`;
		const params = { whatsappNumber: '+62 812 8877 6713', webhookUrl };
		const update = await runWorkflow(
			singleNodeWorkflow('messaging', { resource: 'account', operation: 'update', ...params }),
			credential(),
		);
		const check = await runWorkflow(
			singleNodeWorkflow('messaging', { resource: 'account', operation: 'check', ...params }),
			credential(),
		);
		for (const run of [update, check]) {
			expect(run.error).toBeUndefined();
			expect(run.output('Node')[0].json.webhookUrl).toBe(
				'https://n8n.example.com/webhook/abc/messaging?secret=%5Bredacted%5D',
			);
			expectNoSecret('account output', run.output('Node'), [triggerSecret]);
		}
	});

	it('Account → Check: a gateway message that repeats the webhook URL in a sentence shows no query value', async () => {
		const triggerSecret = 'trigger-secret-5c1e88';
		const webhookUrl = `https://n8n.example.com/webhook/abc/messaging?token=${triggerSecret}`;
		sandbox.addFaults([
			{
				kind: 'answer',
				result: {
					message: {
						whatsapp_number: '6281288776713',
						whatsapp_webhook: webhookUrl,
						message: `Webhook is ${webhookUrl} (active)`,
					},
				},
				match: { rpcMethod: 'check' },
				times: 1,
			},
		]);
		const check = await runWorkflow(
			singleNodeWorkflow('messaging', {
				resource: 'account',
				operation: 'check',
				whatsappNumber: '+62 812 8877 6713',
				webhookUrl: 'https://typed.example/hook',
			}),
			credential(),
		);
		expect(check.error).toBeUndefined();
		expect(check.output('Node')[0].json.message).toMatch(
			/^Webhook is https:\/\/n8n\.example\.com\/webhook\/abc\/messaging\?token=\[redacted\] \(active\)$/,
		);
		expectNoSecret('account output', check.output('Node'), [triggerSecret]);
	});
});

describe('short secrets', () => {
	it('a 3-character secret is redacted where it is a whole value', async () => {
		await sandbox.restart({
			accounts: [{ clientId: 'short-client', clientSecret: 'ab3', status: 'authenticated' }],
			tokenAnswerExtra: { client_secret: 'ab3', note: 'ab3' },
		});
		sandbox.addFaults([
			{
				kind: 'rpcError',
				message: 'params were {"client_secret": "ab3"}',
				match: { rpcMethod: 'sendMessage' },
			},
		]);
		const token = await runWorkflow(
			singleNodeWorkflow('messaging', { resource: 'auth', operation: 'getToken' }),
			credential('ab3', 'short-client'),
		);
		const send = await runWorkflow(
			singleNodeWorkflow(
				'messaging',
				{ resource: 'message', operation: 'sendText', phone: PHONE, text: 'hi' },
				[{}],
				CONTINUE,
			),
			credential('ab3', 'short-client'),
		);
		for (const run of [token, send]) {
			const texts = stringsIn(run.run);
			expect(texts.filter((text) => text === 'ab3' || text.includes('"ab3"'))).toEqual([]);
		}
		expect((token.output('Node')[0].json.response as IDataObject).note).toBe('[redacted]');
		expect(String(send.output('Node')[0].json.error)).toMatch(/params were/);
		await sandbox.restart();
	});
});

describe('the JSON and URL encoders of server stacks (PHP, Java, .NET, Python, Go, Ruby)', () => {
	/** `/`, `&`, `<`, `>`, both quotes, a space, `+`, a backslash and non-ASCII. */
	const HOSTILE_SECRET = `p/a&s<s>"w'ö rd+\\9€`;
	const forms = Object.entries(stackEscapings(HOSTILE_SECRET));
	let echo = '';
	/** A gateway that echoes the secret in the form of `echo`: in its login refusal, a send's error, an account answer. */
	const server = http.createServer((req, res) => {
		let body = '';
		req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
		req.on('end', () => {
			const params = (JSON.parse(body || '{}') as { params?: IDataObject }).params ?? {};
			const answer = (content: unknown, status = 200) => {
				const text = JSON.stringify({ jsonrpc: '2.0', id: null, ...(content as object) });
				res.writeHead(status, { 'content-type': 'application/json' }).end(text);
			};
			if (req.url === '/api/wa/authentication') {
				if (params.client_id === 'refused')
					return answer({ error: { code: 200, message: `Access denied for secret ${echo}` } });
				return answer({ result: { connection: 'ok', token: 'tok-escapes-0001' } });
			}
			if (params.method === 'sendMessage') {
				res.writeHead(500, { 'content-type': 'text/html' });
				return res.end(`<html><body><p>client_secret=${echo} rejected</p></body></html>`);
			}
			return answer({
				result: { message: { whatsapp_number: '6281288776713', note: `you sent ${echo}` } },
			});
		});
	});
	let baseUrl = '';
	beforeAll(async () => {
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	});
	afterAll(async () => await new Promise((resolve) => server.close(resolve)));

	it.each(forms)(
		'%s: the credential Test message, a send error and an output',
		async (_stack, form) => {
			echo = form;
			const credentials = (clientId: string) => ({
				messagingRateApi: {
					baseUrl,
					clientId,
					clientSecret: HOSTILE_SECRET,
					bearerLifetimeMinutes: 60,
					timeoutSeconds: 5,
					ignoreSSLIssues: false,
				},
			});
			const test = await messagingRateApiTest.call({} as never, {
				id: '1',
				name: 'Hostile',
				type: 'messagingRateApi',
				data: credentials('refused').messagingRateApi,
			});
			expect(test.status).toBe('Error');
			expect(test.message).toMatch(/Access denied for secret \S*\[redacted\]/);
			expectNoSecret('credential Test', test, [HOSTILE_SECRET]);

			const send = await runWorkflow(
				singleNodeWorkflow(
					'messaging',
					{ resource: 'message', operation: 'sendText', phone: PHONE, text: 'hi' },
					[{}],
					CONTINUE,
				),
				credentials('escapes-client'),
			);
			expect(String(send.output('Node')[0].json.error)).toMatch(
				/client_secret=\S*\[redacted\]\S* rejected/,
			);
			const refusedLogin = await runWorkflow(
				singleNodeWorkflow('messaging', {
					resource: 'account',
					operation: 'check',
					whatsappNumber: PHONE,
					webhookUrl: 'https://typed.example/hook',
				}),
				credentials('refused'),
			);
			expect(refusedLogin.error?.message).toMatch(/Access denied for secret \S*\[redacted\]/);
			const check = await runWorkflow(
				singleNodeWorkflow('messaging', {
					resource: 'account',
					operation: 'check',
					whatsappNumber: PHONE,
					webhookUrl: 'https://typed.example/hook',
				}),
				credentials('escapes-client'),
			);
			expect(JSON.stringify(check.output('Node')[0].json)).toMatch(/you sent \S*\[redacted\]/);
			for (const [where, run] of [
				['send', send],
				['login', refusedLogin],
				['output', check],
			] as const)
				expectClean(`${where} (${_stack})`, run, [HOSTILE_SECRET]);
		},
	);
});
