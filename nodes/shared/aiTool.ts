import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

/**
 * The nodes as AI-agent tools. n8n gives every node with `usableAsTool` a second type, named
 * `<name>Tool`, that an AI Agent calls; parameters set to `{{ $fromAI(...) }}` are filled by the
 * model. What the tool returns goes back to the model, which pays for every token, so in the tool
 * variant the server's raw answer (`response`, the same facts again) is left out unless asked.
 */

/** Whether this execution is the tool variant (n8n's own `@tool` display option tests the same suffix). */
function runsAsTool(ctx: IExecuteFunctions): boolean {
	return ctx.getNode().type.endsWith('Tool');
}

/** "Include Raw Response", shown only on the tool variant (as n8n's HTTP Request Tool shows its response options). */
export const includeRawResponseProperty: INodeProperties = {
	displayName: 'Include Raw Response',
	name: 'includeRawResponse',
	type: 'boolean',
	default: false,
	description:
		'Whether to give the model the server\'s raw answer ("response") too. Off: only the node\'s own fields, fewer tokens.',
	displayOptions: { show: { '@tool': [true] } },
};

/** The items as the model gets them: without `response` in the tool variant, unless asked for. */
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
