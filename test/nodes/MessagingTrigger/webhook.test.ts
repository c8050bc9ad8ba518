/**
 * Messaging Trigger receiving messages: the sandbox plays the gateway and posts to the URL the
 * trigger registered; the trigger runs in n8n-core's real WebhookContext behind an HTTP server
 * that reads the body as n8n does, and accepted messages run the workflow in WorkflowExecute.
 */
import { randomBytes } from 'crypto';
import { Readable } from 'stream';
import { request } from 'undici';

import { startSandbox } from '../../../sandbox/server';
import type { IncomingMessage, IncomingResult } from '../../../sandbox/types';
import { sandboxCredential } from '../../harness/engine';
import { TriggerHarness, type TriggerExecution } from '../../harness/triggerEngine';
import { useSandbox } from '../../harness/useSandbox';

const ACCOUNT = '6281288776713';
const CUSTOMER = '6281300000002';
const BASE_PARAMETERS = { accountNumber: '+62 812-8877-6713' };

// Each test group resets the sandbox itself when it (re)activates the trigger.
const sandbox = useSandbox({}, { resetEachTest: false });
let trigger: TriggerHarness;

beforeAll(async () => {
	trigger = await TriggerHarness.start({
		parameters: BASE_PARAMETERS,
		credentials: sandboxCredential(sandbox.url),
	});
});
afterAll(async () => {
	await trigger.close();
});

/** Fresh sandbox and executions; the trigger (re)activated with these parameters. */
async function activate(parameters: Record<string, unknown> = {}): Promise<void> {
	await trigger.settled();
	trigger.executions.length = 0;
	trigger.calls.length = 0;
	sandbox.reset();
	trigger.setParameters({ ...BASE_PARAMETERS, ...parameters });
	await trigger.activate();
}

/** Posts like the gateway, waits for the execution it may have started. */
async function deliver(message: IncomingMessage): Promise<{
	answer: IncomingResult;
	json: Record<string, unknown>;
	executions: TriggerExecution[];
}> {
	const before = trigger.executions.length;
	const answer = await sandbox.deliverIncoming(message);
	await trigger.settled();
	return {
		answer,
		json: JSON.parse(answer.body) as Record<string, unknown>,
		executions: trigger.executions.slice(before),
	};
}

describe('a text message', () => {
	beforeAll(async () => await activate());

	it('starts one execution whose item holds the normalised fields and the payload', async () => {
		const { answer, json, executions } = await deliver({
			sender: CUSTOMER,
			senderName: 'Budi',
			message: 'Halo, masih buka?',
		});

		// A new trigger (version 2) registers its URL with a generated secret in the query.
		expect(answer.url).toMatch(
			new RegExp(`^${trigger.productionUrl.replace(/[.?]/g, '\\$&')}\\?token=[\\w-]{43}$`),
		);
		expect(answer.status).toBe(200);
		expect(json).toEqual({ received: true, messageId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
		expect(executions).toHaveLength(1);
		const [execution] = executions;
		expect(execution.error).toBeUndefined();
		expect(execution.run.mode).toBe('webhook');
		expect(execution.run.status).toBe('success');

		const [item] = execution.receivedItems;
		expect(execution.receivedItems).toHaveLength(1);
		expect(item.binary).toBeUndefined();
		expect(item.json).toMatchObject({
			messageId: json.messageId,
			sender: CUSTOMER,
			senderName: 'Budi',
			recipient: ACCOUNT,
			type: 'text',
			text: 'Halo, masih buka?',
		});
		// A text message has no file: no file fields at all (not "").
		expect(item.json).not.toHaveProperty('fileName');
		expect(item.json).not.toHaveProperty('mediaError');
		expect(new Date(item.json.receivedAt as string).getTime()).toBeGreaterThan(Date.now() - 60_000);
		expect(item.json.payload).toMatchObject({
			uuid: json.messageId,
			sender: CUSTOMER,
			recipient: ACCOUNT,
			message: 'Halo, masih buka?',
			sendername: 'Budi',
			type: 'text',
			senderkeyhash: expect.any(String),
			recipientkeyhash: expect.any(String),
		});
	});

	it('answers with JSON', async () => {
		const { answer } = await deliver({ message: 'hi' });
		expect(trigger.calls.at(-1)?.contentType).toMatch(/^application\/json/);
		expect(() => JSON.parse(answer.body)).not.toThrow();
	});

	it('treats the literal text "undefined" as empty', async () => {
		const { executions } = await deliver({ message: 'undefined' });
		expect(executions[0].receivedItems[0].json.text).toBe('');
	});
});

describe('a file message', () => {
	beforeAll(async () => await activate());

	it('turns the data URI into binary data with its mime type, file name and bytes', async () => {
		const bytes = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(50_000)]);
		const { answer, executions } = await deliver({
			sender: CUSTOMER,
			fileBase64: bytes.toString('base64'),
			mimeType: 'application/pdf',
			filename: 'invoice-0042.pdf',
		});
		expect(answer.status).toBe(200);
		const [item] = executions[0].receivedItems;

		expect(item.json).toMatchObject({
			type: 'document',
			text: '',
			fileName: 'invoice-0042.pdf',
			mimeType: 'application/pdf',
			fileSize: bytes.length,
			sender: CUSTOMER,
		});
		expect(item.json).not.toHaveProperty('mediaError');
		const binary = item.binary?.data;
		expect(binary).toMatchObject({
			mimeType: 'application/pdf',
			fileName: 'invoice-0042.pdf',
			fileExtension: 'pdf',
		});
		expect(Buffer.from(binary!.data, 'base64').equals(bytes)).toBe(true);
		// The payload keeps the fields but not the megabytes of base64.
		const payload = item.json.payload as Record<string, unknown>;
		expect(payload).not.toHaveProperty('body');
		expect(payload).toMatchObject({
			filename: 'invoice-0042.pdf',
			message: 'undefined',
			type: 'document',
		});
	});

	it('reads an image as type "image"', async () => {
		const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
		const { executions } = await deliver({
			fileBase64: png.toString('base64'),
			mimeType: 'image/png',
			filename: 'photo.png',
		});
		const [item] = executions[0].receivedItems;
		expect(item.json.type).toBe('image');
		expect(item.binary?.data.mimeType).toBe('image/png');
		expect(Buffer.from(item.binary!.data.data, 'base64').equals(png)).toBe(true);
	});

	it('puts the file in the field named by the option', async () => {
		await activate({ options: { binaryPropertyName: 'attachment' } });
		const { executions } = await deliver({
			fileBase64: Buffer.from('hello').toString('base64'),
			mimeType: 'text/plain',
			filename: 'a.txt',
		});
		const [item] = executions[0].receivedItems;
		expect(Object.keys(item.binary ?? {})).toEqual(['attachment']);
		await activate();
	});

	it('still emits the item, with mediaError and no binary, when the data URI is broken', async () => {
		const { answer, executions } = await deliver({
			type: 'image',
			rawBody: JSON.stringify({
				params: {
					uuid: 'u-1',
					sender: CUSTOMER,
					type: 'image',
					filename: 'x.png',
					body: 'data:image/png;base64,%%%not-base64%%%',
				},
			}),
		});
		expect(answer.status).toBe(200);
		const [item] = executions[0].receivedItems;
		expect(item.binary).toBeUndefined();
		expect(item.json.mediaError).toMatch(/not valid base64/);
		expect(item.json).toMatchObject({ messageId: 'u-1', type: 'image', fileName: 'x.png' });
		expect(item.json.payload).not.toHaveProperty('body');
	});

	it('keeps a file name from the phone inside its own folder', async () => {
		const { executions } = await deliver({
			fileBase64: Buffer.from('x').toString('base64'),
			mimeType: 'text/plain',
			filename: '../../etc/passwd',
		});
		expect(executions[0].receivedItems[0].binary?.data.fileName).toBe('passwd');
	});
});

describe('payload forms', () => {
	beforeAll(async () => await activate());

	it('accepts a flat JSON object (no "params")', async () => {
		const flatSandbox = await startSandbox({ flatWebhookPayload: true });
		try {
			const flat = await TriggerHarness.start({
				parameters: BASE_PARAMETERS,
				credentials: sandboxCredential(flatSandbox.url),
			});
			try {
				await flat.activate();
				const answer = await flatSandbox.deliverIncoming({
					sender: CUSTOMER,
					message: 'flat hello',
				});
				await flat.settled();
				expect(answer.status).toBe(200);
				expect(flat.executions).toHaveLength(1);
				expect(flat.executions[0].receivedItems[0].json).toMatchObject({
					sender: CUSTOMER,
					text: 'flat hello',
					recipient: ACCOUNT,
				});
			} finally {
				await flat.close();
			}
		} finally {
			await flatSandbox.close();
		}
	});

	it('accepts an event from an older sender with most fields missing', async () => {
		const { answer, executions } = await deliver({
			rawBody: JSON.stringify({ params: { message: 'only text' } }),
		});
		expect(answer.status).toBe(200);
		expect(executions[0].receivedItems[0].json).toMatchObject({
			messageId: '',
			sender: '',
			recipient: '',
			senderName: '',
			type: 'text',
			text: 'only text',
		});
		expect(executions[0].receivedItems[0].json).not.toHaveProperty('fileName');
	});

	it('reads WhatsApp addresses as numbers', async () => {
		const { executions } = await deliver({
			rawBody: JSON.stringify({ sender: `${CUSTOMER}@c.us`, message: 'x' }),
		});
		expect(executions[0].receivedItems[0].json.sender).toBe(CUSTOMER);
	});
});

describe('bodies that start nothing', () => {
	beforeAll(async () => await activate());

	it('malformed JSON sent as application/json: n8n answers 422 before the node runs', async () => {
		const { answer, json, executions } = await deliver({ rawBody: '{"params": {"message": "cut' });
		expect(answer.status).toBe(422);
		expect(json).toMatchObject({ code: 422, message: 'Failed to parse request body' });
		expect(executions).toHaveLength(0);
		expect(trigger.calls.at(-1)?.startedExecution).toBe(false);
	});

	it('malformed JSON with another content type: the node answers 400', async () => {
		const { answer, json, executions } = await deliver({
			rawBody: '{"params": {"message": "cut',
			headers: { 'content-type': 'text/plain' },
		});
		expect(answer.status).toBe(400);
		expect(json).toEqual({
			received: false,
			error: expect.stringMatching(/^The body is not valid JSON/),
		});
		expect(executions).toHaveLength(0);
	});

	it('a JSON body that is not an object: 400', async () => {
		const { answer, json, executions } = await deliver({ rawBody: '["a", "b"]' });
		expect(answer.status).toBe(400);
		expect(json).toEqual({ received: false, error: 'The body must be a JSON object' });
		expect(executions).toHaveLength(0);
	});

	it('an empty body: 400', async () => {
		const { answer, executions } = await deliver({ rawBody: '' });
		expect(answer.status).toBe(400);
		expect(JSON.parse(answer.body).error).toMatch(/empty/);
		expect(executions).toHaveLength(0);
	});

	it('a multipart form (n8n has read it already): 400, the body could not be read', async () => {
		const { answer, json, executions } = await deliver({
			rawBody: '--b\r\ncontent-disposition: form-data; name="message"\r\n\r\nHalo\r\n--b--\r\n',
			headers: { 'content-type': 'multipart/form-data; boundary=b' },
		});
		expect(answer.status).toBe(400);
		expect(json).toEqual({
			received: false,
			error: 'The body could not be read: Request body stream was aborted or is not readable',
		});
		expect(executions).toHaveLength(0);
	});

	it('a body of white space only: 400, empty', async () => {
		// Sent as text: n8n answers a JSON body it cannot parse itself (422).
		const { answer, executions } = await deliver({
			rawBody: ' \n\t ',
			headers: { 'content-type': 'text/plain' },
		});
		expect(answer.status).toBe(400);
		expect(JSON.parse(answer.body).error).toBe('The body is empty; a JSON object was expected');
		expect(executions).toHaveLength(0);
	});

	it('a body over the node limit sent in chunks (no content-length): 400 once it is read', async () => {
		await activate({
			verification: 'querySecret',
			sharedSecret: 'qu3ry-secret',
			options: { maxBodySizeMb: 1 },
		});
		const body = JSON.stringify({ params: { message: 'x'.repeat(1_200_000) } });
		const answer = await request(`${trigger.productionUrl}?token=qu3ry-secret`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: Readable.from([Buffer.from(body)]),
		});
		expect(answer.statusCode).toBe(400);
		expect(await answer.body.json()).toEqual({
			received: false,
			error: expect.stringMatching(/larger than the limit of 1 MB/),
		});
		await trigger.settled();
		expect(trigger.executions).toHaveLength(0);
		await activate();
	});

	it('a body over the node limit: 400', async () => {
		await activate({ options: { maxBodySizeMb: 1 } });
		const { answer, json, executions } = await deliver({
			fileBase64: randomBytes(900_000).toString('base64'),
			mimeType: 'image/jpeg',
		});
		expect(answer.status).toBe(400);
		expect(json).toEqual({
			received: false,
			error: expect.stringMatching(/larger than the limit of 1 MB/),
		});
		expect(executions).toHaveLength(0);
		await activate();
	});

	it("a body over n8n's own limit (N8N_PAYLOAD_SIZE_MAX) is refused by n8n before the node runs", async () => {
		const small = await TriggerHarness.start({
			parameters: BASE_PARAMETERS,
			credentials: sandboxCredential(sandbox.url),
			payloadSizeMaxMb: 1,
		});
		try {
			await small.activate();
			const answer = await sandbox.deliverIncoming({
				fileBase64: randomBytes(900_000).toString('base64'),
				mimeType: 'image/jpeg',
			});
			await small.settled();
			expect(answer.status).toBe(500);
			expect(small.executions).toHaveLength(0);
		} finally {
			await small.close();
			await activate();
		}
	});
});

describe('verification', () => {
	it('API key in payload: missing or wrong is 401, the credential secret passes', async () => {
		await activate({ verification: 'apiKey' });

		const missing = await deliver({ message: 'no key' });
		expect(missing.answer.status).toBe(401);
		expect(missing.json).toEqual({ received: false, error: 'The payload has no "x-api-key"' });
		expect(missing.executions).toHaveLength(0);

		const wrong = await deliver({ message: 'bad key', apiKey: 'demo-secreT' });
		expect(wrong.answer.status).toBe(401);
		expect(wrong.json).toEqual({
			received: false,
			error: 'The payload\'s "x-api-key" does not match the credential',
		});
		expect(wrong.executions).toHaveLength(0);

		const right = await deliver({ message: 'good key', apiKey: 'demo-secret' });
		expect(right.answer.status).toBe(200);
		expect(right.executions).toHaveLength(1);
		const [item] = right.executions[0].receivedItems;
		expect(item.json.text).toBe('good key');
		expect(item.json.payload).not.toHaveProperty('x-api-key');
		expect(JSON.stringify(item.json)).not.toContain('demo-secret');
	});

	it('the API key never reaches the item, in any letter case or nested in the payload', async () => {
		await activate({ verification: 'apiKey' });
		const params = {
			'uuid': 'b7d8c0de-0000-4000-8000-000000000001',
			'sender': CUSTOMER,
			'recipient': ACCOUNT,
			'type': 'text',
			'message': 'keys everywhere',
			'x-api-key': 'demo-secret',
			'X-API-KEY': 'demo-secret',
			'extra': { 'X-Api-Key': 'demo-secret', 'list': [{ 'x-API-key': 'demo-secret' }] },
		};
		const { answer, executions } = await deliver({
			rawBody: JSON.stringify({ jsonrpc: '2.0', params }),
		});
		expect(answer.status).toBe(200);
		const [item] = executions[0].receivedItems;
		expect(item.json.payload).toMatchObject({ extra: { list: [{}] } });
		expect(JSON.stringify(item.json)).not.toContain('demo-secret');
	});

	it('shared secret in a header: checked before the body is read', async () => {
		await activate({ verification: 'headerSecret', sharedSecret: 'h3ader-secret' });

		const missing = await deliver({ message: 'no header' });
		expect(missing.answer.status).toBe(401);
		expect(missing.json).toEqual({
			received: false,
			error: 'The request has no header "x-webhook-secret"',
		});

		const wrong = await deliver({ message: 'x', headers: { 'x-webhook-secret': 'nope' } });
		expect(wrong.answer.status).toBe(401);
		expect(wrong.json.error).toBe('The header "x-webhook-secret" does not hold the shared secret');

		// A failed check wins over a broken body: strangers learn nothing about parsing.
		const brokenAndWrong = await deliver({
			rawBody: '{oops',
			headers: { 'content-type': 'text/plain', 'x-webhook-secret': 'nope' },
		});
		expect(brokenAndWrong.answer.status).toBe(401);

		const right = await deliver({
			message: 'with header',
			headers: { 'x-webhook-secret': 'h3ader-secret' },
		});
		expect(right.answer.status).toBe(200);
		expect(right.executions).toHaveLength(1);
		expect([missing, wrong, brokenAndWrong].every((result) => result.executions.length === 0)).toBe(
			true,
		);
	});

	it('shared secret in a header with a custom name', async () => {
		await activate({
			verification: 'headerSecret',
			headerName: 'X-Gateway-Token',
			sharedSecret: 'abc123',
		});
		expect(
			(await deliver({ message: 'x', headers: { 'x-webhook-secret': 'abc123' } })).answer.status,
		).toBe(401);
		expect(
			(await deliver({ message: 'x', headers: { 'X-Gateway-Token': 'abc123' } })).answer.status,
		).toBe(200);
	});

	it('shared secret in the query: the registered URL carries it; without it, wrong or twice is 401', async () => {
		await activate({ verification: 'querySecret', sharedSecret: 'qu3ry-secret' });

		const right = await deliver({ message: 'via registered URL' });
		expect(right.answer.url).toBe(`${trigger.productionUrl}?token=qu3ry-secret`);
		expect(right.answer.status).toBe(200);
		expect(right.executions).toHaveLength(1);

		const wrong = await deliver({ message: 'x', query: { token: 'guess' } });
		expect(wrong.answer.status).toBe(401);
		expect(wrong.json.error).toBe('The query parameter "token" does not hold the shared secret');

		// Posted past the sandbox, whose deliveries always carry the registered URL's query.
		const refusal = async (query: string) => {
			const answer = await request(`${trigger.productionUrl}${query}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ params: { message: 'refused' } }),
			});
			return { status: answer.statusCode, json: await answer.body.json() };
		};
		expect(await refusal('?token=qu3ry-secret&token=qu3ry-secret')).toEqual({
			status: 401,
			json: { received: false, error: 'The query parameter "token" must appear once' },
		});
		expect(await refusal('')).toEqual({
			status: 401,
			json: { received: false, error: 'The request has no query parameter "token"' },
		});
		await trigger.settled();
		expect(trigger.executions).toHaveLength(1);
	});
});

describe('filters', () => {
	it('message types: others are answered 200 "ignored" and start nothing', async () => {
		await activate({ messageTypes: ['image', 'document'] });

		const text = await deliver({ message: 'just text' });
		expect(text.answer.status).toBe(200);
		expect(text.json).toEqual({ received: true, ignored: 'message type "text" is not selected' });
		expect(text.executions).toHaveLength(0);

		const image = await deliver({
			fileBase64: Buffer.from('img').toString('base64'),
			mimeType: 'image/jpeg',
			filename: 'a.jpg',
		});
		expect(image.answer.status).toBe(200);
		expect(image.executions).toHaveLength(1);

		const sticker = await deliver({
			type: 'sticker',
			fileBase64: Buffer.from('s').toString('base64'),
			mimeType: 'image/webp',
		});
		expect(sticker.json).toEqual({
			received: true,
			ignored: 'message type "other" is not selected',
		});
	});

	it('message types: a value that is no type (mapped) is ignored, never filtering every message out', async () => {
		await activate({ messageTypes: ['txt'] });
		const text = await deliver({ message: 'just text' });
		expect(text.json).toMatchObject({ received: true, messageId: expect.any(String) });
		expect(text.executions).toHaveLength(1);
	});

	it('own messages: ignored when the sender is the account number', async () => {
		await activate({ ignoreOwnMessages: true });

		const own = await deliver({ sender: ACCOUNT, message: 'sent from the account itself' });
		expect(own.json).toEqual({ received: true, ignored: "sent by the account's own number" });
		expect(own.executions).toHaveLength(0);

		const customer = await deliver({ sender: CUSTOMER, message: 'from a customer' });
		expect(customer.executions).toHaveLength(1);
	});

	it('own messages pass when the option is off', async () => {
		await activate({ ignoreOwnMessages: false });
		const own = await deliver({ sender: ACCOUNT, message: 'from the account' });
		expect(own.executions).toHaveLength(1);
	});
});

describe('after deactivation', () => {
	it('the URL is no longer served and no longer registered', async () => {
		await activate();
		const url = trigger.productionUrl;
		await trigger.deactivate();
		expect(sandbox.accounts()[0].whatsappWebhook).toBeUndefined();
		await expect(sandbox.deliverIncoming({ message: 'anyone?' })).rejects.toThrow(
			/no registered webhook/,
		);
		const direct = await request(url, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: '{}',
		});
		expect(direct.statusCode).toBe(404);
		await direct.body.text();
	});
});
