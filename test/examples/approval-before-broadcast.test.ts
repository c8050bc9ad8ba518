/**
 * examples/approval-before-broadcast.json, read as it is and run through n8n's engine against the
 * sandbox: the approver gets the question the example writes, with its own button labels; the
 * answer (or no answer) decides what the IF node's condition sees; the broadcast sends the
 * request's text to each recipient and stops at the usage limit. Every name, phone, label and
 * field comes from the example, so the test follows the example's values and fails on its
 * behaviour. n8n's IF, Set and Split Out are not installed here: the run stops at the IF (a node
 * that records what it received, under the IF's name), and the broadcast gets one item per
 * recipient under the field the Split Out names. The whole chain runs in real n8n:
 * test/n8n/scenarios/send-and-wait.ts.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import {
	Expression,
	NodeHelpers,
	type IConnections,
	type IDataObject,
	type INode,
	type INodeParameters,
} from 'n8n-workflow';

import { Messaging } from '../../nodes/Messaging/Messaging.node';
import { PACKAGE, runWorkflow, sandboxCredential, type WorkflowJson } from '../harness/engine';
import { useSandbox } from '../harness/useSandbox';
import { WaitingHarness } from '../harness/waitingEngine';

const example = JSON.parse(
	readFileSync(join(__dirname, '..', '..', 'examples', 'approval-before-broadcast.json'), 'utf8'),
) as { id: string; nodes: INode[]; connections: IConnections };

const ofType = (type: string) => example.nodes.filter((node) => node.type === type);
const messagingNodes = ofType(`${PACKAGE}.messaging`);
const messagingNode = (operation: string) =>
	messagingNodes.find((node) => node.parameters.operation === operation) as INode;
const request = ofType('n8n-nodes-base.webhook')[0];
const ask = messagingNode('sendAndWait');
const broadcast = messagingNode('sendText');
/** The nodes an output of `from` leads to. */
const next = (from: INode, output = 0) =>
	(example.connections[from.name]?.main[output] ?? []).map(
		(connection) => example.nodes.find((node) => node.name === connection?.node) as INode,
	);
const decision = next(ask)[0];

/** An n8n expression of the example (`={{ … }}`), evaluated by n8n on `json`. */
const evaluate = (expression: unknown, json: IDataObject) =>
	Expression.resolveWithoutWorkflow(String(expression).replace(/^=/, ''), { $json: json });
/** What the IF's condition yields for an item (its first condition, as the example has one). */
const condition = (decisionNode: INode) =>
	(decisionNode.parameters.conditions as { conditions: Array<{ leftValue: string }> }).conditions[0]
		.leftValue;

const sandbox = useSandbox();
let harness: WaitingHarness;
beforeAll(async () => {
	harness = await WaitingHarness.start(sandboxCredential(sandbox.url));
});
afterAll(async () => await harness.close());

const RECIPIENTS = ['6281300000011', '6281300000012', '6281300000013', '6281300000014'];
const TEXT = 'March price list: 10 % off all rice until Friday.';
/** The item n8n's Webhook node hands on for the POST the example expects. */
const webhookItem = {
	json: { headers: {}, params: {}, query: {}, body: { text: TEXT, recipients: RECIPIENTS } },
};

/** The webhook and the approval as in the example; the IF replaced by a node that records its input. */
const approvalWorkflow: WorkflowJson = {
	nodes: [
		request,
		ask,
		{ ...decision, type: 'test.received', typeVersion: 1, parameters: {} } as INode,
	],
	connections: {
		[request.name]: example.connections[request.name],
		[ask.name]: example.connections[ask.name],
	},
};

/** The question the sandbox delivered, and its links by label. */
function question() {
	const texts = sandbox.ledger().filter((entry) => entry.kind === 'text');
	expect(texts).toHaveLength(1);
	const [entry] = texts;
	const links = Object.fromEntries(
		[...(entry.text ?? '').matchAll(/^(.+): (http\S+)$/gm)].map((match) => [match[1], match[2]]),
	);
	return { entry, links };
}

/** A request to the example's webhook; `requestId` tells two requests with the same text apart. */
async function askForApproval(requestId = 1) {
	const body = { ...webhookItem.json.body, requestId };
	const execution = await harness.run(approvalWorkflow, {
		startNode: request.name,
		startItems: [{ json: { ...webhookItem.json, body } }],
	});
	expect(execution.status).toBe('waiting');
	return execution;
}

describe('examples/approval-before-broadcast.json', () => {
	it('a request asks the approver, by WhatsApp, the question the example writes, with its labels', async () => {
		expect(next(request)).toEqual([ask]);
		await askForApproval();
		const { entry, links } = question();
		expect(entry.phone).toBe(String(ask.parameters.phone).replace(/\D/g, ''));
		const written = String(evaluate(ask.parameters.message, webhookItem.json));
		expect(written).toContain(TEXT);
		expect(written).toContain(String(RECIPIENTS.length));
		expect(entry.text?.startsWith(`${written}\n\n`)).toBe(true);
		const { approveLabel, declineLabel } = ask.parameters.approvalOptions as IDataObject;
		expect(Object.keys(links).sort()).toEqual([approveLabel, declineLabel].sort());
	});

	it("approving passes the IF's condition on to the broadcast; the decision is the approver's", async () => {
		const execution = await askForApproval();
		const { links } = question();
		const { approveLabel } = ask.parameters.approvalOptions as IDataObject;
		expect(await harness.press(links[String(approveLabel)])).toMatchObject({ resumed: true });
		const resumed = await harness.settled(execution.id);
		expect(resumed.status).toBe('success');
		const seen = resumed.output(decision.name).map((item) => item.json);
		expect(seen).toHaveLength(1);
		expect(evaluate(condition(decision), seen[0])).toBe(true);
		// The IF's "true" output leads on to the recipients and the broadcast.
		expect(next(decision)).not.toEqual([]);
	});

	it("declining, or no answer within the example's limit, fails the IF's condition: nothing is broadcast", async () => {
		const declined = await askForApproval();
		const { declineLabel } = ask.parameters.approvalOptions as IDataObject;
		await harness.press(question().links[String(declineLabel)]);
		const afterDecline = await harness.settled(declined.id);
		expect(afterDecline.output(decision.name).map((item) => item.json)).toEqual([
			expect.anything(),
		]);
		expect(evaluate(condition(decision), afterDecline.output(decision.name)[0].json)).not.toBe(
			true,
		);
		expect(next(decision, 1)).toEqual([]);

		sandbox.reset();
		// Another request (the same question again for the same request is refused: Skip Repeats Within).
		const unanswered = await askForApproval(2);
		// The wait has an end (n8n's "never" is the year 3000), then n8n runs the execution on.
		expect(unanswered.waitTill!.getTime()).toBeLessThan(Date.UTC(3000, 0, 1));
		const timedOut = await harness.timeOut(unanswered.id);
		expect(timedOut.status).toBe('success');
		const seen = timedOut.output(decision.name).map((item) => item.json);
		expect(seen).toHaveLength(1);
		expect(evaluate(condition(decision), seen[0])).not.toBe(true);
	});

	it("the broadcast sends the request's text to each recipient and stops at the usage limit", async () => {
		// The recipients as the Set and Split Out nodes hand them on: one item each, under their field.
		const [splitOut] = next(decision).flatMap((node) => next(node));
		expect(next(splitOut)).toEqual([broadcast]);
		const field = String(splitOut.parameters.fieldToSplitOut);
		const allowed = 2;
		sandbox.setUsage({ limit: allowed });
		const run = await runWorkflow(
			{
				nodes: [
					request,
					{
						...splitOut,
						type: 'test.items',
						typeVersion: 1,
						parameters: {
							items: JSON.stringify(RECIPIENTS.map((phone) => ({ [field]: phone }))),
						},
					},
					broadcast,
				],
				connections: {
					[request.name]: { main: [[{ node: splitOut.name, type: 'main', index: 0 }]] },
					[splitOut.name]: example.connections[splitOut.name],
				},
			},
			sandboxCredential(sandbox.url),
			{ startNode: request.name, startItems: [webhookItem] },
		);
		expect(run.error).toBeUndefined();
		expect(
			sandbox
				.ledger()
				.filter((entry) => entry.kind === 'text')
				.map((entry) => [entry.phone, entry.text]),
		).toEqual(RECIPIENTS.slice(0, allowed).map((phone) => [phone, TEXT]));
		const items = run.output(broadcast.name).map((item) => item.json);
		expect(items).toHaveLength(RECIPIENTS.length);
		expect(items.slice(0, allowed)).toEqual(
			RECIPIENTS.slice(0, allowed).map((phone) => expect.objectContaining({ phone, sent: true })),
		);
		// The rest come out as items marked not attempted, the workflow goes on.
		for (const item of items.slice(allowed))
			expect(item).toMatchObject({
				error: expect.stringContaining('usage limit'),
				details: expect.objectContaining({ notAttempted: true }),
			});
	});

	it('its Messaging nodes use only parameters the node has, with no issues', () => {
		expect(example.id).toMatch(/^\w{1,16}$/);
		expect(new Set(example.nodes.map((n) => n.id)).size).toBe(example.nodes.length);
		const { description } = new Messaging();
		expect(messagingNodes).toEqual(expect.arrayContaining([ask, broadcast]));
		for (const messaging of messagingNodes) {
			const resolved = NodeHelpers.getNodeParameters(
				description.properties,
				messaging.parameters,
				true,
				false,
				messaging,
				description,
			) as INodeParameters;
			expect({
				name: messaging.name,
				unknown: Object.keys(messaging.parameters).filter((key) => !(key in resolved)),
			}).toEqual({ name: messaging.name, unknown: [] });
			expect(
				NodeHelpers.getNodeParametersIssues(description.properties, messaging, description),
			).toBeNull();
			expect(messaging.credentials).toEqual({
				messagingRateApi: { id: 'sandbox-credential', name: 'Sandbox' },
			});
		}
	});
});
