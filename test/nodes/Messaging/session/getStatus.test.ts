/** Session → Get Status through n8n's real engine against a sandbox whose account waits for a QR scan: the status before login, the QR image after, none once connected. */
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

	it('getStatus: with a bearer token; the status before login, the QR image in the chosen field after, none once connected', async () => {
		const before = await runMessaging(waiting, {
			resource: 'session',
			operation: 'getStatus',
			qrBinaryPropertyName: 'scanMe',
		});
		expect(before.error).toBeUndefined();
		expect(before.output('Node')).toEqual([
			{
				json: {
					status: 'init',
					connected: false,
					qrAvailable: false,
					response: { accountStatus: 'init' },
				},
				pairedItem: { item: 0 },
			},
		]);
		await runMessaging(waiting, { resource: 'session', operation: 'login' });
		const waitingRun = await runMessaging(waiting, {
			resource: 'session',
			operation: 'getStatus',
			qrBinaryPropertyName: 'scanMe',
		});
		expect(waitingRun.error).toBeUndefined();
		const statusRequest = {
			method: 'GET',
			path: '/api/wa/2.0/get',
			bearer: true,
			params: { method: 'status', client_secret: SECRET },
		};
		expect(apiRequests(waiting).map(wire)).toEqual([
			statusRequest,
			{
				method: 'GET',
				path: '/api/wa/2.0/get',
				bearer: false,
				params: { method: 'login', client_secret: SECRET },
			},
			statusRequest,
		]);
		const [item] = waitingRun.output('Node');
		expect(item.json).toMatchObject({
			status: 'got qr code',
			connected: false,
			qrAvailable: true,
			qrImageField: 'scanMe',
		});
		expect(Object.keys(item.binary ?? {})).toEqual(['scanMe']);
		expect(
			pngShowsQrOf(Buffer.from(item.binary!.scanMe.data, 'base64'), qrPayloadOf(item.json)),
		).toBe(true);

		waiting.scan();
		const connectedRun = await runMessaging(waiting, {
			resource: 'session',
			operation: 'getStatus',
		});
		expect(connectedRun.output('Node')).toEqual([
			{
				json: {
					status: 'authenticated',
					connected: true,
					qrAvailable: false,
					response: { accountStatus: 'authenticated' },
				},
				pairedItem: { item: 0 },
			},
		]);
	});
});
