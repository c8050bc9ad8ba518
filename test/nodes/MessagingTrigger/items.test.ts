/**
 * What the Messaging Trigger hands to the next node, through n8n-core's real WebhookContext and
 * WorkflowExecute: one schema for every message type, group chats, Ignore Own Messages in any
 * spelling of the number, file names from strangers, the body's charset, and payloads that must
 * not reach the workflow (too deep, too many values, prototype keys).
 */
import { request } from 'undici';

import { runMessaging } from '../../harness/messagingNode';
import { useSandbox } from '../../harness/useSandbox';
import {
	TRIGGER_ACCOUNT as ACCOUNT,
	TRIGGER_CUSTOMER as CUSTOMER,
	useTrigger,
} from '../../harness/messagingTriggerNode';

const sandbox = useSandbox({}, { resetEachTest: false });
const trigger = useTrigger(sandbox);

// The limits docs/messaging-trigger.md promises.
const MAX_DEPTH = 32;
const MAX_VALUES = 10_000;

const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');
const ALWAYS = [
	'messageId',
	'chatId',
	'isGroup',
	'sender',
	'author',
	'senderName',
	'recipient',
	'type',
	'text',
	'receivedAt',
	'payload',
];

async function itemOf(
	message: Parameters<typeof trigger.deliver>[0],
): Promise<Record<string, unknown>> {
	const { answer, executions } = await trigger.deliver(message);
	expect(answer.status).toBe(200);
	expect(executions).toHaveLength(1);
	return executions[0].receivedItems[0].json;
}

describe('one schema for every message type', () => {
	beforeAll(async () => await trigger.activate());

	it('a text message has the common fields only: no fileName, no mimeType, no mediaError', async () => {
		const json = await itemOf({ sender: CUSTOMER, message: 'hi', filename: 'ignored.txt' });
		expect(Object.keys(json)).toEqual(ALWAYS);
		expect(json).toMatchObject({
			chatId: CUSTOMER,
			isGroup: false,
			sender: CUSTOMER,
			author: CUSTOMER,
			type: 'text',
			text: 'hi',
		});
	});

	it('a readable file adds fileName, mimeType and fileSize', async () => {
		const json = await itemOf({ fileBase64: png, mimeType: 'image/png', filename: 'photo.png' });
		expect(Object.keys(json)).toEqual([
			...ALWAYS.slice(0, -2),
			'fileName',
			'mimeType',
			'fileSize',
			'receivedAt',
			'payload',
		]);
		expect(json).toMatchObject({
			type: 'image',
			fileName: 'photo.png',
			mimeType: 'image/png',
			fileSize: 16,
		});
	});

	it('an image event without a body says so in mediaError (the message announced a file)', async () => {
		const json = await itemOf({
			rawBody: JSON.stringify({
				params: { uuid: 'img-1', sender: CUSTOMER, type: 'image', filename: 'a.jpg' },
			}),
		});
		expect(json).toMatchObject({
			type: 'image',
			fileName: 'a.jpg',
			mediaError: 'the image message has no file (its "body" is missing)',
		});
		expect(json).not.toHaveProperty('mimeType');
		expect(Object.keys(json)).toEqual([
			...ALWAYS.slice(0, -2),
			'fileName',
			'mediaError',
			'receivedAt',
			'payload',
		]);
	});

	it('a type without a file (a location, "other") has no file fields', async () => {
		const json = await itemOf({
			rawBody: JSON.stringify({
				params: { sender: CUSTOMER, type: 'location', message: '-6.2,106.8' },
			}),
		});
		expect(json.type).toBe('other');
		expect(Object.keys(json)).toEqual(ALWAYS);
	});
});

describe('group chats', () => {
	beforeAll(async () => await trigger.activate());

	it('keeps a group id as it came and names the member who wrote', async () => {
		const json = await itemOf({
			sender: '120363025246125486@g.us',
			author: `${CUSTOMER}@c.us`,
			message: 'halo grup',
		});
		expect(json).toMatchObject({
			chatId: '120363025246125486@g.us',
			sender: '120363025246125486@g.us',
			isGroup: true,
			author: CUSTOMER,
		});
	});

	it('keeps an old-style group id (creator-timestamp) instead of making a phone number of it', async () => {
		const json = await itemOf({ sender: '6281288776713-1612345678@g.us', message: 'old group' });
		expect(json).toMatchObject({
			chatId: '6281288776713-1612345678@g.us',
			sender: '6281288776713-1612345678@g.us',
			isGroup: true,
		});
		// The payload names no member: who wrote is unknown, so the field is absent.
		expect(json).not.toHaveProperty('author');
	});
});

describe('replying to a group with Messaging', () => {
	it('Send Text refuses a group chatId (the API takes phone numbers) instead of sending to a made-up number', async () => {
		sandbox.reset();
		for (const chatId of ['120363025246125486@g.us', '6281288776713-1612345678@g.us']) {
			const run = await runMessaging(
				sandbox,
				{ resource: 'message', operation: 'sendText', phone: '={{ $json.chatId }}', text: 'reply' },
				[{ chatId }],
			);
			expect(run.error?.message).toBe(
				`Field "Phone Number" is a group chat id, not a phone number: "${chatId}" [item 0]`,
			);
		}
		expect(sandbox.ledger()).toHaveLength(0);
	});
});

describe('Ignore Own Messages compares numbers, not spellings', () => {
	it("an account number written locally (0812…) with Default Country matches the gateway's 62812…", async () => {
		await trigger.activate({
			accountNumber: '0812 8877 6713',
			ignoreOwnMessages: true,
			options: { defaultCountry: 'ID' },
		});
		const own = await trigger.deliver({ sender: ACCOUNT, message: 'echo of our own reply' });
		expect(own.json).toEqual({ received: true, ignored: "sent by the account's own number" });
		expect(own.executions).toHaveLength(0);
		expect(
			(await trigger.deliver({ sender: CUSTOMER, message: 'customer' })).executions,
		).toHaveLength(1);
	});

	it('a sender written locally (0812…) matches the international account number', async () => {
		await trigger.activate({ ignoreOwnMessages: true });
		const own = await trigger.deliver({ sender: '0812-8877-6713', message: 'own, local spelling' });
		expect(own.executions).toHaveLength(0);
		const plus = await trigger.deliver({
			sender: '+62 812 8877 6713@c.us',
			message: 'own, with plus',
		});
		expect(plus.executions).toHaveLength(0);
	});

	it('the account writing in a group is its own message; a member is not', async () => {
		await trigger.activate({ ignoreOwnMessages: true });
		expect(
			(
				await trigger.deliver({
					sender: '120363025246125486@g.us',
					author: ACCOUNT,
					message: 'me in the group',
				})
			).executions,
		).toHaveLength(0);
		expect(
			(
				await trigger.deliver({
					sender: '120363025246125486@g.us',
					author: CUSTOMER,
					message: 'member',
				})
			).executions,
		).toHaveLength(1);
	});
});

describe("file names from a stranger's phone", () => {
	beforeAll(async () => await trigger.activate());

	it.each([
		['invoice\u202Efdp.exe', 'invoicefdp.exe'],
		['re\u0085port\u009b.pdf', 'report.pdf'],
		['a\u0000b\u001f.txt', 'ab.txt'],
		['../../etc/passwd', 'passwd'],
		['C:\\Windows\\system32\\evil.dll', 'evil.dll'],
		['CON', '_CON'],
		['nul.txt', '_nul.txt'],
		['com1.tar.gz', '_com1.tar.gz'],
		['what?.pdf', 'what_.pdf'],
		['.bashrc', 'bashrc'],
		['trailing. . ', 'trailing'],
		['\u202E', 'file.txt'],
	])('%j becomes %j in the item and the binary data', async (given, expected) => {
		const { executions } = await trigger.deliver({
			fileBase64: Buffer.from('x').toString('base64'),
			mimeType: 'text/plain',
			filename: given,
		});
		const [item] = executions[0].receivedItems;
		expect(item.json.fileName).toBe(expected);
		expect(item.binary?.data.fileName).toBe(expected);
	});

	it('a file that cannot be read still gets a clean name, never the raw one', async () => {
		const json = await itemOf({
			rawBody: JSON.stringify({
				params: {
					sender: CUSTOMER,
					type: 'document',
					filename: '../../etc/\u202Epasswd',
					body: 'data:application/pdf;base64,%%',
				},
			}),
		});
		expect(json.fileName).toBe('passwd');
		expect(json.mediaError).toMatch(/not valid base64/);
	});

	it('a long name is cut, keeping its extension', async () => {
		const json = await itemOf({
			fileBase64: png,
			mimeType: 'image/png',
			filename: `${'a'.repeat(5000)}.png`,
		});
		expect(json.fileName).toBe(`${'a'.repeat(116)}.png`);
	});
});

describe("the body's charset", () => {
	beforeAll(async () => await trigger.activate());

	it('reads a latin1 body as latin1: José stays José', async () => {
		const json = await itemOf({
			sender: CUSTOMER,
			senderName: 'José',
			message: 'Olá, São Paulo',
			charset: 'latin1',
		});
		expect(json).toMatchObject({ senderName: 'José', text: 'Olá, São Paulo' });
	});

	it('reads a UTF-16 body', async () => {
		const json = await itemOf({ sender: CUSTOMER, message: 'Grüße ✓', charset: 'utf-16le' });
		expect(json.text).toBe('Grüße ✓');
	});

	it('refuses a charset it cannot read with 400, naming it', async () => {
		// (With a JSON, text or form content type n8n itself answers such a body 422 before the node runs.)
		const { answer, executions } = await trigger.deliver({
			message: 'x',
			headers: { 'content-type': 'application/octet-stream; charset=klingon' },
		});
		expect(answer.status).toBe(400);
		expect(JSON.parse(answer.body).error).toBe(
			'The body declares the charset "klingon", which cannot be read; send UTF-8',
		);
		expect(executions).toHaveLength(0);
	});
});

describe('payloads that must not reach the workflow', () => {
	beforeAll(async () => await trigger.activate());

	const deep = (depth: number) =>
		`{"params":{"message":"deep","x":${'['.repeat(depth)}${']'.repeat(depth)}}}`;

	it.each(['application/json', 'text/plain'])(
		'a 200,000-deep array (%s) is answered 400 naming the limit',
		async (contentType) => {
			const { answer, executions } = await trigger.deliver({
				rawBody: deep(200_000),
				headers: { 'content-type': contentType },
			});
			expect(answer.status).toBe(400);
			expect(JSON.parse(answer.body)).toEqual({
				received: false,
				error: `The payload is nested deeper than the limit of ${MAX_DEPTH} levels of arrays and objects`,
			});
			expect(executions).toHaveLength(0);
		},
	);

	it('nesting up to the limit passes', async () => {
		// params (2) + x: the body object is level 1, params level 2, x's arrays levels 3…
		const { answer, executions } = await trigger.deliver({ rawBody: deep(MAX_DEPTH - 2) });
		expect(answer.status).toBe(200);
		expect(executions).toHaveLength(1);
	});

	it('more values than the limit is answered 400 naming the limit', async () => {
		const many = JSON.stringify({
			params: { message: 'wide', x: Array.from({ length: MAX_VALUES }, () => 1) },
		});
		const { answer, executions } = await trigger.deliver({ rawBody: many });
		expect(answer.status).toBe(400);
		expect(JSON.parse(answer.body).error).toBe(
			'The payload holds more than the limit of 10,000 values',
		);
		expect(executions).toHaveLength(0);
	});

	it('"__proto__" in a payload does not become its prototype (it is dropped)', async () => {
		const body =
			'{"params":{"uuid":"p-1","sender":"6281300000002","message":"x","__proto__":{"hidden":"yes","type":"image"},"extra":{"__proto__":{"polluted":true}}}}';
		const json = await itemOf({ rawBody: body });
		const payload = json.payload as Record<string, unknown>;
		expect(Object.getPrototypeOf(payload)).toBe(Object.prototype);
		expect(Object.getPrototypeOf(payload.extra)).toBe(Object.prototype);
		expect(payload.hidden).toBeUndefined();
		expect((payload.extra as Record<string, unknown>).polluted).toBeUndefined();
		expect(Object.keys(payload)).toEqual(['uuid', 'sender', 'message', 'extra']);
		expect(json.type).toBe('text');
		expect(({} as Record<string, unknown>).polluted).toBeUndefined();
	});

	it('a direct request with the same problems gets the same answers (no sandbox in between)', async () => {
		const answer = await request(sandbox.accounts()[0].whatsappWebhook!, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: deep(1000),
		});
		expect(answer.statusCode).toBe(400);
		expect(((await answer.body.json()) as { error: string }).error).toMatch(/limit of 32 levels/);
	});
});

describe('what the gateway sends, read', () => {
	beforeAll(async () => await trigger.activate());

	const hello = Buffer.from('hello world');
	const itemWith = async (params: Record<string, unknown>) => {
		const { answer, executions } = await trigger.deliver({
			rawBody: JSON.stringify({ params: { sender: CUSTOMER, ...params } }),
		});
		expect(answer.status).toBe(200);
		return executions[0].receivedItems[0];
	};

	it.each([
		['the URL-safe alphabet', 'application/octet-stream', Buffer.from([0xfb, 0xff, 0xfe, 1, 2])],
		['line breaks and extra parameters', 'text/plain;charset=utf-8', Buffer.from('x'.repeat(100))],
	])('a data URI with %s is read', async (_, type, bytes) => {
		const base64 =
			type === 'text/plain;charset=utf-8'
				? bytes.toString('base64').replace(/(.{76})/g, '$1\r\n')
				: bytes.toString('base64url');
		const item = await itemWith({ body: `data:${type};base64,${base64}`, filename: 'f.bin' });
		expect(Buffer.from(item.binary!.data.data, 'base64').equals(bytes)).toBe(true);
		expect(item.json.mimeType).toBe(type.split(';')[0]);
	});

	it.each([
		['image/jpeg', 'image', 'file.jpg'],
		// A voice note and an mp3 get the extensions people know, not mime-types' first (.oga, .mpga).
		['audio/ogg', 'audio', 'file.ogg'],
		['audio/mpeg', 'audio', 'file.mp3'],
		['video/mp4', 'video', 'file.mp4'],
		['application/pdf', 'document', 'file.pdf'],
		['', 'document', 'file.bin'],
	])('an unnamed, untyped file of type %j is a %s called %s', async (mime, type, fileName) => {
		const item = await itemWith({ body: `data:${mime};base64,${hello.toString('base64')}` });
		expect(item.json).toMatchObject({
			type,
			fileName,
			mimeType: mime || 'application/octet-stream',
		});
	});

	it.each([
		['data:image/png,abc', /without ";base64"/],
		['data:image/png;base64,', /empty file/],
		['data:image/png;base64,abc*def', /not valid base64 .*"\*"/],
		['data:image/png;base64,abcde', /length is not possible/],
		['data:not a type;base64,aGVsbG8=', /not a mime type/],
		['image/png;base64,aGVsbG8=', /not a data URI/],
	])('a broken file %j says why in mediaError', async (body, problem) => {
		const item = await itemWith({ type: 'image', body, filename: 'x.png' });
		expect(item.json).toMatchObject({
			mediaError: expect.stringMatching(problem),
			fileName: 'x.png',
		});
		expect(item.binary).toBeUndefined();
	});

	it.each([
		['chat', 'text'],
		['PTT', 'audio'],
		['voice', 'audio'],
		['file', 'document'],
		['sticker', 'other'],
		['', 'text'],
	])('the gateway type %j is the category %j', async (gatewayType, type) => {
		const item = await itemWith({ type: gatewayType, message: 'x' });
		expect(item.json.type).toBe(type);
		if (gatewayType) expect((item.json.payload as { type: string }).type).toBe(gatewayType);
	});

	it.each([
		['+62 813-0000-0002', CUSTOMER],
		[6281300000002, CUSTOMER],
		[`${CUSTOMER}@s.whatsapp.net`, CUSTOMER],
		['status@broadcast', 'status@broadcast'],
	])('the sender %j reads as %j', async (sender, expected) => {
		const item = await itemWith({ sender, message: 'x' });
		expect(item.json).toMatchObject({ sender: expected, chatId: expected });
	});
});
