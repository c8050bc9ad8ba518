/**
 * Send File from a URL under n8n's own outbound policy (n8n 2.x's SSRF protection, applied by
 * n8n's HTTP helper that makes the download's requests), through n8n's real engine, configured the
 * way an operator does (N8N_SSRF_PROTECTION_ENABLED, its default blocked ranges, one allowed host
 * name). The node's own Block Private Addresses is off in every run here.
 */
import type { INodeParameters } from 'n8n-workflow';

import { PHONE, runMessaging } from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';

const sandbox = useSandbox();
beforeAll(() => {
	// Read by n8n's configuration when its egress filter is first asked for (in the first run).
	process.env.N8N_SSRF_PROTECTION_ENABLED = 'true';
	process.env.N8N_SSRF_ALLOWED_HOSTNAMES = 'localhost';
});
afterAll(() => {
	delete process.env.N8N_SSRF_PROTECTION_ENABLED;
	delete process.env.N8N_SSRF_ALLOWED_HOSTNAMES;
});

const sendFromUrl = (fileUrl: string): INodeParameters => ({
	resource: 'message',
	operation: 'sendFile',
	phone: PHONE,
	fileSource: 'url',
	fileUrl,
});

describe("n8n's egress policy", () => {
	it('refuses a URL the policy blocks (127.0.0.1), before any request', async () => {
		const run = await runMessaging(sandbox, sendFromUrl(`${sandbox.url}/files/a.pdf?size=10`));
		expect(run.error?.message).toMatch(
			/^Could not download the file from http:\/\/127\.0\.0\.1:\d+\/files\/a\.pdf\?size=\*\*\*: the request failed \(The request was blocked because it resolves to a restricted IP address\) \[item 0\]$/,
		);
		expect(sandbox.fileRequests()).toHaveLength(0);
		expect(sandbox.ledger()).toHaveLength(0);
	});

	it('allows what it allows (an allowed host name), and checks every redirect', async () => {
		const allowed = sandbox.url.replace('127.0.0.1', 'localhost');
		const ok = await runMessaging(sandbox, sendFromUrl(`${allowed}/files/a.pdf?size=10`));
		expect(ok.error).toBeUndefined();
		expect(sandbox.ledger()).toHaveLength(1);

		const hop = `${allowed}/files/hop?redirectTo=${encodeURIComponent(`${sandbox.url}/files/b.pdf?size=10`)}`;
		const redirected = await runMessaging(sandbox, sendFromUrl(hop));
		expect(redirected.error?.message).toMatch(/the request failed \(The request was blocked/);
		// The hop was asked, the address it pointed at never.
		expect(sandbox.fileRequests().map((request) => request.url.split('?')[0])).toEqual([
			'/files/a.pdf',
			'/files/hop',
		]);
		expect(sandbox.ledger()).toHaveLength(1);
	});
});
