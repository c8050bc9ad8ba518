/**
 * examples/approval-before-broadcast.json: an importable workflow whose Messaging nodes use only
 * parameters the node has. It runs end to end (webhook → approval by WhatsApp → bulk send that
 * stops at the usage limit) in real n8n: test/n8n/scenarios/send-and-wait.ts.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { NodeHelpers, type IConnections, type INode, type INodeParameters } from 'n8n-workflow';

import { Messaging } from '../../nodes/Messaging/Messaging.node';

const example = JSON.parse(
	readFileSync(join(__dirname, '..', '..', 'examples', 'approval-before-broadcast.json'), 'utf8'),
) as { id: string; nodes: INode[]; connections: IConnections };
const node = (name: string) => example.nodes.find((candidate) => candidate.name === name) as INode;

describe('examples/approval-before-broadcast.json', () => {
	it('webhook → Send and Wait → IF approved → recipients → Send Text with Stop at the Usage Limit', () => {
		expect(example.id).toMatch(/^\w{1,16}$/);
		expect(new Set(example.nodes.map((n) => n.id)).size).toBe(example.nodes.length);
		const next = (name: string, output = 0) =>
			example.connections[name]?.main[output]?.map((c) => c?.node);
		expect(next('Broadcast Request')).toEqual(['Ask for Approval']);
		expect(next('Ask for Approval')).toEqual(['Approved?']);
		expect(next('Approved?')).toEqual(['Recipients']);
		expect(next('Approved?', 1) ?? []).toEqual([]);
		expect(next('One Item per Recipient')).toEqual(['Broadcast']);
		expect(node('Ask for Approval').parameters).toMatchObject({
			operation: 'sendAndWait',
			responseType: 'approval',
			limitWaitTime: true,
		});
		expect(node('Broadcast').parameters).toMatchObject({
			operation: 'sendText',
			options: { stopAtUsageLimit: true },
		});
		expect(node('Broadcast').onError).toBe('continueRegularOutput');
	});

	it('its Messaging nodes use only parameters the node has, with no issues', () => {
		const { description } = new Messaging();
		for (const name of ['Ask for Approval', 'Broadcast']) {
			const messaging = node(name);
			const resolved = NodeHelpers.getNodeParameters(
				description.properties,
				messaging.parameters,
				true,
				false,
				messaging,
				description,
			) as INodeParameters;
			expect({
				name,
				unknown: Object.keys(messaging.parameters).filter((key) => !(key in resolved)),
			}).toEqual({ name, unknown: [] });
			expect(
				NodeHelpers.getNodeParametersIssues(description.properties, messaging, description),
			).toBeNull();
			expect(messaging.credentials).toEqual({
				messagingRateApi: { id: 'sandbox-credential', name: 'Sandbox' },
			});
		}
	});
});
