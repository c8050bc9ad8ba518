import {
	type IHookFunctions,
	type INodeType,
	type INodeTypeDescription,
	type IWebhookFunctions,
	type IWebhookResponseData,
} from 'n8n-workflow';

import { CREDENTIAL_TYPE, messagingRateApiTest } from '../shared/credential';
import { nodeDocumentationUrl } from '../shared/documentation';
import { triggerProperties } from './parameters';
import { receiveMessage } from './receive';
import { registerWebhook, unregisterWebhook, webhookExists } from './registration';

/**
 * Starts a workflow for each message the gateway posts to the account's webhook. Activating
 * the workflow registers its URL with Update Account; deactivating restores the webhook the
 * account had before, or clears it (see registration.ts and docs/messaging-trigger.md).
 */
export class MessagingTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Messaging Trigger',
		name: 'messagingTrigger',
		icon: { light: 'file:messaging.svg', dark: 'file:messaging.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{"Account " + $parameter["accountNumber"]}}',
		documentationUrl: nodeDocumentationUrl('messaging-trigger.md', 'messaging-trigger'),
		description: 'Starts the workflow when a WhatsApp message reaches the gateway account',
		defaults: { name: 'Messaging Trigger' },
		inputs: [],
		outputs: ['main'],
		credentials: [{ name: CREDENTIAL_TYPE, required: true, testedBy: 'messagingRateApiTest' }],
		// responseData '': n8n 2.x answers an onReceived webhook with `responseData` when it is set and
		// defaults it to the literal 'firstEntryJson', which would hide the webhookResponse the trigger
		// returns ({received: true, ...}); an empty value makes n8n send that webhookResponse.
		webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', responseData: '', path: 'webhook' }],
		properties: triggerProperties,
	};

	methods = { credentialTest: { messagingRateApiTest } };

	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				return await webhookExists.call(this);
			},
			async create(this: IHookFunctions): Promise<boolean> {
				return await registerWebhook.call(this);
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return await unregisterWebhook.call(this);
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		return await receiveMessage.call(this);
	}
}
