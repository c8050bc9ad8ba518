/** Session → Login through n8n's real engine against a sandbox whose account waits for a QR scan: the request, the status, the QR code as a PNG that scans to the gateway's payload. */
import {
	SECRET,
	WAITING_FOR_SCAN,
	apiRequests,
	pngShowsQrOf,
	qrPayloadOf,
	runMessaging,
	wire,
} from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';

describe('session (account waiting for a QR scan)', () => {
	const waiting = useSandbox(WAITING_FOR_SCAN);

	it('login: no bearer, outputs the status and the QR code as a PNG that shows the payload', async () => {
		const run = await runMessaging(waiting, { resource: 'session', operation: 'login' });
		expect(run.error).toBeUndefined();
		expect(apiRequests(waiting).map(wire)).toEqual([
			{
				method: 'GET',
				path: '/api/wa/2.0/get',
				bearer: false,
				params: { method: 'login', client_secret: SECRET },
			},
		]);
		const [item] = run.output('Node');
		expect(item.json).toEqual({
			status: 'got qr code',
			connected: false,
			qrAvailable: true,
			qrImageField: 'qrCode',
			response: { accountStatus: 'got qr code', qrCode: expect.stringMatching(/^2@/) },
		});
		expect(item.binary?.qrCode).toMatchObject({
			mimeType: 'image/png',
			fileName: 'qr-code.png',
			fileExtension: 'png',
		});
		const png = Buffer.from(item.binary!.qrCode.data, 'base64');
		expect(png.subarray(0, 8)).toEqual(
			Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
		);
		expect(pngShowsQrOf(png, qrPayloadOf(item.json))).toBe(true);
		expect(pngShowsQrOf(png, 'another payload')).toBe(false);
	});
});
