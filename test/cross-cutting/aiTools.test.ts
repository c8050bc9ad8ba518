/**
 * Messaging and Currency Rate as AI-agent tools, through the engine against the sandbox: the tool
 * variants (`messagingTool`, `currencyRateTool`) run with parameters set to `$fromAI()` and the
 * model's arguments as input, as n8n hands them to a tool node; what goes back to the model is
 * compact; the `$fromAI` lines the docs give are the ones tested here.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import {
	NodeHelpers,
	type IDataObject,
	type INode,
	type INodeParameters,
	type INodeProperties,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../harness/engine';
import { CurrencyRate } from '../../nodes/CurrencyRate/CurrencyRate.node';
import { Messaging } from '../../nodes/Messaging/Messaging.node';
import { PROVIDER_FROM_AI, RATE_FROM_AI, sandboxQuote } from '../harness/currencyRateNode';
import { useSandbox } from '../harness/useSandbox';

const sandbox = useSandbox();
const AI_DOC = readFileSync(join(__dirname, '..', '..', 'docs', 'ai-agents.md'), 'utf8');

/** The `$fromAI` lines of docs/ai-agents.md's table, by parameter. */
const SEND_TEXT = {
	resource: 'message',
	operation: 'sendText',
	phone:
		"={{ $fromAI('phone', 'Recipient phone number with country code, digits only, e.g. 6281234567890', 'string') }}",
	text: "={{ $fromAI('text', 'The message text to send', 'string') }}",
};
const CONVERT = {
	resource: 'rate',
	operation: 'convert',
	provider: `=${PROVIDER_FROM_AI}`,
	amount: "={{ $fromAI('amount', 'The amount to convert, a number', 'number') }}",
	fromCurrency:
		"={{ $fromAI('from_currency', 'ISO 4217 code of the currency the amount is in, e.g. USD', 'string') }}",
	toCurrency:
		"={{ $fromAI('to_currency', 'ISO 4217 code of the currency to convert into, e.g. IDR', 'string') }}",
	rateType: `=${RATE_FROM_AI}`,
};

async function runTool(
	type: 'messagingTool' | 'currencyRateTool' | 'messaging',
	parameters: IDataObject,
	modelArguments: IDataObject,
) {
	const run = await runWorkflow(
		singleNodeWorkflow(type, parameters as never, [modelArguments]),
		sandboxCredential(sandbox.url),
	);
	expect(run.error).toBeUndefined();
	return run.output('Node').map((item) => item.json);
}

describe('Messaging Tool with $fromAI values', () => {
	it('sends to the number the model gave and answers compactly (no raw response)', async () => {
		const out = await runTool('messagingTool', SEND_TEXT, {
			phone: '+62 812-8877-6713',
			text: 'USD is at 16,250 IDR today',
		});
		expect(sandbox.ledger()).toMatchObject([
			{ kind: 'text', phone: '6281288776713', text: 'USD is at 16,250 IDR today' },
		]);
		expect(out).toHaveLength(1);
		expect(out[0]).not.toHaveProperty('response');
		expect(out[0]).toMatchObject({ phone: '6281288776713' });
		expect(JSON.stringify(out[0]).length).toBeLessThan(400);
	});

	it('adds the raw response when "Include Raw Response" is on, and the regular node keeps it', async () => {
		const withRaw = await runTool(
			'messagingTool',
			{ ...SEND_TEXT, includeRawResponse: true },
			{ phone: '6281288776713', text: 'a' },
		);
		expect(withRaw[0]).toHaveProperty('response');
		const regular = await runTool('messaging', SEND_TEXT, { phone: '6281288776713', text: 'b' });
		expect(regular[0]).toHaveProperty('response');
	});
});

describe('Messaging Tool: Send File from a URL the model gives', () => {
	it('sends the file at the address, and the model gets the file facts without the raw response', async () => {
		const parameters = {
			resource: 'message',
			operation: 'sendFile',
			phone: SEND_TEXT.phone,
			fileSource: 'url',
			fileUrl: "={{ $fromAI('file_url', 'The http(s) address of the file to send', 'string') }}",
			caption: "={{ $fromAI('caption', 'Text shown with the file', 'string') }}",
		};
		const url = `${sandbox.url}/files/rates/today.pdf?size=3000&type=application/pdf`;
		const out = await runTool('messagingTool', parameters, {
			phone: '6281288776713',
			file_url: url,
			caption: 'Rates of today',
		});
		expect(sandbox.ledger()).toMatchObject([
			{
				kind: 'file',
				phone: '6281288776713',
				caption: 'Rates of today',
				file: { filename: 'today.pdf', size: 3000 },
			},
		]);
		expect(out[0]).toMatchObject({ sent: true, fileName: 'today.pdf', fileSize: 3000 });
		expect(out[0]).not.toHaveProperty('response');
		expect(AI_DOC).toContain(parameters.fileUrl.replace(/^=/, ''));
	});
});

describe('Currency Rate Tool with $fromAI values (Provider and Rate too)', () => {
	it('converts with the provider and rate the model named, in any spelling', async () => {
		const sell = sandboxQuote('bni', 'USD').sell;
		const out = await runTool('currencyRateTool', CONVERT, {
			provider: 'Bank Negara Indonesia',
			amount: 100,
			from_currency: 'usd',
			to_currency: 'IDR',
			rate: 'Sell',
		});
		// Convert's default: the tool's input, the converted amount and the rate used beside it.
		expect(out).toMatchObject([
			{
				convertedAmount: Math.round(100 * sell * 100) / 100,
				conversion: { provider: 'bni', rateType: 'sell', fromCurrency: 'USD', toCurrency: 'IDR' },
			},
		]);
	});

	it('says which field and what to use when the model gives a provider or rate that does not exist', async () => {
		const run = await runWorkflow(
			singleNodeWorkflow('currencyRateTool', CONVERT as never, [
				{ provider: 'bca', amount: 1, from_currency: 'USD', to_currency: 'IDR', rate: 'cheapest' },
			]),
			sandboxCredential(sandbox.url),
		);
		expect(run.error?.message).toMatch(/Field "Rate" is not a rate type: "cheapest"/);
		expect(run.error?.description).toMatch(/average, bank, buy, sell/);
	});
});

describe('descriptions a model reads', () => {
	const visible = (properties: INodeProperties[]) =>
		properties.filter((p) => p.type !== 'notice' && p.type !== 'hidden');

	it.each([
		['Messaging', new Messaging().description],
		['Currency Rate', new CurrencyRate().description],
	])(
		'%s: every operation has an action and a description, every parameter a description',
		(_name, description) => {
			const operations = description.properties
				.filter((p) => p.name === 'operation')
				.flatMap((p) => p.options as Array<{ action?: string; description?: string }>);
			expect(operations.length).toBeGreaterThan(0);
			expect(operations.filter((o) => !o.action || !o.description)).toEqual([]);
			const undocumented = visible(description.properties)
				.filter(
					(p) =>
						!['resource', 'operation'].includes(p.name) &&
						p.type !== 'collection' &&
						p.type !== 'fixedCollection',
				)
				// A selector whose every choice is described documents itself.
				.filter(
					(p) =>
						!(p.description ?? p.hint) &&
						!(
							p.type === 'options' &&
							(p.options as Array<{ description?: string }>).every((o) => o.description)
						),
				);
			expect(undocumented.map((p) => p.name)).toEqual([]);
		},
	);

	it('docs/ai-agents.md gives the exact $fromAI lines tested here', () => {
		for (const line of [
			PROVIDER_FROM_AI,
			RATE_FROM_AI,
			...Object.values(SEND_TEXT),
			...Object.values(CONVERT),
		].filter((v) => v.includes('$fromAI'))) {
			expect(AI_DOC).toContain(line.replace(/^=/, ''));
		}
	});
});

describe('examples/ai-agent-rates-and-messages.json', () => {
	const example = JSON.parse(
		readFileSync(
			join(__dirname, '..', '..', 'examples', 'ai-agent-rates-and-messages.json'),
			'utf8',
		),
	) as {
		id: string;
		nodes: INode[];
		connections: Record<string, Record<string, Array<Array<{ node: string }>>>>;
	};
	const tools = example.nodes.filter((node) => node.type.startsWith('n8n-nodes-messaging-rate.'));
	const descriptionOf = (type: string): INodeTypeDescription =>
		(type.endsWith('.messagingTool') ? new Messaging() : new CurrencyRate()).description;

	it('connects three tools of this package to the agent, with the sandbox credential', () => {
		expect(example.id).toMatch(/^\w{1,21}$/);
		expect(tools.map((node) => node.type).sort()).toEqual([
			'n8n-nodes-messaging-rate.currencyRateTool',
			'n8n-nodes-messaging-rate.currencyRateTool',
			'n8n-nodes-messaging-rate.messagingTool',
		]);
		for (const tool of tools) {
			expect(tool.credentials).toEqual({
				messagingRateApi: { id: 'sandbox-credential', name: 'Sandbox' },
			});
			expect(example.connections[tool.name].ai_tool[0].map((c) => c.node)).toEqual(['AI Agent']);
		}
	});

	it("gives the tools only parameters the nodes have (besides n8n's Tool Description), using the documented $fromAI lines", () => {
		for (const tool of tools) {
			const description = descriptionOf(tool.type);
			const { descriptionType, toolDescription, ...own } = tool.parameters;
			expect([descriptionType, typeof toolDescription]).toEqual(['manual', 'string']);
			const node = { ...tool, parameters: own };
			const resolved = NodeHelpers.getNodeParameters(
				description.properties,
				own,
				true,
				false,
				node,
				description,
			) as INodeParameters;
			expect(Object.keys(own).filter((name) => !(name in resolved))).toEqual([]);
			for (const value of Object.values(own)) {
				if (typeof value === 'string' && value.includes('$fromAI'))
					expect(AI_DOC).toContain(value.replace(/^=/, ''));
			}
		}
	});

	it('its Convert_Amount tool converts with arguments a model would give', async () => {
		const convert = tools.find((node) => node.name === 'Convert_Amount')!;
		const out = await runTool('currencyRateTool', convert.parameters as IDataObject, {
			provider: 'KMK',
			amount: 2,
			from_currency: 'EUR',
			to_currency: 'USD',
			rate: 'average',
		});
		const eur = sandboxQuote('kmk', 'EUR').average;
		const usd = sandboxQuote('kmk', 'USD').average;
		expect(out).toMatchObject([
			{
				convertedAmount: Math.round(((2 * eur) / usd) * 100) / 100,
				conversion: { provider: 'kmk', fromCurrency: 'EUR', toCurrency: 'USD' },
			},
		]);
	});
});
