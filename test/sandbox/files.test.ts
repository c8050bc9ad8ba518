/**
 * The sandbox's file server (`/files/`) and its usage counter, over real HTTP: what the
 * Send File from a URL and Stop at the Usage Limit tests rely on.
 */
import { createHash } from 'crypto';
import { Agent, request } from 'undici';

import { fileBytes, fileSha256 } from '../../sandbox/files';
import { useSandbox } from '../harness/useSandbox';

const sandbox = useSandbox();
const agent = new Agent({ keepAliveTimeout: 1000 });
afterAll(async () => await agent.close());

async function get(path: string, headers: Record<string, string> = {}) {
	const res = await request(`${sandbox.url}${path}`, { headers, dispatcher: agent });
	const body = Buffer.from(await res.body.arrayBuffer());
	return { status: res.statusCode, headers: res.headers, body };
}

async function control(method: 'GET' | 'POST', path: string, body?: unknown) {
	const res = await request(`${sandbox.url}/__sandbox/${path}`, {
		method,
		headers: { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
		dispatcher: agent,
	});
	return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
}

async function limitAnswer() {
	const res = await request(`${sandbox.url}/api/wa/2.0/limit`, {
		method: 'GET',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ params: { client_secret: 'demo-secret' } }),
		dispatcher: agent,
	});
	return ((await res.body.json()) as { result: unknown }).result;
}

describe('files', () => {
	it('serves the requested size, type and disposition, with a checksum a test can compute', async () => {
		const reply = await get(
			'/files/docs/report.pdf?size=200000&type=application/pdf&disposition=attachment%3B%20filename%3D%22q3.pdf%22&seed=7',
		);
		expect(reply.status).toBe(200);
		expect(reply.headers['content-type']).toBe('application/pdf');
		expect(reply.headers['content-length']).toBe('200000');
		expect(reply.headers['content-disposition']).toBe('attachment; filename="q3.pdf"');
		expect(createHash('sha256').update(reply.body).digest('hex')).toBe(fileSha256(200000, 7));
		expect(reply.body.subarray(0, 100)).toEqual(fileBytes(100, 7));
		expect(fileSha256(200000, 7)).not.toBe(fileSha256(200000, 8));
		expect(sandbox.fileRequests()).toEqual([
			expect.objectContaining({
				method: 'GET',
				url: expect.stringContaining('/files/docs/report.pdf?'),
				status: 200,
				bytesSent: 200000,
			}),
		]);
	});

	it('chunked (no length), no type, a lying length', async () => {
		const chunked = await get('/files/a.bin?size=70000&chunked=1&type=none');
		expect(chunked.headers['content-length']).toBeUndefined();
		expect(chunked.headers['transfer-encoding']).toBe('chunked');
		expect(chunked.headers['content-type']).toBeUndefined();
		expect(chunked.body.length).toBe(70000);
		await expect(get('/files/a.bin?size=1000&declare=5000')).rejects.toThrow();
	});

	it('redirects a given number of times, or to a given URL; statuses and Basic auth', async () => {
		const first = await get('/files/x/a.pdf?redirects=2&size=10');
		expect(first.status).toBe(302);
		expect(first.headers.location).toBe('/files/x/a.pdf?redirects=1&size=10');
		const elsewhere = await get(
			'/files/a.pdf?redirectTo=ftp%3A%2F%2Fexample.org%2Fa.pdf&redirectStatus=301',
		);
		expect(elsewhere.status).toBe(301);
		expect(elsewhere.headers.location).toBe('ftp://example.org/a.pdf');
		expect((await get('/files/missing.pdf?status=404')).status).toBe(404);
		expect((await get('/files/a.pdf?auth=ann:pw')).status).toBe(401);
		const authorized = await get('/files/a.pdf?auth=ann:pw&size=5', {
			authorization: `Basic ${Buffer.from('ann:pw').toString('base64')}`,
		});
		expect(authorized.status).toBe(200);
		expect(sandbox.fileRequests().at(-1)?.authorization).toBe(
			`Basic ${Buffer.from('ann:pw').toString('base64')}`,
		);
	});
});

describe('usage counter', () => {
	it('is set through the control API and runs out as messages are sent', async () => {
		expect(await limitAnswer()).toEqual({ block: false, block_limit: 10_000, limit_qty: 0 });
		const set = await control('POST', 'usage', { limit: 5, used: 4 });
		expect(set.json).toEqual({ limit: 5, used: 4, remaining: 1 });
		expect(await limitAnswer()).toEqual({ block: false, block_limit: 5, limit_qty: 4 });

		const token = (
			(await (
				await request(`${sandbox.url}/api/wa/authentication`, {
					method: 'GET',
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify({
						params: { client_id: 'demo-client', client_secret: 'demo-secret' },
					}),
					dispatcher: agent,
				})
			).body.json()) as { result: { token: string } }
		).result.token;
		const send = async () => {
			const res = await request(`${sandbox.url}/api/wa/2.0/post`, {
				method: 'POST',
				headers: { 'content-type': 'application/json', 'authorization': `Bearer ${token}` },
				body: JSON.stringify({
					params: {
						method: 'sendMessage',
						client_secret: 'demo-secret',
						version: 'v1',
						phone: '6281288776713',
						body: 'hi',
					},
				}),
				dispatcher: agent,
			});
			return (
				(await res.body.json()) as { result: { message: { sent: boolean; message: string } } }
			).result.message;
		};
		expect((await send()).sent).toBe(true);
		expect(await send()).toEqual({ sent: false, message: 'Message limit reached' });
		expect((await control('GET', 'usage')).json).toEqual({ limit: 5, used: 5, remaining: 0 });
		expect(await limitAnswer()).toMatchObject({ block: true, limit_qty: 5 });

		expect((await control('POST', 'usage', { limit: -1 })).status).toBe(400);
		sandbox.reset();
		expect(sandbox.usage()).toEqual({ limit: 10_000, used: 0, remaining: 10_000 });
	});
});
