import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

// In the tool variant (`<name>Tool`, called by an AI Agent) the raw `response` is left out unless
// asked: the model pays for every token, and `response` repeats the node's own fields.

/** n8n's own `@tool` display option tests the same suffix. */
function runsAsTool(ctx: IExecuteFunctions): boolean {
	return ctx.getNode().type.endsWith('Tool');
}

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
	if (!runsAsTool(ctx) || ctx.getNodeParameter('includeRawResponse', 0, false) === true)
		return items;
	for (const item of items) {
		if (item.json && typeof item.json === 'object' && 'response' in item.json)
			delete item.json.response;
	}
	return items;
}
