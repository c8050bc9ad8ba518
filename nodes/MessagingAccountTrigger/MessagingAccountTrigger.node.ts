import { NodeConnectionTypes, type INodeType, type INodeTypeDescription } from 'n8n-workflow';

import { messagingRateApiTest } from '../shared/credentialTest';
import { nodeDocumentationUrl } from '../shared/documentationUrl';
import { subtitleExpression } from '../shared/subtitle';
import { EVENTS } from './health';
import { triggerProperties } from './parameters';
import { pollAccount } from './poll';

const EVENT_NAMES = Object.fromEntries(
	EVENTS.map((event) => [event.name, event.subtitle ?? event.displayName]),
);

export class MessagingAccountTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Messaging Account Trigger',
		name: 'messagingAccountTrigger',
		icon: { light: 'file:../../icons/messaging.svg', dark: 'file:../../icons/messaging.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: subtitleExpression(
			`(() => { try { const names = ${JSON.stringify(EVENT_NAMES)}; const v = $parameter["events"]; return Array.isArray(v) ? v.map((e) => names[e]).filter((n) => n).join(", ") : ""; } catch (e) { return ""; } })()`,
		),
		documentationUrl: nodeDocumentationUrl(
			'messaging-account-trigger.md',
			'messaging-account-trigger',
		),
		description:
			'Starts the workflow when the WhatsApp account is logged out, needs a QR scan, loses its webhook or runs out of messages',
		defaults: { name: 'Messaging Account Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		// The literal name: n8n's lint finds a credential's testedBy by it.
		credentials: [{ name: 'messagingRateApi', required: true, testedBy: 'messagingRateApiTest' }],
		properties: triggerProperties,
	};

	methods = { credentialTest: { messagingRateApiTest } };

	poll = pollAccount;
}
