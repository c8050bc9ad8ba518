/**
 * Downloading a file from a URL (Send File → File Source "URL") through n8n's real engine and
 * n8n's own HTTP helper, against the sandbox's file server over real HTTP: redirects, limits,
 * names and types, Block Private Addresses, proxies, and errors that name the URL.
 */
import { createHash } from 'crypto';
import http from 'http';
import type { AddressInfo } from 'net';
import { gzipSync } from 'zlib';

import type { INodeParameters } from 'n8n-workflow';

import { privateAddressProblem } from '../../../../nodes/Messaging/helpers/privateAddresses';
import { fileSha256 } from '../../../../sandbox/files';
import { startConnectProxy, withProxyEnvironment } from '../../../harness/connectProxy';
import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../../../harness/engine';
import { PHONE, runMessaging } from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';

const sandbox = useSandbox();

function sendFromUrl(fileUrl: string, downloadOptions: INodeParameters = {}): INodeParameters {
	return {
		resource: 'message',
		operation: 'sendFile',
		phone: PHONE,
		fileSource: 'url',
		fileUrl: fileUrl.startsWith('http') ? fileUrl : `${sandbox.url}${fileUrl}`,
		downloadOptions,
	};
}

/** The error of a run that failed, or the file the gateway received from one that did not. */
async function download(fileUrl: string, downloadOptions: INodeParameters = {}) {
	const run = await runMessaging(sandbox, sendFromUrl(fileUrl, downloadOptions));
	return {
		error: run.error?.message,
		file: sandbox.ledger()[0]?.file,
		output: run.error ? undefined : run.output('Node')[0].json,
	};
}

const BLOCKED = { blockPrivateAddresses: true };

describe('Send File from a URL: the download', () => {
	it('streams the file whole; the name from the path (decoded), the type from the answer', async () => {
		const { file, output } = await download(
			'/files/reports/q3%20summary.pdf?size=300000&type=application/pdf%3B%20charset%3Dbinary',
		);
		expect(file).toMatchObject({
			filename: 'q3 summary.pdf',
			mimeType: 'application/pdf',
			size: 300000,
			sha256: fileSha256(300000),
		});
		expect(output).toMatchObject({ fileSize: 300000 });
	});

	it('name from Content-Disposition (RFC 8187 first), folders stripped; a generic type is no type', async () => {
		const disposition = encodeURIComponent(
			`attachment; filename="fallback.pdf"; filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf`,
		);
		const named = await download(`/files/download?size=10&disposition=${disposition}`);
		// application/octet-stream from the server: the type comes from the name.
		expect(named.file).toMatchObject({
			filename: 'Rechnung März.pdf',
			mimeType: 'application/pdf',
		});
		sandbox.reset();
		const sneaky = await download(
			`/files/x?size=10&disposition=${encodeURIComponent('attachment; filename="../../etc/passwd"')}`,
		);
		expect(sneaky.file?.filename).toBe('passwd');
		sandbox.reset();
		const broken = await download(
			`/files/y.txt?size=10&disposition=${encodeURIComponent('attachment; filename="unterminated')}`,
		);
		expect(broken.file?.filename).toBe('y.txt');
	});

	it('a Content-Disposition name is cleaned like every file name (device names, path)', async () => {
		const name = encodeURIComponent(
			`attachment; filename*=UTF-8''${encodeURIComponent('..\\CON.txt')}`,
		);
		expect((await download(`/files/x?size=10&disposition=${name}`)).file?.filename).toBe(
			'_CON.txt',
		);
	});

	it('follows redirects up to the limit, one request each; name and fileUrl from where it ended', async () => {
		const end = encodeURIComponent('/files/real.pdf?size=50&token=s3cr3t');
		const { file, output } = await download(`/files/start?redirects=2&redirectTo=${end}`, {
			maxRedirects: 3,
		});
		expect(file).toMatchObject({ filename: 'real.pdf', size: 50 });
		expect(output?.fileUrl).toMatch(/\/files\/real\.pdf\?size=\*\*\*&token=\*\*\*$/);
		expect(sandbox.fileRequests().map((request) => request.url.split('?')[0])).toEqual([
			'/files/start',
			'/files/start',
			'/files/start',
			'/files/real.pdf',
		]);
		sandbox.reset();
		const tooMany = await download('/files/start?redirects=4&size=50', { maxRedirects: 3 });
		expect(tooMany.error).toMatch(
			/^Could not download the file from http:\/\/127\.0\.0\.1:\d+\/files\/start\?redirects=\*\*\*&size=\*\*\*: more than 3 redirects \(raise "Max Redirects" if the server really needs more\) \[item 0\]$/,
		);
		expect(sandbox.fileRequests()).toHaveLength(4);
	});

	it('refuses a redirect to another scheme', async () => {
		const { error } = await download(
			`/files/a.pdf?redirectTo=${encodeURIComponent('ftp://files.example.org/a.pdf')}`,
		);
		expect(error).toContain(
			'the server redirected to ftp://files.example.org/a.pdf, which uses ftp: only http and https URLs can be downloaded',
		);
	});

	it('user:password in the URL is sent as Basic auth, and not to another origin after a redirect', async () => {
		const withCredentials = sandbox.url.replace('http://', 'http://ann:pw@');
		const { file, output } = await download(
			`${withCredentials}/files/private.pdf?auth=ann:pw&size=20`,
		);
		expect(file?.size).toBe(20);
		expect(output?.fileUrl).toMatch(/^http:\/\/\*\*\*@127\.0\.0\.1:/);
		expect(sandbox.fileRequests()[0].authorization).toBe(
			`Basic ${Buffer.from('ann:pw').toString('base64')}`,
		);

		// Same sandbox through another origin (localhost instead of 127.0.0.1): the credentials stay behind.
		const otherOrigin = `${sandbox.url.replace('127.0.0.1', 'localhost')}/files/private.pdf?size=20`;
		await download(`${withCredentials}/files/hop?redirectTo=${encodeURIComponent(otherOrigin)}`);
		const [hop, target] = sandbox.fileRequests().slice(-2);
		expect(hop.authorization).toBeDefined();
		expect(target.authorization).toBeUndefined();
	});

	it('size cap: from Content-Length before any byte is read, or while streaming when the length is unknown', async () => {
		const declared = await download('/files/big.bin?size=300000000', { maxSizeMb: 1 });
		expect(declared.error).toContain(
			'the file has 286 MB, over the limit of 1.0 MB (raise "Max File Size" to send it)',
		);
		await new Promise((resolve) => setTimeout(resolve, 100));
		expect(sandbox.fileRequests()[0]).toMatchObject({ aborted: true });
		expect(sandbox.fileRequests()[0].bytesSent).toBeLessThan(50_000_000);

		const streamed = await download('/files/big.bin?size=3000000&chunked=1', { maxSizeMb: 1 });
		expect(streamed.error).toContain('the file is larger than the limit of 1.0 MB');
		expect(sandbox.ledger()).toHaveLength(0);
	});

	it('a length that does not match, a stalled body, a slow answer, an empty file: errors, not hangs', async () => {
		expect((await download('/files/short.bin?size=1000&declare=5000')).error).toMatch(
			/short\.bin\?size=\*\*\*&declare=\*\*\*: (the connection failed \(connection lost\)|the download broke off after 1000 bytes)/,
		);
		expect(
			(await download('/files/stall.bin?size=200000&stallAfter=70000', { timeoutSeconds: 1 }))
				.error,
		).toMatch(
			/the download broke off after \d+ bytes \(no data for 1 s \(raise "Download Timeout" if the server is slow\)\)/,
		);
		expect((await download('/files/slow.bin?delayMs=2500', { timeoutSeconds: 1 })).error).toMatch(
			/slow\.bin\?delayMs=\*\*\*: no data for 1 s/,
		);
		expect((await download('/files/empty.bin?size=0')).error).toContain('the file is empty');
		expect(sandbox.ledger()).toHaveLength(0);
	});

	it('a whole download has a deadline: one byte every 300 ms is cut off, however each byte is on time', async () => {
		const server = http.createServer((_req, res) => {
			res.writeHead(200, { 'content-type': 'application/pdf' });
			const timer = setInterval(() => res.write('x'), 300);
			res.on('close', () => clearInterval(timer));
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		try {
			const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow.pdf`;
			const { error } = await download(url, { timeoutSeconds: 1, maxSizeMb: 0.5 });
			expect(error).toMatch(
				/the download broke off after \d+ bytes \(the download took longer than 1\.5 s in all \(Download Timeout plus 1 s per MB of Max File Size\)\) \[item 0\]$/,
			);
		} finally {
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		}
	});
	describe('a server that answers gzip (Content-Encoding) although asked for none', () => {
		/** Serves `content` gzipped, with the Content-Length of the gzip, as such servers do. */
		async function gzipServer(content: Buffer) {
			const gzipped = gzipSync(content);
			const server = http.createServer((_req, res) => {
				res.writeHead(200, {
					'content-type': 'text/csv',
					'content-encoding': 'gzip',
					'content-length': gzipped.length,
				});
				res.end(gzipped);
			});
			await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
			return {
				url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rates.csv`,
				gzipped,
				close: async () => {
					server.closeAllConnections();
					await new Promise((resolve) => server.close(resolve));
				},
			};
		}

		it('sends the file as the server means it: its content, inflated, byte for byte', async () => {
			const content = Buffer.from(
				Array.from({ length: 20_000 }, (_, i) => `${i},${(i * 7919) % 1000}\n`).join(''),
			);
			const server = await gzipServer(content);
			try {
				expect(server.gzipped.length).toBeLessThan(content.length / 2);
				const { error, file, output } = await download(server.url);
				expect(error).toBeUndefined();
				expect(file).toMatchObject({
					filename: 'rates.csv',
					mimeType: 'text/csv',
					size: content.length,
					sha256: createHash('sha256').update(content).digest('hex'),
				});
				expect(output).toMatchObject({ fileSize: content.length });
			} finally {
				await server.close();
			}
		});

		it('Max File Size bounds the inflated bytes: a small gzip of 64 MB is refused at the cap', async () => {
			const server = await gzipServer(Buffer.alloc(64 * 1024 * 1024));
			try {
				expect(server.gzipped.length).toBeLessThan(1024 * 1024);
				const { error } = await download(server.url, { maxSizeMb: 1 });
				expect(error).toMatch(
					/^Could not download the file from http:\/\/127\.0\.0\.1:\d+\/rates\.csv: the file is larger than the limit of 1\.0 MB \(raise "Max File Size" to send it\) \[item 0\]$/,
				);
				expect(sandbox.ledger()).toHaveLength(0);
			} finally {
				await server.close();
			}
		});
	});

	it("n8n's Stop ends a download waiting for its answer at once, not after Download Timeout", async () => {
		const started = Date.now();
		await runWorkflow(
			singleNodeWorkflow(
				'messaging',
				sendFromUrl('/files/slow.bin?delayMs=30000', { timeoutSeconds: 60 }),
			),
			sandboxCredential(sandbox.url),
			{ stopWhen: () => sandbox.fileRequests().length > 0 },
		);
		await new Promise((resolve) => setTimeout(resolve, 100));
		expect(sandbox.fileRequests()[0]).toMatchObject({ aborted: true });
		expect(Date.now() - started).toBeLessThan(10_000);
		expect(sandbox.ledger()).toHaveLength(0);
	});
});

describe('Block Private Addresses', () => {
	it('refuses loopback, by literal and by name, before any request', async () => {
		expect((await download('/files/a.pdf', BLOCKED)).error).toContain(
			'127.0.0.1 is a private or local address, and "Block Private Addresses" is on',
		);
		const byName = await download(
			`${sandbox.url.replace('127.0.0.1', 'localhost')}/files/a.pdf`,
			BLOCKED,
		);
		expect(byName.error).toMatch(
			/localhost resolves to (127\.0\.0\.1|::1), a private or local address/,
		);
		expect(sandbox.fileRequests()).toHaveLength(0);
	});

	it('private addresses written inside IPv6 (mapped, NAT64, IPv4-compatible, 6to4, Teredo) are private', async () => {
		const privateForms = [
			'64:ff9b::7f00:1', // NAT64 of 127.0.0.1
			'64:ff9b::10.0.0.1',
			'64:ff9b::a9fe:a9fe', // 169.254.169.254, the cloud metadata address
			'64:ff9b:1::a00:1', // local-use NAT64
			'::127.0.0.1', // IPv4-compatible
			'::a00:1',
			'::ffff:0:7f00:1', // IPv4-translated
			'::ffff:7f00:1',
			'0:0:0:0:0:ffff:127.0.0.1',
			'2002:7f00:1::1', // 6to4 of 127.0.0.1
			'2002:c0a8:101::', // 6to4 of 192.168.1.1
			'2002:a9fe:a9fe::1',
			'2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo
			'2001:db8::1',
			'fec0::1',
			'100::1',
			'fe80::1',
			'fd00::1',
		];
		const problems = async (forms: string[]) =>
			await Promise.all(
				forms.map(async (form) => await privateAddressProblem(new URL(`http://[${form}]/`))),
			);
		// The forms let through, by name: toEqual would take [undefined] for [].
		const allowed = (await problems(privateForms)).flatMap((problem, i) =>
			problem === undefined ? [privateForms[i]] : [],
		);
		expect(allowed).toEqual([]);
		for (const host of ['10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '0.0.0.0'])
			expect(await privateAddressProblem(new URL(`http://${host}/`))).toContain('private or local');
		const publicForms = [
			'64:ff9b::808:808',
			'2002:808:808::1',
			'::ffff:8.8.8.8',
			'2606:4700::1111',
		];
		expect(await problems(publicForms)).toEqual(publicForms.map(() => undefined));
		expect(await privateAddressProblem(new URL('http://8.8.8.8/'))).toBeUndefined();
	});

	it('a name that does not resolve here is refused, not handed to a proxy to resolve', async () => {
		const proxy = await startConnectProxy();
		const restore = withProxyEnvironment({ HTTP_PROXY: proxy.url, NO_PROXY: undefined });
		try {
			const { error } = await download('http://no-such-host.invalid/files/a.pdf', BLOCKED);
			expect(error).toContain(
				'no-such-host.invalid does not resolve here, so it cannot be checked, and "Block Private Addresses" is on',
			);
			const byName = await download(
				`${sandbox.url.replace('127.0.0.1', 'localhost')}/files/a.pdf`,
				BLOCKED,
			);
			expect(byName.error).toMatch(/localhost resolves to .*"Block Private Addresses" is on/);
			expect([...proxy.tunnels, ...proxy.forwarded]).toEqual([]);
		} finally {
			restore();
			await proxy.close();
		}
	});
});

describe('proxies and what is shown', () => {
	it("goes through n8n's proxy settings (HTTP_PROXY), directly to hosts in NO_PROXY", async () => {
		const proxy = await startConnectProxy();
		const restore = withProxyEnvironment({ HTTP_PROXY: proxy.url, NO_PROXY: undefined });
		try {
			expect((await download('/files/p.pdf?size=64')).file?.size).toBe(64);
			expect(proxy.forwarded).toEqual([`${sandbox.url}/files/p.pdf?size=64`]);
			process.env.NO_PROXY = '127.0.0.1';
			sandbox.reset();
			expect((await download('/files/q.pdf?size=64')).file?.size).toBe(64);
			expect(proxy.forwarded).toHaveLength(1);
		} finally {
			restore();
			await proxy.close();
		}
	});

	it('HTTP failures name the status and the URL, with credentials redacted', async () => {
		const url = sandbox.url.replace('http://', 'http://ann:s3cret-pw@');
		const { error } = await download(`${url}/files/gone.pdf?status=404&access_token=abc123xyz`);
		expect(error).toMatch(
			/^Could not download the file from http:\/\/\*\*\*@127\.0\.0\.1:\d+\/files\/gone\.pdf\?status=\*\*\*&access_token=\*\*\*: the server answered HTTP 404 Not Found \[item 0\]$/,
		);
		expect(error).not.toMatch(/s3cret-pw|abc123xyz|ann/);
	});

	it('a File URL that does not parse is quoted without user:password and query values', async () => {
		const refused = async (fileUrl: string) => {
			const run = await runMessaging(sandbox, { ...sendFromUrl(''), fileUrl });
			expect(run.error?.description).toMatch(
				/^Write the full address, starting with https:\/\/ \(or http:\/\/\)\./,
			);
			return run.error?.message;
		};
		// A typo in the port.
		expect(
			await refused('https://admin:S3cret@files.example.com:8o80/x.pdf?token=abc123&v=2#k'),
		).toBe(
			'Field "File URL" is not a URL: "https://***@files.example.com:8o80/x.pdf?token=***&v=***#***" [item 0]',
		);
		// No scheme: "admin:" reads as one.
		expect(await refused('admin:S3cret@files.example.com/x.pdf?token=abc123')).toBe(
			'Field "File URL" uses admin: only http and https URLs can be downloaded: "admin:***@files.example.com/x.pdf?token=***" [item 0]',
		);
		// The password past the cut of 200 characters: hidden before the cut, not cut in half.
		const long = await refused(`https://ann:${'S3cret'.repeat(50)}@files.example.com:8o80/x.pdf`);
		expect(long).toBe(
			'Field "File URL" is not a URL: "https://***@files.example.com:8o80/x.pdf" [item 0]',
		);
		const longPath = await refused(
			`https://files.example.com:8o80/${'a'.repeat(300)}?token=abc123`,
		);
		expect(longPath?.length).toBeLessThan(300);
		expect(sandbox.fileRequests()).toHaveLength(0);
	});

	it('the URL shown hides user:password, every query value and the fragment unless Show Full URL is on; the names stay', async () => {
		// Refused before any request (Block Private Addresses), so every form reaches the error.
		const shown = async (fileUrl: string, options: INodeParameters = {}) =>
			(await download(fileUrl, { ...BLOCKED, ...options })).error?.match(
				/^Could not download the file from (.*): 127\.0\.0\.1 is a private/,
			)?.[1];
		const signed = `${sandbox.url.replace('http://', 'http://u:p@')}/a/b.pdf?X-Amz-Signature=abc&X-Amz-Credential=k&part=2&jwt=eyJ&code=4%2F0A#access_token=ya29`;
		expect(await shown(signed)).toBe(
			`${sandbox.url.replace('http://', 'http://***@')}/a/b.pdf?X-Amz-Signature=***&X-Amz-Credential=***&part=***&jwt=***&code=***#***`,
		);
		expect(await shown(`${sandbox.url}/f.pdf?opaque-token-without-name`)).toBe(
			`${sandbox.url}/f.pdf?opaque-token-without-name=***`,
		);
		expect(await shown(signed, { showFullUrl: true })).toBe(signed.replace('u:p@', '***@'));
		expect(await shown(`${sandbox.url}/${'a'.repeat(400)}`)).toHaveLength(301);
		expect(sandbox.fileRequests()).toHaveLength(0);
	});
});
