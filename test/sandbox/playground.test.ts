/**
 * The sandbox a newcomer clicks around with (`npm run sandbox`, `npm run n8n`): one connected
 * account and one logged out, whose QR code the Messaging node shows as an image, and a "phone"
 * (a page and a control call) that scans it and completes the login. Through the engine and
 * over HTTP, as a user's n8n and browser would use it.
 */
import { spawn } from 'child_process';
import { readFileSync } from 'fs';
import { join } from 'path';
import { request } from 'undici';

import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../harness/engine';
import { PLAYGROUND_ACCOUNTS } from '../../sandbox/state';
import { checkAccount, readAccountAnswer } from '../../nodes/shared/gateway';
import { DEFAULT_MESSAGING_VERSION } from '../../nodes/shared/properties';
import { ApiClient, parseCredentials } from '../../nodes/shared/transport';
import { pngShowsQrOf } from '../harness/messagingNode';
import { useSandbox } from '../harness/useSandbox';

const sandbox = useSandbox({ accounts: PLAYGROUND_ACCOUNTS });

async function session(
	operation: 'getQrCode' | 'getStatus',
	clientId: string,
	clientSecret: string,
) {
	const workflow = singleNodeWorkflow('messaging', { resource: 'session', operation }, [{}]);
	const run = await runWorkflow(
		workflow,
		sandboxCredential(sandbox.url, { clientId, clientSecret }),
	);
	expect(run.error).toBeUndefined();
	return run.output('Node')[0];
}

async function control(
	method: 'GET' | 'POST',
	path: string,
	body?: unknown,
): Promise<{ status: number; text: string }> {
	const response = await request(`${sandbox.url}/__sandbox/${path}`, {
		method,
		headers: body === undefined ? {} : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	return { status: response.statusCode, text: await response.body.text() };
}

describe('the playground accounts', () => {
	it('each holds the WhatsApp number the README gives it: Account → Check shows it', async () => {
		const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
		for (const [clientId, clientSecret, shown] of [
			['demo-client', 'demo-secret', '+62 811-0000-0001'],
			['qr-client', 'qr-secret', '+62 811-0000-0002'],
		]) {
			expect(readme).toContain(`\`${clientId}\` / \`${clientSecret}\` (${shown})`);
			// What the Messaging Trigger asks when its Account Number is empty.
			const client = new ApiClient(
				parseCredentials({ baseUrl: sandbox.url, clientId, clientSecret }),
			);
			const answer = await checkAccount(
				client,
				{ whatsapp_number: '', whatsapp_webhook: '' },
				{ version: DEFAULT_MESSAGING_VERSION },
			);
			expect(readAccountAnswer(answer).whatsappNumber).toBe(shown.replace(/\D/g, ''));
		}
	});

	it('demo-client is connected, qr-client waits for a scan', () => {
		expect(sandbox.accounts().map(({ clientId, status }) => ({ clientId, status }))).toEqual([
			{ clientId: 'demo-client', status: 'authenticated' },
			{ clientId: 'qr-client', status: 'init' },
		]);
	});

	it('Get QR Code shows a QR image for qr-client; the phone page shows the same code; scanning it there connects the account', async () => {
		const waiting = await session('getQrCode', 'qr-client', 'qr-secret');
		expect(waiting.json).toMatchObject({
			connected: false,
			qrAvailable: true,
			qrImageField: 'qrCode',
		});
		expect(waiting.binary?.qrCode.mimeType).toBe('image/png');
		const payload = sandbox.accounts()[1].qrPayload as string;
		expect(pngShowsQrOf(Buffer.from(waiting.binary!.qrCode.data, 'base64'), payload)).toBe(true);

		const page = await control('GET', 'phone');
		expect(page.status).toBe(200);
		expect(page.text).toContain('<img alt="QR code of qr-client" src="data:image/png;base64,');
		const shown = /<img alt="QR code of qr-client" src="data:image\/png;base64,([^"]+)"/.exec(
			page.text,
		)![1];
		expect(pngShowsQrOf(Buffer.from(shown, 'base64'), payload)).toBe(true);
		// The page's button posts what its script names: /__sandbox/scan with the account.
		expect(page.text).toContain('<button data-call="scan" data-client="qr-client">');
		expect(page.text).toContain("fetch('/__sandbox/' + call");
		expect(page.text).toContain('post(button.dataset.call, { clientId: button.dataset.client');

		expect(await control('POST', 'scan', { clientId: 'qr-client' })).toEqual({
			status: 200,
			text: '{"ok":true}',
		});
		const connected = await session('getStatus', 'qr-client', 'qr-secret');
		expect(connected.json).toMatchObject({
			status: 'authenticated',
			connected: true,
			qrAvailable: false,
		});
		expect(connected.binary).toBeUndefined();
		expect((await control('GET', 'phone')).text).toContain(
			'<button data-call="logout" data-client="qr-client">',
		);
	});

	it('logging out brings a new QR code, and leaves the other account connected', async () => {
		await session('getQrCode', 'qr-client', 'qr-secret');
		const first = sandbox.accounts()[1].qrPayload;
		await control('POST', 'scan', { clientId: 'qr-client' });
		expect(await control('POST', 'logout', { clientId: 'qr-client' })).toEqual({
			status: 200,
			text: '{"ok":true}',
		});
		const again = await session('getQrCode', 'qr-client', 'qr-secret');
		expect(again.json).toMatchObject({ connected: false, qrAvailable: true });
		expect(sandbox.accounts()[1].qrPayload).not.toBe(first);
		expect((await session('getStatus', 'demo-client', 'demo-secret')).json).toMatchObject({
			connected: true,
		});
	});

	it('the phone page says how to get a QR code before n8n asked for one', async () => {
		expect((await control('GET', 'phone')).text).toContain(
			'No QR code yet: run <b>Session → Get QR Code</b>',
		);
	});
});

describe('the phone page: the chat as the person sees it', () => {
	it('shows what the account sent, its links, and the usage limit', async () => {
		const workflow = singleNodeWorkflow(
			'messaging',
			{
				resource: 'message',
				operation: 'sendText',
				phone: '+62 812-8877-6713',
				text: 'Approve the order?\n\nApprove: https://n8n.example/webhook-waiting/1?approved=true',
			},
			[{}],
		);
		const run = await runWorkflow(workflow, sandboxCredential(sandbox.url));
		expect(run.error).toBeUndefined();
		const page = (await control('GET', 'phone')).text;
		expect(page).toContain('<div class="msg sent" data-to="6281288776713">');
		expect(page).toContain('Approve the order?');
		// Send and Wait's signed links become buttons (test/sandbox/phone.test.ts); this one is a link.
		expect(page).toContain(
			'Approve: <a href="https://n8n.example/webhook-waiting/1?approved=true" target="_blank">https://n8n.example/webhook-waiting/1?approved=true</a>',
		);
		expect(page).toContain('Usage limit: 1 of 10000 messages used, 9999 left.');
	});

	it('writing to an account posts to its webhook as the gateway would, and the chat shows it', async () => {
		const received: string[] = [];
		const { createServer } = await import('http');
		const hook = createServer((req, res) => {
			let body = '';
			req.on('data', (chunk: Buffer) => (body += chunk.toString()));
			req.on('end', () => {
				received.push(body);
				res.end('{"received":true}');
			});
		});
		await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
		try {
			const address = hook.address() as { port: number };
			sandbox.setWebhook('demo-client', `http://127.0.0.1:${address.port}/hook`);
			const page = (await control('GET', 'phone')).text;
			expect(page).toContain('<form class="write" data-client="demo-client">');
			expect(page).toContain("post('incoming', { clientId: form.dataset.client");
			const sent = await control('POST', 'incoming', {
				clientId: 'demo-client',
				sender: '6281300000002',
				message: 'Is my order ready?',
			});
			expect(sent.status).toBe(200);
			expect(JSON.parse(received[0]).params).toMatchObject({
				sender: '6281300000002',
				message: 'Is my order ready?',
				recipient: '6281100000001',
			});
			expect((await control('GET', 'phone')).text).toMatch(
				/<div class="msg received"><small>from \+6281300000002 · [^<]+<\/small><br>Is my order ready\?<br><button data-redeliver [^>]+>Deliver again<\/button><\/div>/,
			);
		} finally {
			hook.close();
		}
	});

	it('says why a message reached no workflow when the account has no webhook', async () => {
		expect((await control('GET', 'phone')).text).toContain(
			'no webhook yet: publish (n8n 2.x) or activate (1.x) a workflow with a Messaging Trigger',
		);
		const sent = await control('POST', 'incoming', { clientId: 'qr-client', message: 'Hello?' });
		expect(sent.status).toBe(400);
		expect((await control('GET', 'phone')).text).toContain(
			'reached no workflow: the account has no webhook: publish the workflow, or press Listen for test event again',
		);
	});
});

describe('npm run sandbox', () => {
	it('starts with both accounts and prints how to scan', async () => {
		const root = join(__dirname, '..', '..');
		const child = spawn(
			process.execPath,
			[
				require.resolve('ts-node/dist/bin.js'),
				'--transpile-only',
				'sandbox/cli.ts',
				'--port',
				'0',
				'--allow-host',
				'sandbox.test',
			],
			{ cwd: root },
		);
		try {
			let printed = '';
			await new Promise<void>((resolve, reject) => {
				const timer = setTimeout(
					() => reject(new Error(`no start-up lines in time: ${printed}`)),
					60_000,
				);
				child.stdout.on('data', (chunk: Buffer) => {
					printed += chunk.toString();
					if (printed.includes('Press Ctrl-C')) {
						clearTimeout(timer);
						resolve();
					}
				});
				child.once('exit', (code) => reject(new Error(`exited ${code}: ${printed}`)));
			});
			expect(printed).toMatch(/demo-client \/ demo-secret {3}\(connected: sends work\)/);
			expect(printed).toMatch(
				/qr-client \/ qr-secret {3}\(logged out: Get QR Code shows a QR image\)/,
			);
			const url = /Sandbox listening on (\S+)/.exec(printed)![1];
			expect(printed).toContain(`open ${url}/__sandbox/phone`);
			const accounts = (await (await request(`${url}/__sandbox/accounts`)).body.json()) as Array<{
				clientId: string;
				status: string;
			}>;
			expect(accounts.map((a) => a.status)).toEqual(['authenticated', 'init']);
			// Reached by the name it was told, and by no other.
			for (const [host, status] of [
				['sandbox.test', 200],
				['evil.example', 421],
			] as const) {
				const answer = await request(`${url}/__sandbox/accounts`, { headers: { host } });
				await answer.body.dump();
				expect({ host, status: answer.statusCode }).toEqual({ host, status });
			}
		} finally {
			child.kill('SIGTERM');
		}
	}, 90_000);
});
