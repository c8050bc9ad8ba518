/**
 * Send File from a URL against hostile file servers and URLs, through n8n's engine: a body that
 * trickles one byte at a time, 300 items each with its own Download Timeout, private addresses
 * written inside IPv6 addresses, Block Private Addresses set by expressions it does not
 * understand, credentials in the URL's query and fragment, a file name that reverses itself.
 */
import http from 'http';
import type { AddressInfo, Socket } from 'net';

import type { INodeParameters } from 'n8n-workflow';

import { expectNoSecret } from '../harness/hostile';
import { PHONE, runMessaging } from '../harness/messagingNode';
import { sendOptions } from '../harness/sendOptions';
import { useSandbox } from '../harness/useSandbox';

const sandbox = useSandbox();

const sendFromUrl = (fileUrl: string, downloadOptions: INodeParameters = {}): INodeParameters => ({
	resource: 'message',
	operation: 'sendFile',
	phone: PHONE,
	fileSource: 'url',
	fileUrl,
	downloadOptions,
});

/** A file server whose answers `handle` writes, counting connections open at once. */
async function fileServer(handle: (res: http.ServerResponse) => void) {
	let open = 0;
	let peak = 0;
	const sockets = new Set<Socket>();
	const server = http.createServer((_req, res) => handle(res));
	server.on('connection', (socket: Socket) => {
		sockets.add(socket);
		peak = Math.max(peak, ++open);
		socket.on('close', () => {
			open--;
			sockets.delete(socket);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		peak: () => peak,
		close: async () => {
			for (const socket of sockets) socket.destroy();
			await new Promise((resolve) => server.close(resolve));
		},
	};
}

describe('time and connections', () => {
	it('one byte every 300 ms is cut off at the download deadline (Download Timeout 1 s, Max File Size 1 KB)', async () => {
		const server = await fileServer((res) => {
			res.writeHead(200, { 'content-type': 'application/pdf' });
			const timer = setInterval(() => res.write('x'), 300);
			res.on('close', () => clearInterval(timer));
		});
		try {
			const run = await runMessaging(
				sandbox,
				sendFromUrl(`${server.url}/slow.pdf`, { timeoutSeconds: 1, maxSizeMb: 0.001 }),
			);
			expect(run.error?.message).toMatch(
				/: the download broke off after \d+ bytes \(the download took longer than 1 s in all \(Download Timeout plus 1 s per MB of Max File Size\)\) \[item 0\]$/,
			);
			expect(sandbox.ledger()).toHaveLength(0);
		} finally {
			await server.close();
		}
	});

	it('300 items with Download Timeouts of 30…329 s are all sent, at most Parallel Requests connections to the server at once', async () => {
		const server = await fileServer((res) => {
			setTimeout(
				() => res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.7'),
				5,
			);
		});
		try {
			const items = Array.from({ length: 300 }, (_, n) => ({ timeout: 30 + n }));
			const run = await runMessaging(
				sandbox,
				{
					...sendFromUrl(`${server.url}/f.pdf`, { timeoutSeconds: '={{ $json.timeout }}' }),
					// Pacing off: the test is about connections at once.
					options: sendOptions({ parallel: 50 }),
				},
				items,
			);
			expect(run.error).toBeUndefined();
			expect(run.output('Node')).toHaveLength(300);
			expect(sandbox.ledger()).toHaveLength(300);
			expect(server.peak()).toBeLessThanOrEqual(50);
		} finally {
			await server.close();
		}
	});
});

describe('Block Private Addresses', () => {
	it.each([
		'[64:ff9b::7f00:1]',
		'[64:ff9b::a9fe:a9fe]',
		'[::127.0.0.1]',
		'[::ffff:0:7f00:1]',
		'[2002:7f00:1::1]',
		'[2002:a9fe:a9fe::]',
		'[::ffff:127.0.0.1]',
		'[::1]',
		'0x7f.1',
		'2130706433',
	])('refuses %s (a private address in another form), before any request', async (host) => {
		const run = await runMessaging(
			sandbox,
			sendFromUrl(`http://${host}:${new URL(sandbox.url).port}/files/a.pdf`, {
				blockPrivateAddresses: true,
			}),
		);
		expect(run.error?.message).toMatch(
			/is a private or local address, and "Block Private Addresses" is on/,
		);
		expect(sandbox.fileRequests()).toHaveLength(0);
	});

	it.each(['={{ "true" }}', '={{ "on" }}', '={{ "1" }}', '={{ [] }}', '={{ {} }}'])(
		'is on for %s (a value it does not understand fails closed)',
		async (value) => {
			const run = await runMessaging(
				sandbox,
				sendFromUrl(`${sandbox.url}/files/a.pdf`, { blockPrivateAddresses: value }),
			);
			expect(run.error?.message).toContain('"Block Private Addresses" is on');
			expect(sandbox.fileRequests()).toHaveLength(0);
		},
	);
});

describe('what the output and errors show', () => {
	const secrets = [
		'eyJhbGciOiJIUzI1NiJ9.c2VjcmV0',
		'4/0AeaYSHB-code',
		'f00dcafe5ign',
		'ya29.a0-token',
	];
	const query = `jwt=${secrets[0]}&code=${encodeURIComponent(secrets[1])}&X-Amz-Signature=${secrets[2]}#access_token=${secrets[3]}`;

	it('no query value or fragment of the URL, in the output or in an error', async () => {
		const sent = await runMessaging(
			sandbox,
			sendFromUrl(`${sandbox.url}/files/a.pdf?size=10&${query}`),
		);
		const failed = await runMessaging(
			sandbox,
			sendFromUrl(`${sandbox.url}/files/gone.pdf?status=404&${query}`),
			[{}],
			{ onError: 'continueRegularOutput' },
		);
		expect(sent.output('Node')[0].json.fileUrl).toMatch(
			/\?size=\*\*\*&jwt=\*\*\*&code=\*\*\*&X-Amz-Signature=\*\*\*#\*\*\*$/,
		);
		expect(failed.output('Node')[0].json.error).toMatch(/HTTP 404 Not Found/);
		expectNoSecret('download output and error', [sent.run, failed.run], secrets);
	});

	it('a Content-Disposition name that reverses itself (U+202E) is cleaned before it is sent or shown', async () => {
		const disposition = encodeURIComponent(`attachment; filename*=UTF-8''invoice%E2%80%AEfdp.exe`);
		const run = await runMessaging(
			sandbox,
			sendFromUrl(`${sandbox.url}/files/x?size=10&disposition=${disposition}`),
		);
		expect(run.output('Node')[0].json.fileName).toBe('invoicefdp.exe');
		expect(sandbox.ledger()[0].file?.filename).toBe('invoicefdp.exe');
	});
});
