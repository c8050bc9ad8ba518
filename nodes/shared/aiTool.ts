import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

// In the tool variant (`<name>Tool`, called by an AI Agent) the raw `response` is left out unless
// asked: the model pays for every token, and `response` repeats the node's own fields.

export const includeRawResponseProperty: INodeProperties = {
	displayName: 'Include Raw Response',
	name: 'includeRawResponse',
	type: 'boolean',
	default: false,
	description:
		'Whether to give the model the server\'s raw answer ("response") too. Off: only the node\'s own fields, fewer tokens.',
	displayOptions: { show: { '@tool': [true] } },
};

export function compactForTool(
	ctx: IExecuteFunctions,
	items: INodeExecutionData[],
): INodeExecutionData[] {
	// n8n's own `@tool` display option tests the same suffix.
	const tool = ctx.getNode().type.endsWith('Tool');
	if (!tool || ctx.getNodeParameter('includeRawResponse', 0, false) === true) return items;
	for (const item of items) delete item.json.response;
	return items;
}
