import {
	NodeConnectionTypes,
	NodeOperationError,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { apiClientFor, CREDENTIAL_TYPE, messagingRateApiTest } from '../shared/apiClient';
import { buildProperties, findOperation } from '../shared/operation';
import { runItems } from '../shared/runItems';
import { resources } from './actions';
import { messagingOptions, optionsProperty } from './options';

export class Messaging implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Messaging',
		name: 'messaging',
		icon: { light: 'file:messaging.svg', dark: 'file:messaging.dark.svg' },
		group: ['output'],
		version: 1,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description: 'Send WhatsApp messages and files, check numbers and manage the gateway account',
		defaults: { name: 'Messaging' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: CREDENTIAL_TYPE, required: true, testedBy: 'messagingRateApiTest' }],
		properties: [...buildProperties(resources), optionsProperty],
	};

	methods = { credentialTest: { messagingRateApiTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const resource = this.getNodeParameter('resource', 0) as string;
		const operation = this.getNodeParameter('operation', 0) as string;
		const module = findOperation(resources, resource, operation);
		if (!module) {
			throw new NodeOperationError(this.getNode(), `The operation "${operation}" of "${resource}" is not known`);
		}
		const client = await apiClientFor(this);
		const signal = this.getExecutionCancelSignal();
		const { parallel, delayMs } = messagingOptions(this);
		const output = await runItems(
			this,
			this.getInputData().length,
			async (itemIndex) => await module.execute.call(this, itemIndex, { client, signal }),
			{ parallel, delayMs },
		);
		return [output];
	}
}
