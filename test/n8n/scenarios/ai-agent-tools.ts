/**
 * The AI-agent tool variants in real n8n: `/types/nodes.json` serves `messagingTool` and
 * `currencyRateTool` (inputs none, output ai_tool, "Include Raw Response" shown on them only), the
 * imported examples/ai-agent-rates-and-messages.json keeps its three tools on the agent's tool
 * connector, and (n8n 2.x editor) its canvas is the picture docs/ai-agents.md shows
 * (docs/.images/ai-agent-tools.png, rewritten by a run with --doc-images). The agent itself runs in
 * ai-agent-run.ts (a scripted chat model); the tool nodes with $fromAI values in test/aiTools.test.ts.
 */
import { existsSync } from 'fs';
import { docImage, screenshotWorkflowIn, withEditor } from '../editor';
import { log, type ScenarioContext } from '../lib';

const EXAMPLE_ID = 'AiAgentRates';
const TOOL_TYPES = [
	'n8n-nodes-messaging-rate.messagingTool',
	'n8n-nodes-messaging-rate.currencyRateTool',
];

interface NodeTypeJson {
	name: string;
	inputs?: unknown;
	outputs?: unknown;
	properties?: Array<{ name: string; displayOptions?: { show?: Record<string, unknown> } }>;
}

export async function aiAgentToolsAreServed(t: ScenarioContext): Promise<void> {
	const { report, server: srv } = t;
	const typesRes = await fetch(`${srv.url}/types/nodes.json`, {
		headers: { cookie: `n8n-auth=${srv.authCookie}` },
	});
	const types = (await typesRes.json()) as NodeTypeJson[];
	for (const name of TOOL_TYPES) {
		const tool = types.find((type) => type.name === name);
		report.check(
			`node types served include the tool variant ${name} (output ai_tool)`,
			!!tool &&
				JSON.stringify(tool.outputs).includes('ai_tool') &&
				JSON.stringify(tool.inputs) === '[]',
			tool && { inputs: tool.inputs, outputs: tool.outputs },
		);
		const raw = tool?.properties?.find((property) => property.name === 'includeRawResponse');
		report.check(
			`${name}: "Include Raw Response" is shown on the tool variant only ('@tool')`,
			JSON.stringify(raw?.displayOptions?.show?.['@tool']) === '[true]',
			raw,
		);
	}

	const wf = await srv.rest<{
		nodes: Array<{ name: string; type: string }>;
		connections: Record<string, Record<string, Array<Array<{ node: string }>>>>;
	}>('GET', `/workflows/${EXAMPLE_ID}`);
	const tools = wf.nodes.filter((node) => TOOL_TYPES.includes(node.type));
	report.check(
		'examples/ai-agent-rates-and-messages.json imported with its three tools on the AI Agent',
		tools.length === 3 &&
			tools.every((node) => wf.connections[node.name]?.ai_tool?.[0]?.[0]?.node === 'AI Agent'),
		tools.map((node) => node.name),
	);

	if (!t.options.editor || t.target.major < 2) {
		log(
			`AI agent canvas screenshot not taken for ${t.target.label} (${t.options.editor ? "the editor selectors are n8n 2.x's" : '--no-editor'})`,
		);
		return;
	}
	const { shot, image } = await report.timed('editor: AI agent example canvas', () =>
		withEditor(srv, async (session) => {
			const canvas = await screenshotWorkflowIn(session, srv, EXAMPLE_ID, 'ai-agent-example');
			return { shot: canvas, image: await docImage(session, 'ai-agent-tools') };
		}),
	);
	report.check(
		'editor: the AI agent example renders the agent, the model and the three tools',
		['AI Agent', 'Get_Rates', 'Convert_Amount', 'Send_WhatsApp'].every((name) =>
			shot.nodeNames.some((shown) => shown.includes(name)),
		),
		shot.nodeNames,
	);
	report.check(
		'editor: screenshot for docs/.images/ai-agent-tools.png saved (written there with --doc-images)',
		existsSync(image),
		image,
	);
}
