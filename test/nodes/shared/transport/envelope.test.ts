/**
 * What an answer to a write shows the gateway did (WRITE_ANSWERS in nodes/shared/transport/
 * envelope.ts), through n8n's real engine against the sandbox, which records each send before it
 * answers: only an answer showing the gateway did not act retries a send or gives it back, so
 * that it is sent later, once; after any other the message may have been delivered, and neither
 * Retry On Fail nor running the same input again sends it twice. The table in
 * docs/delivery-and-scale.md is the code's, row by row.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import type { IDataObject, INode, INodeParameters } from 'n8n-workflow';

import { WRITE_ANSWERS } from '../../../../nodes/shared/transport/envelope';
import type { FaultKind, FaultRule } from '../../../../sandbox/types';
import {
	PHONE,
	apiRequests,
	mappedSendText,
	orderItems,
	runMessaging,
	tokenRequests,
} from '../../../harness/messagingNode';
import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../../../harness/engine';
import { useSandbox } from '../../../harness/useSandbox';
import { useVirtualTime } from '../../../harness/virtualTime';

const sandbox = useSandbox();
// Version 2's pause between messages takes virtual time.
useVirtualTime();

// Skip Repeats Within is on by default.
const CONTINUE: Partial<INode> = { onError: 'continueRegularOutput' };
const RETRY_ON_FAIL: Partial<INode> = {
	retryOnFail: true,
	maxTries: 3,
	waitBetweenTries: 0,
};
const MAYBE_DELIVERED =
	'the message may have been delivered, so it was not sent again: check the recipient before sending it again';

/** How often each order's message is in the sandbox's ledger. */
const recorded = () =>
	orderItems(3).map(({ text }) => sandbox.ledger().filter((entry) => entry.text === text).length);
const sendRequests = () =>
	apiRequests(sandbox).filter((entry) => entry.params?.method === 'sendMessage').length;

/** The second of three sends meets `kind` once. */
const faultSecondSend = (kind: FaultKind) =>
	sandbox.addFaults([
		{ kind, match: { rpcMethod: 'sendMessage' }, skip: 1, times: 1, retryAfterSeconds: 0 },
	]);

describe('an answer after the gateway acted: the message may have been delivered', () => {
	const acted: Array<[string, FaultKind, number]> = [
		['HTTP 500', 'http500AfterProcessing', 500],
		['HTTP 503 (a router gave up while the gateway went on)', 'http503AfterProcessing', 503],
		['HTTP 200 with a JSON-RPC error', 'rpcErrorAfterProcessing', 200],
	];

	it.each(acted)(
		'%s: sent once, the error says it may have been delivered, a re-run skips it',
		async (_answer, kind, status) => {
			faultSecondSend(kind);
			const first = await runMessaging(sandbox, mappedSendText(), orderItems(3), CONTINUE);
			expect(recorded()).toEqual([1, 1, 1]);
			expect(sendRequests()).toBe(3);
			const failed = first.output('Node')[1].json;
			expect(failed.error).toContain(MAYBE_DELIVERED);
			expect(failed.details).toMatchObject({ item: 1, httpStatus: status, deliveryUnknown: true });

			// n8n's Retry of the execution, or a re-run: the same input.
			const again = await runMessaging(sandbox, mappedSendText(), orderItems(3), CONTINUE);
			expect(again.output('Node').map((item) => item.json.skipped)).toEqual([true, true, true]);
			expect(again.output('Node')[1].json.reason).toContain('may have been delivered');
			expect(recorded()).toEqual([1, 1, 1]);
		},
	);

	it.each(acted)('%s: Retry On Fail does not send it again', async (_answer, kind) => {
		faultSecondSend(kind);
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(3), RETRY_ON_FAIL);
		// The first try stops at item 1 (On Error → Stop); the next skips items 0 and 1, in place,
		// and sends item 2.
		expect(run.error).toBeUndefined();
		const out = run.output('Node').map((item) => item.json);
		expect(out.map((json) => json.skipped ?? false)).toEqual([true, true, false]);
		expect(out[1].reason).toMatch(
			/may have been delivered by an earlier try of this execution \(Retry On Fail\)/,
		);
		expect(recorded()).toEqual([1, 1, 1]);
		expect(sendRequests()).toBe(3);
	});

	it("n8n's Stop while the answer is awaited: a re-run does not send it again", async () => {
		sandbox.addFaults([{ kind: 'slow', delayMs: 1_500, match: { rpcMethod: 'sendMessage' } }]);
		const workflow = singleNodeWorkflow('messaging', mappedSendText(), orderItems(1));
		const stopped = await runWorkflow(workflow, sandboxCredential(sandbox.url), {
			stopWhen: () => sandbox.ledger().length > 0,
		});
		expect(stopped.run.status).toBe('canceled');
		sandbox.clearFaults();
		const again = await runMessaging(sandbox, mappedSendText(), orderItems(1));
		expect(again.output('Node')[0].json.skipped).toBe(true);
		expect(recorded()[0]).toBe(1);
	});

	it('Account → Update: a 503 after the gateway acted is not repeated, and says it may have been done', async () => {
		sandbox.addFaults([
			{ kind: 'http503AfterProcessing', match: { rpcMethod: 'update' }, retryAfterSeconds: 0 },
		]);
		const run = await runMessaging(
			sandbox,
			{
				resource: 'account',
				operation: 'update',
				whatsappNumber: PHONE,
				webhookUrl: 'https://n8n.example.com/webhook/incoming',
			},
			[{}],
			{ onError: 'continueRegularOutput' },
		);
		const failed = run.output('Node')[0].json;
		expect(failed.error).toContain(
			'the gateway may have done it, so it was not repeated: check the gateway before trying again',
		);
		expect((failed.details as IDataObject).deliveryUnknown).toBe(true);
		expect(apiRequests(sandbox).filter((entry) => entry.params?.method === 'update')).toHaveLength(
			1,
		);
		expect(sandbox.accounts()[0].whatsappWebhook).toBe('https://n8n.example.com/webhook/incoming');
	});
});

describe('an answer showing the gateway did not act: sent later, once', () => {
	it.each([
		['HTTP 429', 'http429'],
		['a JSON-RPC "session expired" (a new token, one more try)', 'expireToken'],
		['`sent: false`', 'sentFalse'],
	] as const)('%s: Retry On Fail sends it, once', async (_answer, kind) => {
		faultSecondSend(kind);
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(3), RETRY_ON_FAIL);
		expect(run.error).toBeUndefined();
		// Sent by this try, or by an earlier one (skipped, naming it): each exactly once.
		expect(run.output('Node').map((item) => item.json.sent ?? item.json.skipped)).toEqual([
			true,
			true,
			true,
		]);
		expect(recorded()).toEqual([1, 1, 1]);
	});

	it('`sent: false`: the error says it was not sent, and a re-run sends it, once', async () => {
		faultSecondSend('sentFalse');
		const first = await runMessaging(sandbox, mappedSendText(), orderItems(3), CONTINUE);
		expect(first.output('Node')[1].json.details).toMatchObject({ deliveryUnknown: false });
		expect(recorded()).toEqual([1, 0, 1]);
		const again = await runMessaging(sandbox, mappedSendText(), orderItems(3), CONTINUE);
		expect(again.output('Node').map((item) => item.json.sent ?? 'skipped')).toEqual([
			'skipped',
			true,
			'skipped',
		]);
		expect(recorded()).toEqual([1, 1, 1]);
	});

	it('HTTP 401 (a token the gateway no longer knows): a new token, the send once', async () => {
		await runMessaging(sandbox, mappedSendText(), [{ phone: PHONE, text: 'Hello' }]);
		// The gateway forgets every token; this process still holds the one it was given.
		sandbox.reset();
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(3), CONTINUE);
		expect(run.output('Node').map((item) => item.json.sent)).toEqual([true, true, true]);
		expect(apiRequests(sandbox).map((entry) => entry.status)).toEqual([401, 200, 200, 200]);
		expect(recorded()).toEqual([1, 1, 1]);
	});
});

describe('the table in docs/delivery-and-scale.md', () => {
	it('is the one the code decides with, row by row', () => {
		const docs = readFileSync(join(__dirname, '../../../../docs/delivery-and-scale.md'), 'utf8');
		const table = docs
			.split('<!-- write-answers-table')[1]
			.split('<!-- /write-answers-table -->')[0];
		const rows = table
			.split('\n')
			.filter((line) => line.startsWith('| ') && !line.startsWith('| Answer'))
			.map((line) => line.split('|').map((cell) => cell.trim()))
			.map((cells) => [cells[1], cells[2]]);
		expect(rows).toEqual(Object.values(WRITE_ANSWERS));
	});
});

describe("what an answer's words show the gateway did", () => {
	const sendOne = () => runMessaging(sandbox, mappedSendText(), orderItems(1), CONTINUE);
	const answerSend = (result: unknown) =>
		sandbox.addFaults([{ kind: 'answer', match: { rpcMethod: 'sendMessage' }, result }]);
	const rawSend = (raw: { status?: number; body: string }) =>
		sandbox.addFaults([{ kind: 'raw', match: { rpcMethod: 'sendMessage' }, ...raw }]);

	it.each([
		['`sent` as a word with spaces and capitals', { message: { sent: ' True ' } }],
		['`sent` as the number 1', { sent: 1 }],
		['`sent: true` beside `error: null`', { message: { sent: true }, error: null }],
		['`sent: true` beside `error: false`', { message: { sent: true }, error: false }],
	])('%s: sent', async (_answer, result) => {
		answerSend(result);
		const run = await sendOne();
		expect(run.output('Node')[0].json).toMatchObject({ sent: true });
	});

	it.each([
		['an `error` alone', { error: 'Number is not on WhatsApp' }, 'Number is not on WhatsApp'],
		[
			'`sent: false`, its blank words passed over',
			{ sent: false, message: '  ', error: 'Number is banned' },
			'Number is banned',
		],
		['`sent: false` with no words', { message: { sent: false } }, '{"message":{"sent":false}}'],
		['`success: false`', { success: false, message: 'Quota reached' }, 'Quota reached'],
	])('%s: certainly not sent, said so, and a re-run sends it', async (_answer, result, words) => {
		answerSend(result);
		const first = await sendOne();
		expect(first.output('Node')[0].json.error).toContain(`the message was not sent: "${words}"`);
		expect(first.output('Node')[0].json.details).toMatchObject({ deliveryUnknown: false });
		const again = await sendOne();
		expect(again.output('Node')[0].json).toMatchObject({ sent: true });
		expect(recorded()[0]).toBe(1);
	});

	const rpcErrorOnce = (rule: { message?: string; code?: number | string; name?: string }) =>
		sandbox.addFaults([{ kind: 'rpcError', match: { rpcMethod: 'sendMessage' }, ...rule }]);

	it.each([
		['code 100', { code: 100 }],
		['code 401', { code: 401 }],
		['code 403', { code: 403 }],
		['a SessionExpired error name', { name: 'odoo.http.SessionExpiredException' }],
		['"unauthorised" in its words', { message: 'Unauthorised access.' }],
		['"token" and "not valid" in one sentence', { message: 'Hello. The token is not valid.' }],
	])('a JSON-RPC error with %s refuses the token: a new one, the send once', async (_, rule) => {
		rpcErrorOnce(rule);
		const run = await sendOne();
		expect(run.output('Node')[0].json).toMatchObject({ sent: true });
		expect(tokenRequests(sandbox)).toHaveLength(2);
		expect(recorded()[0]).toBe(1);
	});

	it.each([
		['"token" and "expired" in two sentences', { message: 'Token sent. Campaign expired.' }, ':'],
		['code 42', { code: 42 }, ' (code 42):'],
		['code 200 (how Odoo answers every error)', { code: 200 }, ':'],
		['a code in text', { code: '42' }, ':'],
	])('a JSON-RPC error with %s: may have been delivered, no new token', async (_, rule, code) => {
		rpcErrorOnce(rule);
		const run = await sendOne();
		const error = run.output('Node')[0].json.error as string;
		expect(error).toContain(`failed: the server answered an error${code} "`);
		expect(error).toContain(MAYBE_DELIVERED);
		expect(tokenRequests(sandbox)).toHaveLength(1);
	});

	it.each([
		[
			'a JSON-RPC error given as text',
			{ body: '{"error":"Database locked"}' },
			'failed: the server answered an error: "Database locked"',
			'rpc',
		],
		[
			'HTTP 500 with JSON that is no JSON-RPC error: its JSON, as it is',
			{ status: 500, body: '{"detail":"boom <b>x</b>"}' },
			'failed: HTTP 500 Internal Server Error: "{"detail":"boom <b>x</b>"}"',
			'http',
		],
		['HTTP 400', { status: 400, body: '{}' }, 'failed: HTTP 400 Bad Request: "{}"', 'http'],
		[
			'HTTP 300',
			{ status: 300, body: '{}' },
			'failed: HTTP 300: the server redirects, and redirects are not followed.',
			'http',
		],
		[
			'a redirect without a Location',
			{ status: 302, body: '{}' },
			'failed: HTTP 302: the server redirects, and redirects are not followed.',
			'http',
		],
		[
			'an answer that does not say "sent"',
			{ body: '{"jsonrpc":"2.0","id":null,"result":{"message":{"id":"x1"}}}' },
			'failed: the answer does not say the message was sent: "{"message":{"id":"x1"}}"',
			'unexpected-answer',
		],
		[
			'a body of white space',
			{ body: ' \n ' },
			'failed: HTTP 200 with an empty body',
			'invalid-response',
		],
	])('%s: may have been delivered, in words', async (_answer, raw, words, kind) => {
		rawSend(raw);
		const failed = (await sendOne()).output('Node')[0].json;
		expect(failed.error).toContain(words);
		expect(failed.error).toContain(MAYBE_DELIVERED);
		expect(failed.details).toMatchObject({ kind, deliveryUnknown: true });
	});

	it('HTTP 403 refuses the token: a new one, the send once', async () => {
		rawSend({ status: 403, body: '{}' });
		const run = await sendOne();
		expect(run.output('Node')[0].json).toMatchObject({ sent: true });
		expect(tokenRequests(sandbox)).toHaveLength(2);
		expect(recorded()[0]).toBe(1);
	});

	it('a read that fails says nothing of delivery: Get Usage Limit answered HTTP 500', async () => {
		sandbox.addFaults([
			{ kind: 'raw', match: { path: '/api/wa/2.0/limit' }, status: 500, body: '{}' },
		]);
		const run = await runMessaging(
			sandbox,
			{ resource: 'account', operation: 'getLimit' },
			[{}],
			CONTINUE,
		);
		const failed = run.output('Node')[0].json;
		expect(failed.error).toBe(
			'Get Usage Limit (GET /api/wa/2.0/limit) failed: HTTP 500 Internal Server Error: "{}" [item 0]',
		);
		expect(failed.details).toMatchObject({ deliveryUnknown: false });
	});

	it("keeps the first 300 characters of the server's words, and says when it cut them", async () => {
		rpcErrorOnce({ message: 'x'.repeat(301) });
		const cut = (await sendOne()).output('Node')[0].json.error as string;
		expect(cut).toContain(`"${'x'.repeat(300)}…"`);
		rpcErrorOnce({ message: 'y'.repeat(300) });
		// Another message: the first may have been delivered, so a re-run would skip it.
		const other = await runMessaging(sandbox, mappedSendText(), orderItems(1, 1), CONTINUE);
		const whole = other.output('Node')[0].json.error as string;
		expect(whole).toContain(`"${'y'.repeat(300)}"`);
	});
});

describe('what a failed request tells the user to do', () => {
	const usage = { resource: 'account', operation: 'getLimit' };
	const check = {
		resource: 'account',
		operation: 'check',
		whatsappNumber: PHONE,
		webhookUrl: 'https://n8n.example.com/webhook/fix-hint',
	};
	const send = { resource: 'message', operation: 'sendText', phone: PHONE, text: 'Fix hint' };
	afterEach(() => sandbox.clearFaults());
	const always = (rule: FaultRule): FaultRule[] => [{ times: 20, retryAfterSeconds: 0, ...rule }];
	const cases: Array<[string, INodeParameters, FaultRule[], IDataObject, RegExp]> = [
		[
			'the server cannot be reached: check the Base URL',
			usage,
			[],
			{ baseUrl: 'http://127.0.0.1:9' },
			/could not be reached\. Check the Base URL/,
		],
		[
			'no answer in time: raise Request Timeout',
			usage,
			always({ kind: 'slow', delayMs: 1_000, match: { path: '/api/wa/2.0/limit' } }),
			{ timeoutSeconds: 0.2 },
			/No answer within the credential's timeout\. Raise "Request Timeout"/,
		],
		[
			'the token refused again after a new one: check the Client ID and Secret',
			check,
			always({ kind: 'expireToken', match: { rpcMethod: 'check' } }),
			{},
			/Authentication failed even with a new token\. Check the Client ID and Client Secret/,
		],
		[
			'rate-limited: lower Parallel Requests',
			usage,
			always({ kind: 'http429', match: { path: '/api/wa/2.0/limit' } }),
			{},
			/rate-limiting this account\. Lower "Parallel Requests"/,
		],
		[
			'not JSON: the Base URL may point at the wrong site',
			usage,
			always({
				kind: 'raw',
				match: { path: '/api/wa/2.0/limit' },
				body: '<html><title>Welcome</title></html>',
			}),
			{},
			/did not answer JSON\. The Base URL may point at the wrong site/,
		],
		[
			'a send that may have been done: check the recipient before sending again',
			send,
			always({ kind: 'http500AfterProcessing', match: { rpcMethod: 'sendMessage' } }),
			{},
			/It was not retried, to never send it twice; check the recipient/,
		],
		[
			'a login answer without a token: the gateway may have changed',
			check,
			always({ kind: 'answer', match: { path: '/api/wa/authentication' }, result: {} }),
			{},
			/not in a form this node can read \(its words are in the error\)\. If it persists/,
		],
		...[401, 403].map((status): (typeof cases)[number] => [
			`the login refused with HTTP ${status}: check the Client ID and Secret`,
			check,
			always({ kind: 'raw', match: { path: '/api/wa/authentication' }, status, body: '{}' }),
			{},
			/Authentication failed even with a new token\. Check the Client ID and Client Secret/,
		]),
	];

	it.each(cases)('%s', async (_case, parameters, faults, credential, fix) => {
		sandbox.addFaults(faults);
		const run = await runWorkflow(
			singleNodeWorkflow('messaging', parameters),
			sandboxCredential(sandbox.url, credential),
		);
		expect(run.error?.description).toMatch(fix);
	});

	it("the gateway's own refusal, in its words, with no fix added", async () => {
		sandbox.addFaults(
			always({ kind: 'rpcError', match: { path: '/api/wa/2.0/limit' }, message: 'Quota closed' }),
		);
		const run = await runMessaging(sandbox, usage);
		expect(run.error?.message).toContain('Quota closed');
		// n8n shows the message again where no fix is given.
		expect(run.error?.description ?? 'Quota closed').toContain('Quota closed');
	});

	it("a JSON-RPC error's detail left out when it is empty or not text", async () => {
		for (const data of [{ message: '' }, { message: 42 }]) {
			sandbox.clearFaults();
			const error = { code: 200, message: 'Quota closed', data };
			const body = JSON.stringify({ jsonrpc: '2.0', id: null, error });
			sandbox.addFaults(always({ kind: 'raw', match: { path: '/api/wa/2.0/limit' }, body }));
			const run = await runMessaging(sandbox, usage);
			expect(run.error?.message).toContain('"Quota closed"');
		}
	});
});

describe("an HTML page's words in the error", () => {
	afterEach(() => sandbox.clearFaults());
	const pageAnswer = (body: string) =>
		sandbox.addFaults([
			{ kind: 'raw', match: { path: '/api/wa/2.0/limit' }, status: 200, body, times: 20 },
		]);
	const usageError = async () =>
		(await runMessaging(sandbox, { resource: 'account', operation: 'getLimit' })).error?.message;

	it('its title, when it has one', async () => {
		pageAnswer(
			'<html><head><TITLE class="x">Site\n  under   repair</TITLE></head><body>Other words</body></html>',
		);
		expect(await usageError()).toContain('"Site under repair"');
	});

	it('else the text a reader sees: no tags, scripts or styles, white space collapsed', async () => {
		pageAnswer(
			'<html><head><style>body { color: red }</style><SCRIPT>var tag = "<b>";</SCRIPT></head>' +
				'<body><h1>Bad   gateway</h1>\n<p>Try <i>again</i> later</p><script src="x.js"></script>Bye <b',
		);
		expect(await usageError()).toContain('"Bad gateway Try again later Bye"');
	});

	it('the words after its last tag, and none after a script left open', async () => {
		pageAnswer('<p>Service down</p>try later');
		expect(await usageError()).toContain('"Service down try later"');
		sandbox.clearFaults();
		pageAnswer('<p>Down</p><script>var tag = "</b>";');
		expect(await usageError()).toContain('"Down"');
	});

	it('a status without a name is said by its number alone', async () => {
		sandbox.addFaults([
			{ kind: 'raw', match: { path: '/api/wa/2.0/limit' }, status: 418, body: '{}', times: 20 },
		]);
		expect(await usageError()).toMatch(/HTTP 418[^ A-Za-z]/);
	});
});
