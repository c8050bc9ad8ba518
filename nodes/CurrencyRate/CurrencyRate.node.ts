import { NodeConnectionTypes, NodeOperationError, type IExecuteFunctions, type INodeExecutionData, type INodeType, type INodeTypeDescription } from 'n8n-workflow';

// PLACEHOLDER: replaced by the Currency Rate node implementation.
export class CurrencyRate implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Currency Rate',
		name: 'currencyRate',
		icon: { light: 'file:currencyRate.svg', dark: 'file:currencyRate.dark.svg' },
		group: ['transform'],
		version: 1,
		description: 'Exchange rates',
		defaults: { name: 'Currency Rate' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		properties: [],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		throw new NodeOperationError(this.getNode(), 'not implemented');
	}
}
