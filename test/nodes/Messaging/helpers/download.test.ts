/**
 * Downloading a file from a URL (Send File → File Source "URL"), against the sandbox's file
 * server over real HTTP: redirects, limits, names and types, and errors that name the URL.
 */
import { createHash } from 'crypto';

import http from 'http';
import type { AddressInfo } from 'net';

import {
	closeDownloadConnections,
	openUrlFile,
	redactUrl,
	UrlFileError,
	type UrlFileOptions,
} from '../../../../nodes/Messaging/helpers/download';
import { isPublicAddress, openPools } from '../../../../nodes/Messaging/helpers/egress';
import { fileSha256 } from '../../../../sandbox/files';
import { startConnectProxy, withProxyEnvironment } from '../../../harness/connectProxy';
import { useSandbox } from '../../../harness/useSandbox';

const sandbox = useSandbox();
afterAll(async () => await closeDownloadConnections());

const OPTIONS: UrlFileOptions = {
	maxBytes: 10 * 1024 * 1024,
	timeoutMs: 5_000,
	deadlineMs: 60_000,
	maxRedirects: 5,
	egress: { blockPrivateAddresses: false },
};
const BLOCKED = { egress: { blockPrivateAddresses: true } };

async function download(path: string, options: Partial<UrlFileOptions> = {}) {
	const file = await openUrlFile(path.startsWith('http') ? path : `${sandbox.url}${path}`, {
		...OPTIONS,
		...options,
	});
	const hash = createHash('sha256');
	let size = 0;
	for await (const piece of file.body) {
		hash.update(piece);
		size += piece.length;
	}
	return { file, size, sha256: hash.digest('hex') };
}

async function failure(promise: Promise<unknown>): Promise<UrlFileError> {
	try {
		await promise;
	} catch (error) {
		expect(error).toBeInstanceOf(UrlFileError);
		return error as UrlFileError;
	}
	throw new Error('expected the download to fail');
}

describe('openUrlFile', () => {
	it('streams the file; type from the answer, name from the path', async () => {
		const { file, size, sha256 } = await download(
			'/files/reports/q3%20summary.pdf?size=300000&type=application/pdf%3B%20charset%3Dbinary',
		);
		expect(file).toMatchObject({
			mimeType: 'application/pdf',
			fileName: 'q3 summary.pdf',
			byteLength: 300000,
		});
		expect(size).toBe(300000);
		expect(sha256).toBe(fileSha256(300000));
	});

	it('name from Content-Disposition (RFC 8187 first), folders stripped; a generic type is no type', async () => {
		const disposition = encodeURIComponent(
			`attachment; filename="fallback.pdf"; filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf`,
		);
		const { file } = await download(`/files/download?size=10&disposition=${disposition}`);
		expect(file.fileName).toBe('Rechnung März.pdf');
		expect(file.mimeType).toBeUndefined();
		const sneaky = await download(
			`/files/x?size=10&disposition=${encodeURIComponent('attachment; filename="../../etc/passwd"')}`,
		);
		expect(sneaky.file.fileName).toBe('passwd');
		const broken = await download(
			`/files/y.txt?size=10&disposition=${encodeURIComponent('attachment; filename="unterminated')}`,
		);
		expect(broken.file.fileName).toBeTruthy();
	});

	it('follows redirects up to the limit; the name comes from where it ended', async () => {
		const { file, size } = await download('/files/start?redirects=3&size=50', { maxRedirects: 3 });
		expect(size).toBe(50);
		expect(file.fileName).toBe('start');
		expect(sandbox.fileRequests()).toHaveLength(4);
		const tooMany = await failure(
			download('/files/start?redirects=4&size=50', { maxRedirects: 3 }),
		);
		expect(tooMany.message).toMatch(
			/Could not download the file from http:\/\/127\.0\.0\.1:\d+\/files\/start\?redirects=\*\*\*&size=\*\*\*: more than 3 redirects/,
		);
		expect(tooMany.httpStatus).toBe(302);
	});

	it('refuses a redirect to another scheme, and any URL that is not http(s)', async () => {
		const ftp = await failure(
			download(`/files/a.pdf?redirectTo=${encodeURIComponent('ftp://files.example.org/a.pdf')}`),
		);
		expect(ftp.message).toContain(
			'redirected to ftp://files.example.org/a.pdf, which uses ftp: only http and https URLs can be downloaded',
		);
		expect((await failure(openUrlFile('file:///etc/passwd', OPTIONS))).message).toBe(
			'Could not download the file from file:///etc/passwd: the URL uses file: only http and https URLs can be downloaded',
		);
		expect((await failure(openUrlFile('not a url', OPTIONS))).message).toContain(
			'the URL is not a URL',
		);
	});

	it('HTTP failures name the status and the URL, with credentials redacted', async () => {
		const url = sandbox.url.replace('http://', 'http://ann:s3cret-pw@');
		const notFound = await failure(
			download(`${url}/files/gone.pdf?status=404&access_token=abc123xyz`),
		);
		expect(notFound.httpStatus).toBe(404);
		expect(notFound.message).toMatch(
			/^Could not download the file from http:\/\/\*\*\*@127\.0\.0\.1:\d+\/files\/gone\.pdf\?status=\*\*\*&access_token=\*\*\*: /,
		);
		expect(notFound.message).toContain('the server answered HTTP 404 Not Found');
		expect(notFound.message).not.toMatch(/s3cret-pw|abc123xyz|ann/);
		expect(notFound.message).toContain('***@127.0.0.1');
	});

	it('user:password in the URL is sent as Basic auth, and not to another origin after a redirect', async () => {
		const withCredentials = sandbox.url.replace('http://', 'http://ann:pw@');
		const { size } = await download(`${withCredentials}/files/private.pdf?auth=ann:pw&size=20`);
		expect(size).toBe(20);
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

	it('size cap: from Content-Length before any byte, or while streaming when the length is unknown', async () => {
		const declared = await failure(
			openUrlFile(`${sandbox.url}/files/big.bin?size=300000000`, {
				...OPTIONS,
				maxBytes: 1024 * 1024,
			}),
		);
		expect(declared.message).toMatch(
			/the file has 286 MB, over the limit of 1\.0 MB \(raise "Max File Size" to send it\)/,
		);
		await new Promise((resolve) => setTimeout(resolve, 100));
		expect(sandbox.fileRequests()[0]).toMatchObject({ aborted: true });
		expect(sandbox.fileRequests()[0].bytesSent).toBeLessThan(50_000_000);

		const streamed = await failure(
			download('/files/big.bin?size=3000000&chunked=1', { maxBytes: 1024 * 1024 }),
		);
		expect(streamed.message).toContain('the file is larger than the limit of 1.0 MB');
	});

	it('a length that does not match, a stalled body, a slow answer: errors, not hangs', async () => {
		expect((await failure(download('/files/short.bin?size=1000&declare=5000'))).message).toMatch(
			/short\.bin\?size=\*\*\*&declare=\*\*\*: (the connection failed \(UND_ERR_SOCKET\)|the download broke off after 1000 bytes|the download ended after 1000 of the 5000 bytes)/,
		);
		expect(
			(await failure(download('/files/stall.bin?size=200000&stallAfter=70000', { timeoutMs: 300 })))
				.message,
		).toContain(
			'the download broke off after 70000 bytes (no data for 0.3 s (raise "Download Timeout" if the server is slow))',
		);
		expect(
			(await failure(download('/files/slow.bin?delayMs=2000', { timeoutMs: 300 }))).message,
		).toContain('no data for 0.3 s');
		expect((await failure(download('/files/empty.bin?size=0'))).message).toContain(
			'the file is empty',
		);
	});

	it('Block Private Addresses refuses loopback, by literal and by name', async () => {
		expect((await failure(download('/files/a.pdf', BLOCKED))).message).toContain(
			'127.0.0.1 is a private or local address, and "Block Private Addresses" is on',
		);
		const byName = await failure(
			download(`${sandbox.url.replace('127.0.0.1', 'localhost')}/files/a.pdf`, BLOCKED),
		);
		expect(byName.message).toMatch(
			/localhost resolves to (127\.0\.0\.1|::1), a private or local address/,
		);
		expect(sandbox.fileRequests()).toHaveLength(0);
		expect(['8.8.8.8', '2606:4700::1111'].map(isPublicAddress)).toEqual([true, true]);
		expect(
			[
				'10.1.2.3',
				'172.20.0.1',
				'192.168.1.1',
				'169.254.169.254',
				'::1',
				'fd00::1',
				'::ffff:127.0.0.1',
				'0.0.0.0',
			].map(isPublicAddress),
		).toEqual(new Array(8).fill(false));
	});

	it('Block Private Addresses: private addresses written inside IPv6 (NAT64, IPv4-compatible, 6to4, Teredo) are private', () => {
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
			'2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo, client 127.0.0.1
			'2001:db8::1',
			'fec0::1',
			'100::1',
			'fe80::1%eth0',
		];
		expect(privateForms.filter(isPublicAddress)).toEqual([]);
		const publicForms = [
			'64:ff9b::808:808',
			'2002:808:808::1',
			'::ffff:8.8.8.8',
			'2606:4700::1111',
		];
		expect(publicForms.filter((address) => !isPublicAddress(address))).toEqual([]);
	});

	it('redactUrl: every query value and the fragment are hidden unless asked; the names stay', () => {
		const signed =
			'https://u:p@cdn.example.org/a/b.pdf?X-Amz-Signature=abc&X-Amz-Credential=k&part=2&jwt=eyJ&code=4%2F0A#access_token=ya29';
		expect(redactUrl(signed)).toBe(
			'https://***@cdn.example.org/a/b.pdf?X-Amz-Signature=***&X-Amz-Credential=***&part=***&jwt=***&code=***#***',
		);
		expect(redactUrl('https://example.org/f.pdf?opaque-token-without-name')).toBe(
			'https://example.org/f.pdf?opaque-token-without-name=***',
		);
		expect(redactUrl(signed, true)).toBe(
			'https://***@cdn.example.org/a/b.pdf?X-Amz-Signature=abc&X-Amz-Credential=k&part=2&jwt=eyJ&code=4%2F0A#access_token=ya29',
		);
		expect(redactUrl(`https://example.org/${'a'.repeat(400)}`)).toHaveLength(301);
	});

	it('a Content-Disposition name is cleaned like every file name (right-to-left override, path, control characters)', async () => {
		const disposition = (name: string) =>
			encodeURIComponent(`attachment; filename*=UTF-8''${encodeURIComponent(name)}`);
		const rtl = await download(
			`/files/x?size=10&disposition=${disposition('invoice\u202Efdp.exe')}`,
		);
		expect(rtl.file.fileName).toBe('invoicefdp.exe');
		const device = await download(`/files/x?size=10&disposition=${disposition('..\\CON.txt')}`);
		expect(device.file.fileName).toBe('_CON.txt');
		const path = await download(`/files/a%E2%80%AEfdp.exe?size=10`);
		expect(path.file.fileName).toBe('afdp.exe');
	});

	it('honours HTTP_PROXY (a CONNECT tunnel) and NO_PROXY for downloads', async () => {
		const proxy = await startConnectProxy();
		const restore = withProxyEnvironment({ HTTP_PROXY: proxy.url, NO_PROXY: undefined });
		try {
			const through = await download('/files/p.pdf?size=64');
			expect(through.size).toBe(64);
			expect(proxy.tunnels).toEqual([new URL(sandbox.url).host]);
			process.env.NO_PROXY = '127.0.0.1';
			await download('/files/q.pdf?size=64');
			expect(proxy.tunnels).toHaveLength(1);
		} finally {
			restore();
			await closeDownloadConnections();
			await proxy.close();
		}
	});

	it('Block Private Addresses through a proxy: the host is checked before the request', async () => {
		const proxy = await startConnectProxy();
		const restore = withProxyEnvironment({ HTTP_PROXY: proxy.url, NO_PROXY: undefined });
		try {
			const byName = await failure(
				download(`${sandbox.url.replace('127.0.0.1', 'localhost')}/files/a.pdf`, BLOCKED),
			);
			expect(byName.message).toMatch(/localhost resolves to .*"Block Private Addresses" is on/);
			expect(proxy.tunnels).toEqual([]);
		} finally {
			restore();
			await closeDownloadConnections();
			await proxy.close();
		}
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
			const error = await failure(download(url, { timeoutMs: 1_000, deadlineMs: 1_500 }));
			expect(error.message).toMatch(
				/the download broke off after \d+ bytes \(the download took longer than 1\.5 s in all \(Download Timeout plus 1 s per MB of Max File Size\)\)$/,
			);
		} finally {
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		}
	});

	it('pools are per policy and proxy setting, not per timeout, and a few at most', async () => {
		await closeDownloadConnections();
		for (let seconds = 30; seconds < 60; seconds++)
			await download('/files/t.pdf?size=8', { timeoutMs: seconds * 1000 });
		expect(openPools()).toBe(1);
		await download('/files/t.pdf?size=8', {
			egress: { blockPrivateAddresses: false, n8n: undefined },
		});
		expect(openPools()).toBe(1);
	});
});
