/**
 * The sandbox's control calls that play the Messaging Account Trigger's stories, run exactly as
 * docs/messaging-account-trigger.md prints them (its curl lines, over HTTP), each checked by what
 * the gateway then answers.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { request } from 'undici';

import { useSandbox } from '../harness/useSandbox';

const sandbox = useSandbox();
const JSON_TYPE = { 'content-type': 'application/json' };

/** The `curl` lines of the docs' Example section: method, control path, headers (`$J`), body. */
function documentedCalls(): Array<{
	method: string;
	path: string;
	headers: Record<string, string>;
	body?: string;
}> {
	const docs = readFileSync(
		join(__dirname, '..', '..', 'docs', 'messaging-account-trigger.md'),
		'utf8',
	);
	const example = docs.slice(docs.indexOf('## Example'), docs.indexOf('## Restore the webhook'));
	const [name, value] = /^J='([^:]+): ([^']+)'/m.exec(example)?.slice(1) ?? [];
	return [...example.matchAll(/^curl -X (\w+) \$S\/([\w-]+)( -H "\$J")?(?: -d '([^']*)')?/gm)].map(
		(m) => ({
			method: m[1],
			path: m[2],
			headers: m[3] ? { [name]: value } : {},
			body: m[4],
		}),
	);
}

async function gateway(
	path: string,
	params: Record<string, string>,
): Promise<{ status: number; body: string }> {
	const response = await request(`${sandbox.url}${path}`, {
		method: 'GET',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ params: { client_secret: 'demo-secret', ...params } }),
	});
	return { status: response.statusCode, body: await response.body.text() };
}

describe('sandbox: the account stories of docs/messaging-account-trigger.md', () => {
	it('every documented control call works and does what the docs say', async () => {
		const calls = documentedCalls();
		expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
			'POST logout',
			'POST qr',
			'POST scan',
			'POST webhook',
			'POST usage',
			'POST faults',
			'DELETE faults',
		]);
		for (const call of calls.filter((c) => c.method === 'POST'))
			expect(call.headers).toEqual({ 'content-type': 'application/json' });
		const account = () => sandbox.accounts()[0];
		const effects: Record<string, () => Promise<void>> = {
			logout: async () => {
				expect(account()).toMatchObject({
					status: 'got qr code',
					qrPayload: expect.stringMatching(/^2@/),
				});
			},
			qr: async () => {
				expect(account().qrPayload).not.toBe(previousQr);
			},
			scan: async () => {
				expect(account().status).toBe('authenticated');
			},
			webhook: async () => {
				expect(account().whatsappWebhook).toBe('https://crm.example.org/hooks/wa');
			},
			usage: async () => {
				expect(sandbox.usage()).toEqual({ limit: 200, used: 185, remaining: 15 });
			},
			faults: async () => {
				const down = await gateway('/api/wa/2.0/limit', {});
				expect(down.status).toBe(method === 'DELETE' ? 200 : 502);
			},
		};
		let previousQr: string | undefined;
		let method = '';
		for (const call of calls) {
			previousQr = account().qrPayload;
			method = call.method;
			const response = await request(`${sandbox.url}/__sandbox/${call.path}`, {
				method: call.method as 'POST' | 'DELETE',
				headers: call.headers,
				body: call.body,
			});
			expect({ call, status: response.statusCode }).toEqual({ call, status: 200 });
			await response.body.text();
			await effects[call.path]();
		}
	});

	it('refuses a new QR code for a connected account, and a webhook that is not text', async () => {
		const qr = await request(`${sandbox.url}/__sandbox/qr`, {
			method: 'POST',
			headers: JSON_TYPE,
			body: '{}',
		});
		expect(qr.statusCode).toBe(400);
		expect(await qr.body.json()).toEqual({
			error: 'Account demo-client is connected: log it out first',
		});
		const webhook = await request(`${sandbox.url}/__sandbox/webhook`, {
			method: 'POST',
			headers: JSON_TYPE,
			body: '{"url": 42}',
		});
		expect(webhook.statusCode).toBe(400);
		await webhook.body.text();
	});

	it('logs out without a QR code unless asked, as before', async () => {
		const response = await request(`${sandbox.url}/__sandbox/logout`, {
			method: 'POST',
			headers: JSON_TYPE,
			body: '{}',
		});
		await response.body.text();
		expect(sandbox.accounts()[0]).toMatchObject({ status: 'init', qrPayload: undefined });
		const status = await gateway('/api/wa/2.0/qr', {});
		expect(JSON.parse(status.body).result.qrCode).toMatch(/^2@/);
	});
});
