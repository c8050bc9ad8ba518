/**
 * An AI Agent run end to end in real n8n with this package's tools: examples/ai-agent-rates-and-messages.json
 * with a Manual Trigger in place of its chat trigger and its OpenAI Chat Model pointed at a scripted
 * model (lib/scriptedModel.ts), run with `n8n execute`. The script plays a model that, asked to
 * send today's BCA USD rate to a number, calls Get_Rates, reads the USD sell rate from what the
 * tool returned, calls Send_WhatsApp with it, and answers with the tool's result. Checked: the
 * three tools are offered with their descriptions and `$fromAI` parameters; the rates tool's
 * answer holds the sandbox's rate and no token or secret; exactly one message reaches the sandbox,
 * to the number and with the rate the model chose; the agent's output is the model's last answer.
 */
import { randomBytes } from 'crypto';

import {
	contentText,
	importCredential,
	nodeOutput,
	startScriptedModel,
	type ChatRequest,
	type ScenarioContext,
	type ScriptedAnswer,
	type WorkflowJson,
} from '../lib';

const EXAMPLE_ID = 'AiAgentRates';
const WORKFLOW_ID = 'E2eAiAgentRun';
const MODEL_CREDENTIAL = { id: 'scriptedModelCred01', name: 'Scripted model' };
const RECIPIENT = '6281300000021';
const PROMPT = `Send today's BCA USD sell rate to ${RECIPIENT} on WhatsApp.`;

/** The USD sell rate in a Get_Rates answer (one item with all rates, or one item per currency), or undefined. */
function usdSell(toolAnswer: string): number | undefined {
	let found: number | undefined;
	const visit = (value: unknown): void => {
		if (found !== undefined || value === null || typeof value !== 'object') return;
		const record = value as Record<string, unknown>;
		if (record.currency === 'USD' && typeof record.sell === 'number') found = record.sell;
		const usd = (record.rates as Record<string, { sell?: unknown }> | undefined)?.USD;
		if (found === undefined && typeof usd?.sell === 'number') found = usd.sell;
		for (const child of Object.values(record)) visit(child);
	};
	try {
		visit(JSON.parse(toolAnswer));
	} catch {
		return undefined;
	}
	return found;
}

/** The model's side: rates first, then the message with the rate it read, then the answer. */
function script(request: ChatRequest): ScriptedAnswer {
	const offered = new Set((request.tools ?? []).map((tool) => tool.function.name));
	const toolAnswers = request.messages
		.filter((message) => message.role === 'tool')
		.map(contentText);
	if (toolAnswers.length === 0) {
		if (!offered.has('Get_Rates'))
			return { text: `NO TOOL Get_Rates among ${[...offered].join(', ')}` };
		return {
			toolCalls: [{ name: 'Get_Rates', arguments: { provider: 'bca', currencies: 'USD' } }],
		};
	}
	if (toolAnswers.length === 1) {
		const sell = usdSell(toolAnswers[0]);
		if (sell === undefined) return { text: `NO USD RATE in ${toolAnswers[0].slice(0, 300)}` };
		return {
			toolCalls: [
				{
					name: 'Send_WhatsApp',
					arguments: { phone: RECIPIENT, text: `BCA USD sell today: ${sell} IDR` },
				},
			],
		};
	}
	return { text: `Done. ${toolAnswers[1].slice(0, 400)}` };
}

export async function aiAgentRunsTheTools(t: ScenarioContext): Promise<void> {
	const { report, sandbox: sb } = t;
	const model = await startScriptedModel(script);
	try {
		await importCredential(t.userFolder, {
			...MODEL_CREDENTIAL,
			type: 'openAiApi',
			data: { apiKey: `sk-scripted-${randomBytes(6).toString('hex')}`, url: model.url },
		});
		const example = structuredClone(t.workflow(EXAMPLE_ID).wf);
		const nodes = example.nodes as Array<Record<string, unknown>>;
		const chatTrigger = nodes.find((node) => node.type === '@n8n/n8n-nodes-langchain.chatTrigger')!;
		const trigger = {
			id: 'e2e-ai-run-trigger',
			name: 'Run Now',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: chatTrigger.position,
			parameters: {},
		};
		const agent = nodes.find((node) => node.type === '@n8n/n8n-nodes-langchain.agent')!;
		agent.parameters = { ...(agent.parameters as object), promptType: 'define', text: PROMPT };
		const chatModel = nodes.find((node) => node.type === '@n8n/n8n-nodes-langchain.lmChatOpenAi')!;
		chatModel.credentials = { openAiApi: MODEL_CREDENTIAL };
		const connections = example.connections as Record<string, unknown>;
		connections['Run Now'] = connections[String(chatTrigger.name)];
		delete connections[String(chatTrigger.name)];
		const workflow = {
			...example,
			id: WORKFLOW_ID,
			name: 'E2E: AI Agent with a scripted model',
			nodes: [trigger, ...nodes.filter((node) => node !== chatTrigger)],
			connections,
		} as WorkflowJson;
		await t.importWorkflow(workflow);

		const ledgerBefore = sb.ledger().length;
		const ex = await report.timed(
			'n8n execute: AI Agent with the scripted model and the three tools',
			() => t.execute(WORKFLOW_ID),
		);
		report.check(
			'the AI Agent workflow ran to the end',
			ex.ok,
			ex.ok
				? { ms: ex.ms }
				: {
						code: ex.code,
						status: ex.run?.status,
						error: ex.run?.data?.resultData?.error?.message,
						stderr: ex.stderr.slice(-800),
					},
		);

		const [first, second, third] = model.requests;
		const tools = new Map((first?.tools ?? []).map((tool) => [tool.function.name, tool.function]));
		const parameters = (name: string) =>
			Object.keys(tools.get(name)?.parameters?.properties ?? {})
				.sort()
				.join(',');
		report.check(
			'the model was offered the three tools, with their descriptions and $fromAI parameters',
			tools.get('Get_Rates')?.description?.startsWith("Gets today's exchange rates") === true &&
				parameters('Get_Rates') === 'currencies,provider' &&
				parameters('Convert_Amount') === 'amount,from_currency,provider,rate,to_currency' &&
				parameters('Send_WhatsApp') === 'phone,text',
			[...tools.values()].map((tool) => ({
				name: tool.name,
				parameters: Object.keys(tool.parameters?.properties ?? {}),
			})),
		);
		report.check(
			'the model was asked three times (rates, message, answer)',
			model.requests.length === 3,
			model.requests.map((r) => r.messages.map((m) => m.role).join('>')),
		);

		const ratesAnswer = contentText(
			second?.messages.find((message) => message.role === 'tool') ?? { role: 'tool' },
		);
		const sell = usdSell(ratesAnswer);
		const credentialSecret = t.account.clientSecret;
		report.check(
			'the rates tool answered the model with the USD rate, and with no token or client secret',
			sell !== undefined &&
				sell > 0 &&
				!ratesAnswer.includes(credentialSecret) &&
				!/"token"\s*:/.test(ratesAnswer),
			ratesAnswer.slice(0, 400),
		);

		const sent = sb.ledger().slice(ledgerBefore);
		report.check(
			'exactly one WhatsApp message, to the number and with the rate the model chose',
			sent.length === 1 &&
				sent[0].phone === RECIPIENT &&
				sent[0].text === `BCA USD sell today: ${sell} IDR`,
			sent.map((entry) => ({ phone: entry.phone, text: entry.text })),
		);
		const sendAnswer = contentText(
			third?.messages.filter((message) => message.role === 'tool')[1] ?? { role: 'tool' },
		);
		report.check(
			"the send tool answered the model with the message's id",
			sent.length === 1 && sendAnswer.includes(sent[0].id),
			sendAnswer.slice(0, 300),
		);

		// The answer is in the agent's last run (one run in n8n 2.40.7 and 1.123.81).
		const agentRuns = ex.run?.data?.resultData?.runData?.['AI Agent'] ?? [];
		const output = nodeOutput(ex.run, 'AI Agent', {
			runIndex: Math.max(0, agentRuns.length - 1),
		})[0] as { output?: unknown } | undefined;
		report.check(
			"the agent's output is the model's last answer",
			typeof output?.output === 'string' &&
				output.output.startsWith('Done.') &&
				output.output.includes(sent[0]?.id ?? '—'),
			{ runs: agentRuns.length, output },
		);
	} finally {
		await model.close();
	}
}
