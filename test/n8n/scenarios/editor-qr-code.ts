/**
 * The login QR code in the editor (issue 15, item 5), n8n 2.x only: with the sandbox account
 * logged out, Session → Get QR Code run from the node's panel ("Execute step") shows the QR image
 * in the output's Binary tab, and that image, fetched as the browser shows it, scans to the code
 * the sandbox is waiting for. The account is connected again afterwards (the sandbox is shared).
 * Screenshot: docs/.images/qr-code-binary-tab.png (written with --doc-images).
 */
import { pngShowsQrOf } from '../../harness/qrReader';
import { docImage, openNodePanel, openWorkflow, withEditor } from '../editor';
import { NODE_TYPES, log, type ScenarioContext } from '../lib';

export async function editorShowsTheQrCodeInTheBinaryTab(t: ScenarioContext): Promise<void> {
	if (!t.options.editor || t.target.major < 2) {
		log(
			`editor QR scenario not run for ${t.target.label} (${t.options.editor ? "the editor selectors are n8n 2.x's" : '--no-editor'})`,
		);
		return;
	}
	const { report, server: srv, sandbox } = t;
	const created = await srv.rest<{ id: string }>('POST', '/workflows', {
		name: 'Editor: log in by QR code',
		active: false,
		settings: {},
		nodes: [
			{
				id: 'manual',
				name: 'Manual',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			{
				id: 'qr',
				name: 'Get QR Code',
				type: NODE_TYPES.messaging,
				typeVersion: 1,
				position: [300, 0],
				parameters: { resource: 'session', operation: 'getQrCode' },
				credentials: { messagingRateApi: { ...t.credential } },
			},
		],
		connections: { Manual: { main: [[{ node: 'Get QR Code', type: 'main', index: 0 }]] } },
	});

	sandbox.logout(t.account.clientId);
	try {
		const shown = await report.timed('editor: Get QR Code → Execute step → Binary tab', () =>
			withEditor(srv, async (s) => {
				const { page } = s;
				await openWorkflow(page, srv, created.id);
				await openNodePanel(page, 'Get QR Code');
				await page.getByTestId('node-execute-button').first().click();
				const view = page.getByTestId('ndv-view-binary-data').first();
				await view.waitFor({ timeout: 60_000 });
				// n8n opens the Binary tab by itself for an item with binary data: its file card is showing.
				const binaryTabSelected = await page.getByTestId('ndv-binary-data_0').isVisible();
				const fileCard = ((await page.getByTestId('ndv-binary-data_0').textContent()) ?? '')
					.replace(/\s+/g, ' ')
					.trim();
				await view.click();
				const image = page.locator('[data-test-id="ndv-data-container"] img').first();
				await image.waitFor({ timeout: 30_000 });
				await page.waitForTimeout(500);
				await docImage(s, 'qr-code-binary-tab');
				const src = (await image.getAttribute('src')) ?? '';
				// The bytes the browser displays, fetched with the editor's session.
				const fetched = await page.evaluate(async (url: string) => {
					const response = await fetch(url, { credentials: 'include' });
					const bytes = new Uint8Array(await response.arrayBuffer());
					let binary = '';
					for (const byte of bytes) binary += String.fromCharCode(byte);
					return {
						status: response.status,
						type: response.headers.get('content-type') ?? '',
						base64: btoa(binary),
					};
				}, src);
				const natural = await image.evaluateAll((els) =>
					els.map((e) => [
						(e as HTMLImageElement).naturalWidth,
						(e as HTMLImageElement).naturalHeight,
					]),
				);
				return { binaryTabSelected, fileCard, src, natural: natural[0], fetched };
			}),
		);
		const payload = sandbox
			.accounts()
			.find((account) => account.clientId === t.account.clientId)?.qrPayload;
		const png = Buffer.from(shown.fetched.base64, 'base64');
		report.check(
			'editor: the output opens on the Binary tab with the qrCode file (qr-code.png)',
			shown.binaryTabSelected && /qrCode.*qr-code\.png/.test(shown.fileCard),
			{
				fileCard: shown.fileCard,
			},
		);
		report.check(
			'editor: the Binary tab shows the image (a PNG the browser decoded)',
			shown.fetched.status === 200 &&
				/image\/png/.test(shown.fetched.type) &&
				(shown.natural?.[0] ?? 0) > 100,
			{
				status: shown.fetched.status,
				type: shown.fetched.type,
				natural: shown.natural,
			},
		);
		report.check(
			'editor: the image scans to the QR code the sandbox is waiting for',
			payload !== undefined && png.length > 0 && pngShowsQrOf(png, payload),
			{
				bytes: png.length,
				payload: payload?.slice(0, 20),
			},
		);
	} finally {
		sandbox.scan(t.account.clientId);
		await srv
			.rest('POST', `/workflows/${created.id}/archive`)
			.catch((error: unknown) => log(`could not archive the QR workflow: ${String(error)}`));
	}
}
