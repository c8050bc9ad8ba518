/**
 * Message → Send File with File Source "URL" through n8n's real engine: the sandbox serves the
 * file (`/files/…`) and receives the send; the ledger's checksum proves the file arrived whole.
 */
import type { INodeParameters } from 'n8n-workflow';

import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../../../harness/engine';
import { closeDownloadConnections } from '../../../../nodes/Messaging/helpers/download';
import { fileSha256 } from '../../../../sandbox/files';
import { PHONE, PHONE_PASTED, apiRequests, runMessaging } from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';

const sandbox = useSandbox();
afterAll(async () => await closeDownloadConnections());

const fileUrl = (path: string) => `${sandbox.url}/files/${path}`;

function sendFromUrl(url: string, extra: INodeParameters = {}): INodeParameters {
	return { resource: 'message', operation: 'sendFile', phone: PHONE_PASTED, fileSource: 'url', fileUrl: url, caption: 'From a URL', ...extra };
}

describe('message: sendFile from a URL', () => {
	it('streams the download into the send: name from the path, type from the answer', async () => {
		const run = await runMessaging(sandbox, sendFromUrl(fileUrl('reports/q3.pdf?size=250000&type=application/pdf&seed=3')));
		expect(run.error).toBeUndefined();
		const [entry] = sandbox.ledger();
		expect(entry).toMatchObject({
			kind: 'file',
			phone: PHONE,
			caption: 'From a URL',
			file: { mimeType: 'application/pdf', filename: 'q3.pdf', size: 250000, sha256: fileSha256(250000, 3) },
		});
		expect(run.output('Node')).toEqual([
			{
				json: expect.objectContaining({
					sent: true,
					id: entry.id,
					phone: PHONE,
					fileName: 'q3.pdf',
					mimeType: 'application/pdf',
					fileSize: 250000,
					fileUrl: fileUrl('reports/q3.pdf?size=250000&type=application/pdf&seed=3'),
				}),
				pairedItem: { item: 0 },
			},
		]);
		// The request carried the file's length: not chunked, nothing buffered to learn it.
		expect(apiRequests(sandbox)[0].bodyBytes).toBeGreaterThan(Math.ceil(250000 / 3) * 4);
	});

	it('a server without Content-Length: the send is streamed all the same and the size counted', async () => {
		const run = await runMessaging(sandbox, sendFromUrl(fileUrl('dl?size=100000&chunked=1&type=none&disposition=attachment%3B%20filename%3D%22Price%20list.xlsx%22')));
		expect(run.error).toBeUndefined();
		expect(sandbox.ledger()[0].file).toMatchObject({
			filename: 'Price list.xlsx',
			mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
			size: 100000,
			sha256: fileSha256(100000),
		});
		expect(run.output('Node')[0].json).toMatchObject({ fileName: 'Price list.xlsx', fileSize: 100000 });
	});

	it('File Name and MIME Type given by the user win over the answer', async () => {
		const run = await runMessaging(sandbox, sendFromUrl(fileUrl('a.bin?size=10&type=application/pdf'), { fileFields: { fileName: 'contract.pdf', mimeType: 'application/x-custom' } }));
		expect(run.error).toBeUndefined();
		expect(sandbox.ledger()[0].file).toMatchObject({ filename: 'contract.pdf', mimeType: 'application/x-custom' });
	});

	it('redirects are followed up to Max Redirects', async () => {
		const ok = await runMessaging(sandbox, sendFromUrl(fileUrl('r/file.png?redirects=2&size=64&type=image/png'), { downloadOptions: { maxRedirects: 2 } }));
		expect(ok.error).toBeUndefined();
		expect(sandbox.ledger()[0].file).toMatchObject({ filename: 'file.png', mimeType: 'image/png' });

		const tooMany = await runMessaging(sandbox, sendFromUrl(fileUrl('r/file.png?redirects=3&size=64'), { downloadOptions: { maxRedirects: 2 } }));
		expect(tooMany.error?.message).toMatch(/^Could not download the file from http:\/\/127\.0\.0\.1:\d+\/files\/r\/file\.png\?redirects=1&size=64: more than 2 redirects .* \[item 0\]$/);
		expect(sandbox.ledger()).toHaveLength(1);
	});

	it('errors name the URL without its credentials and the HTTP status; with Continue the other items are sent', async () => {
		const secretUrl = `${sandbox.url.replace('http://', 'http://ann:hunter22@')}/files/gone.pdf?status=404&token=abc123secret`;
		const run = await runMessaging(
			sandbox,
			{ ...sendFromUrl('={{ $json.url }}') },
			[{ url: secretUrl }, { url: fileUrl('ok.pdf?size=20') }],
			{ onError: 'continueRegularOutput' },
		);
		expect(run.error).toBeUndefined();
		const [failed, sent] = run.output('Node');
		const failure = JSON.stringify(failed.json);
		expect(failure).toContain('the server answered HTTP 404 Not Found');
		expect(failure).toMatch(/http:\/\/\*\*\*@127\.0\.0\.1:\d+\/files\/gone\.pdf\?status=404&token=\*\*\*/);
		expect(failure).not.toMatch(/hunter22|abc123secret|ann:/);
		expect(sent.json).toMatchObject({ sent: true, fileName: 'ok.pdf' });
		expect(sandbox.ledger()).toHaveLength(1);
	});

	it('over Max File Size: refused from the announced length before the send, or cut off while streaming; nothing recorded', async () => {
		const announced = await runMessaging(sandbox, sendFromUrl(fileUrl('big.bin?size=3000000'), { downloadOptions: { maxSizeMb: 1 } }));
		expect(announced.error?.message).toContain('the file has 2.9 MB, over the limit of 1.0 MB (raise "Max File Size" to send it)');
		expect(apiRequests(sandbox)).toHaveLength(0);

		const streamed = await runMessaging(sandbox, sendFromUrl(fileUrl('big.bin?size=3000000&chunked=1'), { downloadOptions: { maxSizeMb: 1 } }));
		expect(streamed.error?.message).toContain('the file is larger than the limit of 1.0 MB');
		// Cut off mid-body: the gateway saw an incomplete request and recorded nothing; the error is the download's, not "maybe delivered".
		expect(sandbox.ledger()).toHaveLength(0);
		expect(streamed.error?.message).not.toMatch(/may have been/);
	});

	it('a stalled download fails after Download Timeout; bad URLs fail before any request', async () => {
		const stalled = await runMessaging(sandbox, sendFromUrl(fileUrl('s.bin?size=500000&stallAfter=100000'), { downloadOptions: { timeoutSeconds: 1 } }));
		expect(stalled.error?.message).toContain('(no data for 1 s (raise "Download Timeout" if the server is slow))');
		expect(sandbox.ledger()).toHaveLength(0);

		const ftp = await runMessaging(sandbox, sendFromUrl('ftp://files.example.org/a.pdf'));
		expect(ftp.error?.message).toBe('Field "File URL" uses ftp: only http and https URLs can be downloaded: "ftp://files.example.org/a.pdf" [item 0]');
		const empty = await runMessaging(sandbox, sendFromUrl('  '));
		expect(empty.error?.message).toBe('Field "File URL" is empty [item 0]');
		expect(apiRequests(sandbox)).toHaveLength(0);
	});

	it('a slow download without Content-Length gets the time allowance of its size cap, not just the request timeout', async () => {
		// 1 MB in 16 pieces 200 ms apart: about 3 s, over the credential's 2 s Request Timeout.
		const workflow = singleNodeWorkflow('messaging', sendFromUrl(fileUrl('slow.bin?size=1000000&chunked=1&chunkDelayMs=200'), { downloadOptions: { maxSizeMb: 4 } }));
		const run = await runWorkflow(workflow, sandboxCredential(sandbox.url, { timeoutSeconds: 2 }));
		expect(run.error).toBeUndefined();
		expect(sandbox.ledger()[0].file).toMatchObject({ size: 1000000, sha256: fileSha256(1000000) });
	});

	it('Block Private Addresses refuses the sandbox (a loopback address)', async () => {
		const run = await runMessaging(sandbox, sendFromUrl(fileUrl('a.pdf'), { downloadOptions: { blockPrivateAddresses: true } }));
		expect(run.error?.message).toContain('127.0.0.1 is a private or local address, and "Block Private Addresses" is on');
		expect(sandbox.fileRequests()).toHaveLength(0);
	});
});
