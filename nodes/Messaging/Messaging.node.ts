import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { messagingRateApiTest } from '../shared/credentialTest';
import { nodeDocumentationUrl } from '../shared/documentationUrl';
import { includeRawResponseProperty } from '../shared/aiTool';
import { listInWords } from '../shared/errors';
import { executeNode } from '../shared/execution/execute';
import {
	buildProperties,
	operationsSending,
	type NodeDefinition,
	type ResourceDefinition,
} from '../shared/execution/router';
import { operationSubtitle } from '../shared/subtitle';
import { account } from './actions/account/account.resource';
import { auth } from './actions/auth/auth.resource';
import { message } from './actions/message/message.resource';
import { number } from './actions/number/number.resource';
import { session } from './actions/session/session.resource';
import { answerWebhook, answerWebhooks } from './helpers/waitAndResume';
import {
	messagingOptionsProperties,
	readMessagingOptions,
	sendPauseNotice,
	type MessagingOptions,
} from './options';
import { MessagingRun } from './run';

export const resources: ReadonlyArray<ResourceDefinition<MessagingRun>> = [
	message,
	number,
	account,
	session,
	auth,
];

const messagingNode: NodeDefinition<MessagingOptions, MessagingRun> = {
	resources,
	readOptions: readMessagingOptions,
	startRun: (basics) => new MessagingRun(basics),
	pacing: ({ parallel, delayMs }) => ({ parallel, delayMs }),
	runWideOptions: (options) => ({
		'Parallel Requests': options.parallel,
		'Delay Between Requests (Ms)': options.delayMs,
		'Skip Repeats Within (Hours)': options.skipRepeatsHours,
		'Delay Between Messages': JSON.stringify(options.messageDelay),
		'Account Cap': JSON.stringify(options.accountCap ?? null),
		'Max Wait (Minutes)': options.maxWaitMs / 60_000,
	}),
};

export class Messaging implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Messaging',
		name: 'messaging',
		icon: { light: 'file:../../icons/messaging.svg', dark: 'file:../../icons/messaging.dark.svg' },
		group: ['output'],
		version: 1,
		subtitle: operationSubtitle(resources),
		documentationUrl: nodeDocumentationUrl('messaging.md', 'messaging'),
		description: 'Send WhatsApp messages and files, check numbers and manage the gateway account',
		defaults: { name: 'Messaging' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		// The literal name: n8n's lint finds a credential's testedBy by it.
		credentials: [{ name: 'messagingRateApi', required: true, testedBy: 'messagingRateApiTest' }],
		// Send and Wait's links resume through these (n8n registers no URL for them).
		webhooks: answerWebhooks,
		waitingNodeTooltip:
			'={{ $parameter.operation === "sendAndWait" ? "Waiting for the person to answer in WhatsApp" : "" }}',
		properties: [
			...buildProperties(resources, 'messaging.md'),
			sendPauseNotice,
			messagingOptionsProperties(listInWords(operationsSending(resources, 'version'))),
			includeRawResponseProperty,
		],
	};

	methods = { credentialTest: { messagingRateApiTest } };

	webhook = answerWebhook;

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await executeNode(this, messagingNode);
	}
}
