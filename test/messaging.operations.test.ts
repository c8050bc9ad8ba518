/**
 * Every Messaging operation through n8n's real engine against the sandbox over HTTP: the exact
 * request the sandbox received (method, path, bearer or none, params) and the output items.
 */
import { createHash, randomBytes } from 'crypto';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Readable } from 'stream';

import { startSandbox } from '../sandbox/server';
import { setBinaryDataMode, storeBinary } from './harness/engine';
import {
	CLIENT_ID,
	DEFAULT_VERSION,
	PHONE,
	PHONE_PASTED,
	SECRET,
	apiRequests,
	pngShowsQrOf,
	runMessaging,
	tokenRequests,
	wire,
} from './harness/messagingNode';
import { useSandbox } from './harness/useSandbox';

const sandbox = useSandbox();
let storagePath: string;

beforeAll(() => {
	storagePath = mkdtempSync(join(tmpdir(), 'messaging-binary-'));
});
beforeEach(async () => {
	await setBinaryDataMode('memory');
});
afterAll(async () => {
	await setBinaryDataMode('memory');
	rmSync(storagePath, { recursive: true, force: true });
});

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('message: sendText', () => {
	it('sends digits with country code, the text and the version, with a bearer token', async () => {
		const run = await runMessaging(sandbox, { resource: 'message', operation: 'sendText', phone: PHONE_PASTED, text: 'Hello from n8n' });
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox).map(wire)).toEqual([
			{
				method: 'POST',
				path: '/api/wa/2.0/post',
				bearer: true,
				params: { method: 'sendMessage', client_secret: SECRET, version: DEFAULT_VERSION, phone: PHONE, body: 'Hello from n8n' },
			},
		]);
		const [entry] = sandbox.ledger();
		expect(run.output('Node')).toEqual([
			{
				json: {
					sent: true,
					id: entry.id,
					phone: PHONE,
					message: 'Message sent',
					response: { message: { sent: true, message: 'Message sent', id: entry.id } },
				},
				pairedItem: { item: 0 },
			},
		]);
	});

	it('uses the Options: API version and default country for local numbers', async () => {
		const run = await runMessaging(sandbox, {
			resource: 'message',
			operation: 'sendText',
			phone: '0812 8877 6713',
			text: 'Hi',
			options: { version: 'v16', defaultCountry: 'id' },
		});
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox)[0].params).toEqual({ method: 'sendMessage', client_secret: SECRET, version: 'v16', phone: PHONE, body: 'Hi' });
		expect(sandbox.ledger()).toMatchObject([{ phone: PHONE, version: 'v16', text: 'Hi' }]);
	});
});

describe('message: sendFile', () => {
	it('sends a data URI given as text, with file name and caption', async () => {
		const pdf = Buffer.from('%PDF-1.7\n% a tiny test file\n');
		const dataUri = `data:application/pdf;base64,${pdf.toString('base64')}`;
		const run = await runMessaging(sandbox, {
			resource: 'message',
			operation: 'sendFile',
			phone: PHONE_PASTED,
			fileSource: 'base64',
			fileContent: dataUri,
			caption: 'Your invoice',
			fileFields: { fileName: 'invoice.pdf' },
		});
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox).map(wire)).toEqual([
			{
				method: 'POST',
				path: '/api/wa/2.0/post',
				bearer: true,
				params: {
					method: 'sendFile',
					client_secret: SECRET,
					version: DEFAULT_VERSION,
					phone: PHONE,
					body: dataUri,
					filename: 'invoice.pdf',
					caption: 'Your invoice',
				},
			},
		]);
		const [entry] = sandbox.ledger();
		expect(entry).toMatchObject({ kind: 'file', phone: PHONE, caption: 'Your invoice', file: { mimeType: 'application/pdf', filename: 'invoice.pdf', size: pdf.length, sha256: sha256(pdf) } });
		expect(run.output('Node')).toEqual([
			{
				json: {
					sent: true,
					id: entry.id,
					phone: PHONE,
					message: 'Message sent',
					response: { message: { sent: true, message: 'Message sent', id: entry.id } },
					fileName: 'invoice.pdf',
					mimeType: 'application/pdf',
					fileSize: pdf.length,
				},
				pairedItem: { item: 0 },
			},
		]);
	});

	it('accepts bare, line-wrapped base64 and takes the mime type from the file name', async () => {
		const content = randomBytes(200);
		const wrapped = content.toString('base64').replace(/.{76}/g, '$&\n');
		const run = await runMessaging(sandbox, {
			resource: 'message',
			operation: 'sendFile',
			phone: PHONE,
			fileSource: 'base64',
			fileContent: wrapped,
			fileFields: { fileName: 'photo.jpg' },
		});
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox)[0].params).toMatchObject({ body: `data:image/jpeg;base64,${content.toString('base64')}`, filename: 'photo.jpg', caption: '' });
		expect(sandbox.ledger()[0].file).toEqual({ mimeType: 'image/jpeg', filename: 'photo.jpg', size: 200, sha256: sha256(content) });
	});

	it('sends an in-memory binary as it is, with the name and type from its metadata', async () => {
		const png = randomBytes(300);
		const binary = await storeBinary(png, { fileName: 'chart.png', mimeType: 'image/png' });
		expect(binary.id).toBeUndefined();
		const run = await runMessaging(sandbox, { resource: 'message', operation: 'sendFile', phone: PHONE_PASTED }, [
			{ json: { name: 'chart' }, binary: { data: binary } },
		]);
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox).map(wire)).toEqual([
			{
				method: 'POST',
				path: '/api/wa/2.0/post',
				bearer: true,
				params: {
					method: 'sendFile',
					client_secret: SECRET,
					version: DEFAULT_VERSION,
					phone: PHONE,
					body: `data:image/png;base64,${binary.data}`,
					filename: 'chart.png',
					caption: '',
				},
			},
		]);
		expect(sandbox.ledger()[0].file).toEqual({ mimeType: 'image/png', filename: 'chart.png', size: 300, sha256: sha256(png) });
		expect(run.output('Node')[0].json).toMatchObject({ sent: true, phone: PHONE, fileName: 'chart.png', mimeType: 'image/png', fileSize: 300 });
	});

	it('reads another binary field, and the given name and type win over the metadata', async () => {
		const binary = await storeBinary(Buffer.from('a,b\n1,2\n'), { fileName: 'export.bin', mimeType: 'application/octet-stream' });
		const run = await runMessaging(
			sandbox,
			{
				resource: 'message',
				operation: 'sendFile',
				phone: PHONE,
				binaryPropertyName: 'attachment',
				caption: 'Numbers',
				fileFields: { fileName: 'numbers.csv', mimeType: 'text/csv' },
			},
			[{ json: {}, binary: { attachment: binary } }],
		);
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox)[0].params).toMatchObject({ body: `data:text/csv;base64,${binary.data}`, filename: 'numbers.csv', caption: 'Numbers' });
	});

	it('streams a filesystem-mode binary from disk (binary.id), byte for byte', async () => {
		await setBinaryDataMode('filesystem', storagePath);
		const content = randomBytes(3 * 1024 * 1024 + 1); // not a multiple of 3: exercises the padding
		const binary = await storeBinary(Readable.from([content.subarray(0, 1000), content.subarray(1000)]), {
			fileName: 'report.pdf',
			mimeType: 'application/pdf',
		});
		expect(binary.id).toMatch(/^filesystem(-v2)?:/);
		expect(binary.data).not.toMatch(/^[A-Za-z0-9+/]{100}/);

		const run = await runMessaging(sandbox, { resource: 'message', operation: 'sendFile', phone: PHONE_PASTED, caption: 'Q3' }, [
			{ json: {}, binary: { data: binary } },
		]);
		expect(run.error).toBeUndefined();
		const [request] = apiRequests(sandbox);
		const uriLength = 'data:application/pdf;base64,'.length + Math.ceil(content.length / 3) * 4;
		expect(wire(request)).toEqual({
			method: 'POST',
			path: '/api/wa/2.0/post',
			bearer: true,
			params: {
				method: 'sendFile',
				client_secret: SECRET,
				version: DEFAULT_VERSION,
				phone: PHONE,
				body: `<${uriLength} chars>`,
				filename: 'report.pdf',
				caption: 'Q3',
			},
		});
		expect(sandbox.ledger()[0].file).toEqual({ mimeType: 'application/pdf', filename: 'report.pdf', size: content.length, sha256: sha256(content) });
		expect(run.output('Node')[0].json).toMatchObject({ sent: true, fileName: 'report.pdf', mimeType: 'application/pdf', fileSize: content.length });
	});
});

describe('number: check', () => {
	it('asks without a bearer token and answers exists: true or false', async () => {
		const run = await runMessaging(sandbox, { resource: 'number', operation: 'check', phone: '={{ $json.phone }}' }, [
			{ phone: PHONE_PASTED },
			{ phone: '+62 812-8877-0000' },
		]);
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox).map(wire)).toEqual([
			{ method: 'GET', path: '/api/wa/2.0/check', bearer: false, params: { phone: PHONE } },
			{ method: 'GET', path: '/api/wa/2.0/check', bearer: false, params: { phone: '6281288770000' } },
		]);
		expect(run.output('Node')).toEqual([
			{ json: { phone: PHONE, exists: true, response: { result: 'exists' } }, pairedItem: { item: 0 } },
			{ json: { phone: '6281288770000', exists: false, response: { result: 'not exists' } }, pairedItem: { item: 1 } },
		]);
		expect(tokenRequests(sandbox)).toHaveLength(0);
	});
});

describe('account', () => {
	const accountParams = { whatsappNumber: '0812 8877 6713', webhookUrl: 'https://n8n.example.com/webhook/incoming', options: { defaultCountry: 'ID' } };

	it('update: registers number and webhook, without a bearer token', async () => {
		const run = await runMessaging(sandbox, { resource: 'account', operation: 'update', ...accountParams });
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox).map(wire)).toEqual([
			{
				method: 'POST',
				path: '/api/wa/2.0/post',
				bearer: false,
				params: {
					method: 'update',
					client_secret: SECRET,
					version: DEFAULT_VERSION,
					whatsapp_number: PHONE,
					whatsapp_webhook: 'https://n8n.example.com/webhook/incoming',
				},
			},
		]);
		expect(run.output('Node')[0].json).toEqual({
			whatsappNumber: PHONE,
			webhookUrl: 'https://n8n.example.com/webhook/incoming',
			updated: true,
			response: { message: { updated: true, whatsapp_number: PHONE, whatsapp_webhook: 'https://n8n.example.com/webhook/incoming' } },
		});
		expect(sandbox.accounts()[0]).toMatchObject({ whatsappNumber: PHONE, whatsappWebhook: 'https://n8n.example.com/webhook/incoming' });
		expect(tokenRequests(sandbox)).toHaveLength(0);
	});

	it('check: reads the registration with a bearer token', async () => {
		await runMessaging(sandbox, { resource: 'account', operation: 'update', ...accountParams });
		const run = await runMessaging(sandbox, { resource: 'account', operation: 'check', ...accountParams, options: { defaultCountry: 'ID', version: 'v16' } });
		expect(run.error).toBeUndefined();
		expect(wire(apiRequests(sandbox)[1])).toEqual({
			method: 'POST',
			path: '/api/wa/2.0/post',
			bearer: true,
			params: {
				method: 'check',
				client_secret: SECRET,
				version: 'v16',
				whatsapp_number: PHONE,
				whatsapp_webhook: 'https://n8n.example.com/webhook/incoming',
			},
		});
		expect(run.output('Node')[0].json).toEqual({
			whatsappNumber: PHONE,
			webhookUrl: 'https://n8n.example.com/webhook/incoming',
			status: 'authenticated',
			registered: true,
			response: {
				message: { whatsapp_number: PHONE, whatsapp_webhook: 'https://n8n.example.com/webhook/incoming', accountStatus: 'authenticated', registered: true },
			},
		});
	});

	it('getLimit: reads blocked / limit / used without a bearer token', async () => {
		await runMessaging(sandbox, { resource: 'message', operation: 'sendText', phone: PHONE, text: '={{ $json.text }}' }, [{ text: 'one' }, { text: 'two' }]);
		const run = await runMessaging(sandbox, { resource: 'account', operation: 'getLimit' });
		expect(run.error).toBeUndefined();
		expect(wire(apiRequests(sandbox)[2])).toEqual({ method: 'GET', path: '/api/wa/2.0/limit', bearer: false, params: { client_secret: SECRET } });
		expect(run.output('Node')[0].json).toEqual({
			blocked: false,
			limit: 10_000,
			used: 2,
			remaining: 9_998,
			response: { block: false, block_limit: 10_000, limit_qty: 2 },
		});
	});

	it('getLimit: blocked once the limit is reached', async () => {
		const small = await startSandbox({ blockLimit: 1 });
		try {
			await runMessaging(small, { resource: 'message', operation: 'sendText', phone: PHONE, text: 'one' });
			const run = await runMessaging(small, { resource: 'account', operation: 'getLimit' });
			expect(run.output('Node')[0].json).toMatchObject({ blocked: true, limit: 1, used: 1, remaining: 0 });
		} finally {
			await small.close();
		}
	});
});

describe('session (account waiting for a QR scan)', () => {
	const waiting = useSandbox({ accounts: [{ clientId: CLIENT_ID, clientSecret: SECRET, status: 'init' }] });

	const qrOf = (json: Record<string, unknown>) => (json.response as { qrCode: string }).qrCode;

	it('login: no bearer, outputs the status and the QR code as a PNG that shows the payload', async () => {
		const run = await runMessaging(waiting, { resource: 'session', operation: 'login' });
		expect(run.error).toBeUndefined();
		expect(apiRequests(waiting).map(wire)).toEqual([
			{ method: 'GET', path: '/api/wa/2.0/get', bearer: false, params: { method: 'login', client_secret: SECRET } },
		]);
		const [item] = run.output('Node');
		expect(item.json).toEqual({
			status: 'got qr code',
			connected: false,
			qrAvailable: true,
			qrImageField: 'qrCode',
			response: { accountStatus: 'got qr code', qrCode: expect.stringMatching(/^2@/) },
		});
		expect(item.binary?.qrCode).toMatchObject({ mimeType: 'image/png', fileName: 'qr-code.png', fileExtension: 'png' });
		const png = Buffer.from(item.binary!.qrCode.data, 'base64');
		expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
		expect(pngShowsQrOf(png, qrOf(item.json))).toBe(true);
		expect(pngShowsQrOf(png, 'another payload')).toBe(false);
	});

	it('getStatus: with a bearer token; the status before login, the QR image in the chosen field after, none once connected', async () => {
		const before = await runMessaging(waiting, { resource: 'session', operation: 'getStatus', qrBinaryPropertyName: 'scanMe' });
		expect(before.error).toBeUndefined();
		expect(before.output('Node')).toEqual([
			{ json: { status: 'init', connected: false, qrAvailable: false, response: { accountStatus: 'init' } }, pairedItem: { item: 0 } },
		]);
		await runMessaging(waiting, { resource: 'session', operation: 'login' });
		const waitingRun = await runMessaging(waiting, { resource: 'session', operation: 'getStatus', qrBinaryPropertyName: 'scanMe' });
		expect(waitingRun.error).toBeUndefined();
		const statusRequest = { method: 'GET', path: '/api/wa/2.0/get', bearer: true, params: { method: 'status', client_secret: SECRET } };
		expect(apiRequests(waiting).map(wire)).toEqual([
			statusRequest,
			{ method: 'GET', path: '/api/wa/2.0/get', bearer: false, params: { method: 'login', client_secret: SECRET } },
			statusRequest,
		]);
		const [item] = waitingRun.output('Node');
		expect(item.json).toMatchObject({ status: 'got qr code', connected: false, qrAvailable: true, qrImageField: 'scanMe' });
		expect(Object.keys(item.binary ?? {})).toEqual(['scanMe']);
		expect(pngShowsQrOf(Buffer.from(item.binary!.scanMe.data, 'base64'), qrOf(item.json))).toBe(true);

		waiting.scan();
		const connectedRun = await runMessaging(waiting, { resource: 'session', operation: 'getStatus' });
		expect(connectedRun.output('Node')).toEqual([
			{ json: { status: 'authenticated', connected: true, qrAvailable: false, response: { accountStatus: 'authenticated' } }, pairedItem: { item: 0 } },
		]);
	});

	it('getQrCode: no bearer; the QR while waiting, the connected status after the scan', async () => {
		const run = await runMessaging(waiting, { resource: 'session', operation: 'getQrCode' });
		expect(run.error).toBeUndefined();
		expect(apiRequests(waiting).map(wire)).toEqual([{ method: 'GET', path: '/api/wa/2.0/qr', bearer: false, params: { client_secret: SECRET } }]);
		const [item] = run.output('Node');
		expect(item.json).toMatchObject({ status: 'got qr code', connected: false, qrAvailable: true });
		expect(pngShowsQrOf(Buffer.from(item.binary!.qrCode.data, 'base64'), qrOf(item.json))).toBe(true);

		waiting.scan();
		const after = await runMessaging(waiting, { resource: 'session', operation: 'getQrCode' });
		expect(after.output('Node')[0]).toEqual({
			json: {
				status: 'authenticated',
				connected: true,
				qrAvailable: false,
				deviceStatus: 'connected',
				response: { device_status: 'connected', accountStatus: 'authenticated' },
			},
			pairedItem: { item: 0 },
		});
		expect(tokenRequests(waiting)).toHaveLength(0);
	});

	it('getQrCode: a data:image/png answer (older route) is decoded, not rendered again', async () => {
		const older = await startSandbox({ qrAsDataUri: true, accounts: [{ clientId: CLIENT_ID, clientSecret: SECRET, status: 'init' }] });
		try {
			const run = await runMessaging(older, { resource: 'session', operation: 'getQrCode' });
			expect(run.error).toBeUndefined();
			const [item] = run.output('Node');
			const sent = qrOf(item.json);
			expect(sent).toMatch(/^data:image\/png;base64,/);
			expect(Buffer.from(item.binary!.qrCode.data, 'base64')).toEqual(Buffer.from(sent.slice('data:image/png;base64,'.length), 'base64'));
			expect(item.binary!.qrCode.mimeType).toBe('image/png');
		} finally {
			await older.close();
		}
	});
});

describe('auth', () => {
	it('getToken: asks for a new token and outputs its expiry, never the token', async () => {
		const before = Date.now();
		const run = await runMessaging(sandbox, { resource: 'auth', operation: 'getToken' });
		expect(run.error).toBeUndefined();
		expect(tokenRequests(sandbox).map(wire)).toEqual([
			{ method: 'GET', path: '/api/wa/authentication', bearer: false, params: { client_id: CLIENT_ID, client_secret: SECRET } },
		]);
		const [item] = run.output('Node');
		// The same output shape as the Currency Rate node's Get Token (docs/messaging.md, "Auth → Get Token").
		expect(item.json).toEqual({
			tokenRenewed: true,
			api: 'messaging',
			expiresAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
			response: { connection: 'ok' },
		});
		// The credential's lifetime (60 min) less the safety margin.
		const expiresAt = Date.parse(item.json.expiresAt as string);
		expect(expiresAt).toBeGreaterThan(before + 55 * 60_000);
		expect(expiresAt).toBeLessThanOrEqual(Date.now() + 60 * 60_000);

		// verifyToken uses the token getToken fetched (no second token request); it is nowhere in the output.
		const verify = await runMessaging(sandbox, { resource: 'auth', operation: 'verifyToken' });
		expect(verify.error).toBeUndefined();
		expect(tokenRequests(sandbox)).toHaveLength(1);
		const [protectedRequest] = apiRequests(sandbox);
		expect(wire(protectedRequest)).toEqual({ method: 'GET', path: '/api/wa/protected', bearer: true, params: { client_secret: SECRET } });
		const token = protectedRequest.authorization!.replace(/^Bearer /, '');
		expect(token.length).toBeGreaterThan(10);
		expect(JSON.stringify(run.run.data.resultData.runData)).not.toContain(token);
		expect(verify.output('Node')).toEqual([
			{ json: { valid: true, message: 'Token is valid', response: { valid: true, message: 'Token is valid' } }, pairedItem: { item: 0 } },
		]);
	});

	it('getToken replaces a cached token: the next call uses the new one', async () => {
		await runMessaging(sandbox, { resource: 'auth', operation: 'verifyToken' });
		await runMessaging(sandbox, { resource: 'auth', operation: 'getToken' });
		await runMessaging(sandbox, { resource: 'auth', operation: 'verifyToken' });
		expect(tokenRequests(sandbox)).toHaveLength(2);
		const [first, second] = apiRequests(sandbox).map((entry) => entry.authorization);
		expect(first).not.toEqual(second);
	});
});
