/** Session → Get QR Code through n8n's real engine against a sandbox whose account waits for a QR scan: the QR while waiting, the status after the scan, an older route's ready-made image. */
import { startSandbox } from '../../../../sandbox/server';
import {
	CLIENT_ID,
	SECRET,
	WAITING_FOR_SCAN,
	apiRequests,
	pngShowsQrOf,
	qrPayloadOf,
	runMessaging,
	tokenRequests,
	wire,
} from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';

describe('session (account waiting for a QR scan)', () => {
	const waiting = useSandbox(WAITING_FOR_SCAN);

	it('getQrCode: no bearer; the QR while waiting, the connected status after the scan', async () => {
		const run = await runMessaging(waiting, { resource: 'session', operation: 'getQrCode' });
		expect(run.error).toBeUndefined();
		expect(apiRequests(waiting).map(wire)).toEqual([
			{ method: 'GET', path: '/api/wa/2.0/qr', bearer: false, params: { client_secret: SECRET } },
		]);
		const [item] = run.output('Node');
		expect(item.json).toMatchObject({ status: 'got qr code', connected: false, qrAvailable: true });
		expect(
			pngShowsQrOf(Buffer.from(item.binary!.qrCode.data, 'base64'), qrPayloadOf(item.json)),
		).toBe(true);

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
		const older = await startSandbox({
			qrAsDataUri: true,
			accounts: [{ clientId: CLIENT_ID, clientSecret: SECRET, status: 'init' }],
		});
		try {
			const run = await runMessaging(older, { resource: 'session', operation: 'getQrCode' });
			expect(run.error).toBeUndefined();
			const [item] = run.output('Node');
			const sent = qrPayloadOf(item.json);
			expect(sent).toMatch(/^data:image\/png;base64,/);
			expect(Buffer.from(item.binary!.qrCode.data, 'base64')).toEqual(
				Buffer.from(sent.slice('data:image/png;base64,'.length), 'base64'),
			);
			expect(item.binary!.qrCode.mimeType).toBe('image/png');
		} finally {
			await older.close();
		}
	});
});
