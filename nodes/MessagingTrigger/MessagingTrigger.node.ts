import { NodeConnectionTypes, type INodeType, type INodeTypeDescription, type IWebhookFunctions, type IWebhookResponseData } from 'n8n-workflow';

// PLACEHOLDER: replaced by the Messaging Trigger implementation.
export class MessagingTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Messaging Trigger',
		name: 'messagingTrigger',
		icon: { light: 'file:messaging.svg', dark: 'file:messaging.dark.svg' },
		group: ['trigger'],
		version: 1,
		description: 'Incoming messages',
		defaults: { name: 'Messaging Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'webhook' }],
		properties: [],
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		return { workflowData: [[{ json: this.getBodyData() }]] };
	}
}
