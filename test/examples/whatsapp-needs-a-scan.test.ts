/**
 * examples/whatsapp-needs-a-scan.json ("Tell me when WhatsApp needs a scan"): an importable
 * workflow whose trigger has only parameters the node has, and which, polled through n8n-core
 * against the sandbox, hands Send Email one message with the QR code attached when the account is
 * logged out and shows a code, one when it is connected again, and nothing in between.
 * (Send Email itself runs in real n8n: test/n8n/scenarios/messaging-account-trigger.ts.)
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { commonPollingParameters } from 'n8n-core/dist/nodes-loader/constants';
import { NodeHelpers, type INode, type INodeParameters } from 'n8n-workflow';

import { MessagingAccountTrigger } from '../../nodes/MessagingAccountTrigger/MessagingAccountTrigger.node';
import { sandboxCredential, type WorkflowJson } from '../harness/engine';
import { ACCOUNT_TRIGGER_TYPE, PollHarness } from '../harness/pollEngine';
import { pngShowsQrOf } from '../harness/qrReader';
import { useSandbox } from '../harness/useSandbox';

const example = JSON.parse(
	readFileSync(join(__dirname, '..', '..', 'examples', 'whatsapp-needs-a-scan.json'), 'utf8'),
) as WorkflowJson & { id: string; name: string };
const trigger = example.nodes.find((node) => node.type === ACCOUNT_TRIGGER_TYPE) as INode;
const email = example.nodes.find((node) => node.type === 'n8n-nodes-base.emailSend') as INode;

describe('examples/whatsapp-needs-a-scan.json', () => {
	it('is an importable workflow: Messaging Account Trigger → Send Email, with its credentials', () => {
		expect(example.name).toBe('Tell me when WhatsApp needs a scan');
		// n8n 1.x saves a workflow's static data only when its id has at most 16 characters
		// (isWorkflowIdValid): a longer id would leave the trigger without memory there.
		expect(example.id).toMatch(/^\w{1,16}$/);
		expect(trigger.credentials).toEqual({
			messagingRateApi: { id: 'sandbox-credential', name: 'Sandbox' },
		});
		expect(email.credentials).toEqual({ smtp: { id: 'smtp-credential', name: 'SMTP' } });
		expect(example.connections[trigger.name].main[0]?.map((c) => c?.node)).toEqual([email.name]);
	});

	it("gives the trigger only parameters it has (with n8n's Poll Times)", () => {
		const description = new MessagingAccountTrigger().description;
		const properties = [...commonPollingParameters, ...description.properties];
		const resolved = NodeHelpers.getNodeParameters(
			properties,
			trigger.parameters,
			true,
			false,
			trigger,
			description,
		) as INodeParameters;
		expect(Object.keys(trigger.parameters).filter((name) => !(name in resolved))).toEqual([]);
		expect(
			NodeHelpers.getNodeParametersIssues(properties, trigger, { ...description, properties }),
		).toBeNull();
	});

	describe('polled against the sandbox', () => {
		const sandbox = useSandbox();

		it('mails the QR code when the account is logged out, once; and says when it is connected again', async () => {
			const workflow = new PollHarness({
				triggerType: ACCOUNT_TRIGGER_TYPE,
				workflow: example,
				credentials: sandboxCredential(sandbox.url),
			});
			await workflow.activate();
			expect(workflow.executions).toHaveLength(0);

			sandbox.logout(undefined, { showQr: true });
			const needed = await workflow.poll();
			expect(needed.execution?.error).toBeUndefined();
			const [mail] = needed.execution!.output(email.name);
			expect(mail.json).toMatchObject({
				to: 'phone-holder@example.com',
				subject: 'WhatsApp needs a scan (QR code 1 of 3)',
				attachments: ['qrCode'],
			});
			expect(mail.json.html).toContain('<img src="cid:qrCode"');
			const payload = sandbox.accounts()[0].qrPayload as string;
			expect(pngShowsQrOf(Buffer.from(mail.binary!.qrCode.data, 'base64'), payload)).toBe(true);

			expect((await workflow.poll()).returned).toBeNull();
			sandbox.scan();
			const back = await workflow.poll();
			expect(back.execution!.output(email.name).map((item) => item.json)).toEqual([
				expect.objectContaining({ subject: 'WhatsApp is connected again', attachments: [] }),
			]);
		});
	});
});
