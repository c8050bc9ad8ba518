/**
 * examples/daily-rates-to-chat.json: an importable workflow (ids, positions, credentials,
 * connections) whose Currency Rate parameters are ones the node really has, and whose steps
 * produce the expected chat message when run through the engine against the sandbox.
 *
 * The run below starts at the example's "Run Now" trigger (the engine harness does not run n8n's
 * Schedule Trigger); the text is formatted by an expression in the Messaging node's "Text".
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { NodeHelpers, type IConnections, type INode, type INodeParameters } from 'n8n-workflow';

import { CurrencyRate } from '../../nodes/CurrencyRate/CurrencyRate.node';
import { ratesFor } from '../../sandbox/rates';
import { expectOneRatesRequest } from '../harness/currencyRateNode';
import { useSandbox } from '../harness/useSandbox';
import { runWorkflow, sandboxCredential } from '../harness/engine';

interface ExampleWorkflow {
	id: string;
	name: string;
	nodes: INode[];
	connections: IConnections;
}

const example = JSON.parse(
	readFileSync(join(__dirname, '..', '..', 'examples', 'daily-rates-to-chat.json'), 'utf8'),
) as ExampleWorkflow;
const byType = (type: string) => example.nodes.find((node) => node.type === type) as INode;
const CREDENTIAL = { messagingRateApi: { id: 'sandbox-credential', name: 'Sandbox' } };

describe('examples/daily-rates-to-chat.json', () => {
	it('is an importable workflow: id, unique node ids and names, positions, credentials', () => {
		expect(typeof example.id).toBe('string');
		expect(example.id.length).toBeGreaterThan(0);
		expect(example.id.length).toBeLessThanOrEqual(16);
		expect(new Set(example.nodes.map((n) => n.id)).size).toBe(example.nodes.length);
		expect(new Set(example.nodes.map((n) => n.name)).size).toBe(example.nodes.length);
		for (const node of example.nodes) {
			expect(node.position).toEqual([expect.any(Number), expect.any(Number)]);
			expect(typeof node.typeVersion).toBe('number');
		}
		expect(byType('n8n-nodes-messaging-rate.currencyRate').credentials).toEqual(CREDENTIAL);
		expect(byType('n8n-nodes-messaging-rate.messaging').credentials).toEqual(CREDENTIAL);
	});

	it('runs daily: Schedule Trigger → Currency Rate → Messaging (plus a manual "Run Now")', () => {
		const schedule = byType('n8n-nodes-base.scheduleTrigger');
		const manual = byType('n8n-nodes-base.manualTrigger');
		const rates = byType('n8n-nodes-messaging-rate.currencyRate');
		const send = byType('n8n-nodes-messaging-rate.messaging');
		expect(schedule.parameters).toEqual({ rule: { interval: [{ triggerAtHour: 8 }] } });
		const next = (from: INode) => example.connections[from.name].main[0]?.map((c) => c?.node);
		expect(next(schedule)).toEqual([rates.name]);
		expect(next(manual)).toEqual([rates.name]);
		expect(next(rates)).toEqual([send.name]);
		expect(send.parameters).toMatchObject({
			resource: 'message',
			operation: 'sendText',
			phone: expect.stringMatching(/^\d+$/),
		});
	});

	it('gives the Currency Rate node only parameters it has, with the values the example promises', () => {
		const rates = byType('n8n-nodes-messaging-rate.currencyRate');
		expect(rates.parameters).toMatchObject({
			resource: 'rate',
			operation: 'get',
			provider: 'bca',
			currencies: 'USD,EUR,SGD',
			output: 'allInOne',
		});
		const description = new CurrencyRate().description;
		// n8n's own resolution of the node's parameters: nothing unknown, nothing hidden, nothing missing.
		const resolved = NodeHelpers.getNodeParameters(
			description.properties,
			rates.parameters,
			true,
			false,
			rates,
			description,
		) as INodeParameters;
		expect(Object.keys(rates.parameters).filter((name) => !(name in resolved))).toEqual([]);
		expect(
			NodeHelpers.getNodeParametersIssues(description.properties, rates, description),
		).toBeNull();
	});

	describe('through the engine against the sandbox', () => {
		const sandbox = useSandbox();

		it('sends one message listing the buy and sell rates of USD, EUR and SGD', async () => {
			const rates = byType('n8n-nodes-messaging-rate.currencyRate');
			const send = byType('n8n-nodes-messaging-rate.messaging');
			const run = await runWorkflow(example, sandboxCredential(sandbox.url), {
				startNode: 'Run Now',
			});
			expect(run.error).toBeUndefined();
			expectOneRatesRequest(sandbox, 'bca');

			const rows = ratesFor('bca') ?? [];
			const line = (code: string) => {
				const row = rows.find((r) => r.name === code);
				return `${code}: ${Number(row?.rate_buy).toFixed(2)} / ${Number(row?.rate_sell).toFixed(2)}`;
			};
			const today = (run.output(rates.name)[0].json.fetchedAt as string).slice(0, 10);
			const ledger = sandbox.ledger();
			expect(ledger).toHaveLength(1);
			expect(ledger[0]).toMatchObject({ kind: 'text', phone: send.parameters.phone });
			expect(ledger[0].text).toBe(
				[
					`BCA exchange rates, ${today} (IDR per unit, buy / sell):`,
					line('USD'),
					line('EUR'),
					line('SGD'),
				].join('\n'),
			);
		});
	});
});
