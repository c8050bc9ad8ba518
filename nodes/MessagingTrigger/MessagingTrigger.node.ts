import {
	NodeConnectionTypes,
	type IHookFunctions,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { messagingRateApiTest } from '../shared/credentialTest';
import { nodeDocumentationUrl } from '../shared/documentationUrl';
import { triggerProperties } from './parameters';
import { webhookFor } from './receive';
import { registerWebhook, unregisterWebhook, webhookExists } from './registration';

export class MessagingTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Messaging Trigger',
		name: 'messagingTrigger',
		icon: { light: 'file:../../icons/messaging.svg', dark: 'file:../../icons/messaging.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{"Account " + ($parameter["accountNumber"] || "held by the gateway")}}',
		documentationUrl: nodeDocumentationUrl('messaging-trigger.md', 'messaging-trigger'),
		// n8n's node picker merges this trigger into the Messaging entry and shows this description
		// there: Messaging's own, word for word.
		description: 'Send WhatsApp messages and files, check numbers and manage the gateway account',
		defaults: { name: 'Messaging Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		// The literal name: n8n's lint finds a credential's testedBy by it.
		credentials: [{ name: 'messagingRateApi', required: true, testedBy: 'messagingRateApiTest' }],
		// responseData '': else n8n answers an onReceived webhook with 'firstEntryJson', which hides
		// the webhookResponse the trigger returns ({received: true, ...}).
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				responseData: '',
				path: 'webhook',
			},
		],
		properties: triggerProperties,
		eventTriggerDescription: 'Send a WhatsApp message to the account number',
		triggerPanel: {
			header: 'Send a WhatsApp message to the account number to see it here',
			executionsHelp: {
				inactive:
					"<b>While building your workflow</b>, click 'Listen for test event', then send a WhatsApp message to the account number (with the sandbox: write it on the sandbox's phone page, /__sandbox/phone): the gateway posts it here and it shows up in this editor. Listening points the account's webhook at n8n's test URL until it stops.<br /><br /><b>Once you're happy with your workflow</b>, publish it (n8n 1.x: activate it): every message to the account then starts an execution, listed under Executions.",
				active:
					"<b>While building your workflow</b>, click 'Listen for test event', then send a WhatsApp message to the account number. While the editor listens, messages go to the editor, not to the published workflow (n8n 1.x: active).<br /><br /><b>Your workflow also runs on its own</b>, since it is published (n8n 1.x: active): every message to the account starts an execution, listed under Executions.",
			},
			activationHint:
				"Once you have finished building your workflow, publish it (n8n 1.x: activate it): it registers itself as the account's webhook (the gateway keeps one per account) and starts for every message.",
		},
	};

	methods = { credentialTest: { messagingRateApiTest } };

	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions) {
				return await webhookExists.call(this);
			},
			async create(this: IHookFunctions) {
				return await registerWebhook.call(this);
			},
			async delete(this: IHookFunctions) {
				return await unregisterWebhook.call(this);
			},
		},
	};

	webhook = webhookFor();
}
