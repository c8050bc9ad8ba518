/** Account → Check through n8n's real engine against the sandbox: the request with a bearer token, and only what the gateway said. */
import { PHONE, SECRET, apiRequests, runMessaging, wire } from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';

const sandbox = useSandbox();

const accountParams = {
	whatsappNumber: '0812 8877 6713',
	webhookUrl: 'https://n8n.example.com/webhook/incoming',
	options: { defaultCountry: 'ID' },
};

describe('account', () => {
	it('check: reads the registration with a bearer token', async () => {
		await runMessaging(sandbox, { resource: 'account', operation: 'update', ...accountParams });
		const run = await runMessaging(sandbox, {
			resource: 'account',
			operation: 'check',
			...accountParams,
			options: { defaultCountry: 'ID', version: 'v16' },
		});
		expect(run.error).toBeUndefined();
		expect(wire(apiRequests(sandbox)[1])).toEqual({
			method: 'POST',
			path: '/api/wa/2.0/post',
			bearer: true,
			params: {
				method: 'check',
				client_secret: SECRET,
				version: 'v16',
				whatsapp_number: PHONE,
				whatsapp_webhook: 'https://n8n.example.com/webhook/incoming',
			},
		});
		expect(run.output('Node')[0].json).toEqual({
			whatsappNumber: PHONE,
			webhookUrl: 'https://n8n.example.com/webhook/incoming',
			status: 'authenticated',
			registered: true,
			response: {
				message: {
					whatsapp_number: PHONE,
					whatsapp_webhook: 'https://n8n.example.com/webhook/incoming',
					accountStatus: 'authenticated',
					registered: true,
				},
			},
		});
	});
});
