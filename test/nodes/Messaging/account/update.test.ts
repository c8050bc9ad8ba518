/** Account → Update through n8n's real engine against the sandbox: the request (no bearer token), the output, its input errors. */
import type { INodeParameters } from 'n8n-workflow';

import {
	DEFAULT_VERSION,
	PHONE,
	SECRET,
	apiRequests,
	expectRefusedInput,
	runMessaging,
	tokenRequests,
	wire,
	type BadInput,
} from '../../../harness/messagingNode';
import { useSandbox } from '../../../harness/useSandbox';

const sandbox = useSandbox();

const accountParams = {
	whatsappNumber: '0812 8877 6713',
	webhookUrl: 'https://n8n.example.com/webhook/incoming',
	options: { defaultCountry: 'ID' },
};
const account = (whatsappNumber: string, webhookUrl: string): INodeParameters => ({
	resource: 'account',
	operation: 'update',
	whatsappNumber,
	webhookUrl,
});

const BAD_INPUTS: BadInput[] = [
	{
		what: 'account number',
		parameters: account('my number', 'https://example.com/hook'),
		message: 'Field "WhatsApp Number" is not a phone number: "my number" [item 0]',
		fix: /country code/,
	},
	{
		what: 'relative webhook URL',
		parameters: account(PHONE, 'example.com/hook'),
		message: 'Field "Webhook URL" is not an absolute http(s) URL: "example.com/hook" [item 0]',
		fix: /https:\/\//,
	},
];

describe('account', () => {
	it('update: registers number and webhook, without a bearer token', async () => {
		const run = await runMessaging(sandbox, {
			resource: 'account',
			operation: 'update',
			...accountParams,
		});
		expect(run.error).toBeUndefined();
		expect(apiRequests(sandbox).map(wire)).toEqual([
			{
				method: 'POST',
				path: '/api/wa/2.0/post',
				bearer: false,
				params: {
					method: 'update',
					client_secret: SECRET,
					version: DEFAULT_VERSION,
					whatsapp_number: PHONE,
					whatsapp_webhook: 'https://n8n.example.com/webhook/incoming',
				},
			},
		]);
		expect(run.output('Node')[0].json).toEqual({
			whatsappNumber: PHONE,
			webhookUrl: 'https://n8n.example.com/webhook/incoming',
			updated: true,
			response: {
				message: {
					updated: true,
					whatsapp_number: PHONE,
					whatsapp_webhook: 'https://n8n.example.com/webhook/incoming',
				},
			},
		});
		expect(sandbox.accounts()[0]).toMatchObject({
			whatsappNumber: PHONE,
			whatsappWebhook: 'https://n8n.example.com/webhook/incoming',
		});
		expect(tokenRequests(sandbox)).toHaveLength(0);
	});
});

describe('bad inputs: a clear error naming the field and the item, and nothing sent', () => {
	it.each(BAD_INPUTS.map((c) => [c.what, c] as const))('%s', async (_what, bad) => {
		await expectRefusedInput(sandbox, bad);
	});
});
