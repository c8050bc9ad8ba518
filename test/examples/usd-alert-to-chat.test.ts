/**
 * examples/usd-alert-to-chat.json: an importable workflow whose trigger and Messaging parameters
 * are ones the nodes really have, and which, polled through n8n-core against the sandbox, sends
 * one chat message when USD moves by more than 0.5 % (and none before, none twice).
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { commonPollingParameters } from 'n8n-core/dist/nodes-loader/constants';
import {
	NodeHelpers,
	type IConnections,
	type INode,
	type INodeParameters,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { sandboxCredential } from '../harness/engine';
import { PollHarness, RATE_TRIGGER_TYPE } from '../harness/pollEngine';
import { CurrencyRateTrigger } from '../../nodes/CurrencyRateTrigger/CurrencyRateTrigger.node';
import { Messaging } from '../../nodes/Messaging/Messaging.node';
import { sandboxQuote } from '../harness/currencyRateNode';
import { useSandbox } from '../harness/useSandbox';

interface ExampleWorkflow {
	id: string;
	name: string;
	nodes: INode[];
	connections: IConnections;
}

const example = JSON.parse(
	readFileSync(join(__dirname, '..', '..', 'examples', 'usd-alert-to-chat.json'), 'utf8'),
) as ExampleWorkflow;
const byType = (type: string) => example.nodes.find((node) => node.type === type) as INode;
const CREDENTIAL = { messagingRateApi: { id: 'sandbox-credential', name: 'Sandbox' } };

/** Parameters n8n would not know, or report as issues, for a node of the example. */
function parameterProblems(node: INode, description: INodeTypeDescription) {
	const resolved = NodeHelpers.getNodeParameters(
		description.properties,
		node.parameters,
		true,
		false,
		node,
		description,
	) as INodeParameters;
	return {
		unknown: Object.keys(node.parameters).filter((name) => !(name in resolved)),
		issues: NodeHelpers.getNodeParametersIssues(description.properties, node, description),
	};
}

describe('examples/usd-alert-to-chat.json', () => {
	it('is an importable workflow: Currency Rate Trigger → Messaging Send Text, with the sandbox credential', () => {
		expect(example.id).toMatch(/^\w{1,16}$/);
		expect(new Set(example.nodes.map((n) => n.id)).size).toBe(example.nodes.length);
		const trigger = byType(RATE_TRIGGER_TYPE);
		const send = byType('n8n-nodes-messaging-rate.messaging');
		expect(trigger.credentials).toEqual(CREDENTIAL);
		expect(send.credentials).toEqual(CREDENTIAL);
		expect(example.connections[trigger.name].main[0]?.map((c) => c?.node)).toEqual([send.name]);
		expect(send.parameters).toMatchObject({
			resource: 'message',
			operation: 'sendText',
			phone: expect.stringMatching(/^\d+$/),
		});
	});

	it("gives both nodes only parameters they have (the trigger with n8n's Poll Times)", () => {
		const triggerDescription = new CurrencyRateTrigger().description;
		// n8n's loader puts "Poll Times" in front of a polling node's own properties.
		const withPollTimes = {
			...triggerDescription,
			properties: [...commonPollingParameters, ...triggerDescription.properties],
		};
		expect(parameterProblems(byType(RATE_TRIGGER_TYPE), withPollTimes)).toEqual({
			unknown: [],
			issues: null,
		});
		expect(
			parameterProblems(byType('n8n-nodes-messaging-rate.messaging'), new Messaging().description),
		).toEqual({ unknown: [], issues: null });
	});

	describe('polled against the sandbox', () => {
		const sandbox = useSandbox();

		it('sends one alert after USD moves by more than 0.5 %, none before and none twice', async () => {
			const usd = sandboxQuote('bca', 'USD');
			const trigger = new PollHarness({
				workflow: example,
				credentials: sandboxCredential(sandbox.url),
			});
			await trigger.activate();
			await trigger.poll();
			expect(sandbox.ledger()).toHaveLength(0);

			const moved = sandbox.moveRate({ provider: 'bca', currency: 'USD', percent: 0.8 });
			const fired = await trigger.poll();
			expect(fired.execution?.error).toBeUndefined();
			const percent = ((Number(moved.rate_sell) - usd.sell) / usd.sell) * 100;
			expect(sandbox.ledger()).toHaveLength(1);
			expect(sandbox.ledger()[0]).toMatchObject({
				kind: 'text',
				phone: byType('n8n-nodes-messaging-rate.messaging').parameters.phone,
				text: `BCA USD sell rate moved +${percent.toFixed(2)}%: ${usd.sell.toFixed(2)} → ${Number(moved.rate_sell).toFixed(2)} IDR`,
			});

			await trigger.poll();
			expect(sandbox.ledger()).toHaveLength(1);
		});
	});
});
