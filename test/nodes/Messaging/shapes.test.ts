/**
 * The shapes users build first, each with a new Messaging node's defaults (version 2: Skip Repeats
 * Within 8 h, 2–6 s between messages), through n8n's real engine against the sandbox: a lone node
 * run with "Execute step" (a start node: n8n gives it no source data), the node as the first of a
 * run fed with items, behind a Manual Trigger, behind a Webhook, inside a sub-workflow and in a
 * Loop Over Items.
 */
import type { INodeExecutionData, INodeParameters, IRun } from 'n8n-workflow';

import { runWorkflow, sandboxCredential, type WorkflowJson } from '../../harness/engine';
import {
	PHONE,
	loopWorkflow,
	mappedSendText,
	runAfterEvent,
	runMessaging,
} from '../../harness/messagingNode';
import { TRIGGER_CUSTOMER, useTrigger } from '../../harness/messagingTriggerNode';
import { useSandbox } from '../../harness/useSandbox';
import { useVirtualTime } from '../../harness/virtualTime';

const sandbox = useSandbox();
const trigger = useTrigger(sandbox);
useVirtualTime();

const CREDENTIALS = { messagingRateApi: { id: 'cred-1', name: 'Sandbox' } };

const sendText: INodeParameters = {
	resource: 'message',
	operation: 'sendText',
	phone: '+62 812-8877-6713',
	text: 'Hello from n8n',
};

const reply: INodeParameters = {
	resource: 'message',
	operation: 'sendText',
	phone: '={{ $json.sender }}',
	text: 'Thanks, we got your message',
};

const sent = () => sandbox.ledger().map((entry) => `${entry.phone}: ${entry.text ?? entry.kind}`);
const outputOf = (run: IRun): INodeExecutionData[] =>
	run.data.resultData.runData.Node?.[0]?.data?.main?.[0] ?? [];
const hintsOf = (run: IRun) => run.data.resultData.runData.Node?.[0]?.hints ?? [];

/** The workflow of a lone node: nothing before it, as a node added to an empty canvas. */
function lone(parameters: INodeParameters): WorkflowJson {
	return {
		nodes: [
			{
				id: 'lone',
				name: 'Node',
				type: 'n8n-nodes-messaging-rate.messaging',
				typeVersion: 1,
				position: [0, 0],
				parameters,
				credentials: CREDENTIALS,
			},
		],
		connections: {},
	};
}

async function runLone(parameters: INodeParameters, startItems?: INodeExecutionData[]) {
	return await runWorkflow(lone(parameters), sandboxCredential(sandbox.url), { startItems });
}

/** The items the real Messaging Trigger emitted for one inbound message. */
async function inbound(text: string): Promise<INodeExecutionData[]> {
	const { executions } = await trigger.deliver({ sender: TRIGGER_CUSTOMER, message: text });
	expect(executions).toHaveLength(1);
	return executions[0].triggerItems;
}

beforeEach(async () => {
	await trigger.activate();
});

describe('a lone node run with "Execute step" (a start node)', () => {
	it('Send Text sends with the defaults; the same step run again is skipped, with a warning', async () => {
		const first = await runLone(sendText);
		expect(first.error).toBeUndefined();
		expect(first.output('Node')[0].json).toMatchObject({ sent: true, phone: PHONE });
		expect(sent()).toEqual([`${PHONE}: Hello from n8n`]);

		const again = await runLone(sendText);
		expect(again.error).toBeUndefined();
		expect(again.output('Node')[0].json).toMatchObject({ skipped: true });
		expect(hintsOf(again.run)).toEqual(
			expect.arrayContaining([
				expect.objectContaining({
					type: 'warning',
					message: expect.stringMatching(/^Nothing was sent: the message is a repeat/),
				}),
			]),
		);
		expect(sent()).toHaveLength(1);
	});

	it('Send File sends with the defaults', async () => {
		const run = await runLone({
			resource: 'message',
			operation: 'sendFile',
			phone: PHONE,
			fileSource: 'base64',
			fileContent: Buffer.from('%PDF-1.4 lone').toString('base64'),
			fileFields: { fileName: 'lone.pdf', mimeType: 'application/pdf' },
		});
		expect(run.error).toBeUndefined();
		expect(run.output('Node')[0].json).toMatchObject({ sent: true, phone: PHONE });
		expect(sandbox.ledger().map((entry) => entry.file?.filename)).toEqual(['lone.pdf']);
	});

	it('fed with two inbound messages, it answers both; the same message fed again gets no second reply', async () => {
		const sunday = await inbound('Do you open on Sunday?');
		const monday = await inbound('And on Monday?');
		const both = await runLone(reply, [...sunday, ...monday]);
		expect(both.error).toBeUndefined();
		expect(both.output('Node').map((item) => item.json.sent)).toEqual([true, true]);
		expect(sent()).toHaveLength(2);

		const again = await runLone(reply, sunday);
		expect(again.output('Node')[0].json.skipped).toBe(true);
		expect(sent()).toHaveLength(2);
	});
});

describe('behind a trigger', () => {
	it('behind a Manual Trigger: sends', async () => {
		const run = await runMessaging(sandbox, sendText, [{}]);
		expect(run.error).toBeUndefined();
		expect(sent()).toEqual([`${PHONE}: Hello from n8n`]);
	});

	it('behind the Messaging Trigger: two inbound messages answered with the same text get two replies, a redelivery none', async () => {
		const sunday = await inbound('Do you open on Sunday?');
		await runAfterEvent(sandbox, `n8n-nodes-messaging-rate.messagingTrigger`, sunday, reply);
		await runAfterEvent(
			sandbox,
			`n8n-nodes-messaging-rate.messagingTrigger`,
			await inbound('And on Monday?'),
			reply,
		);
		expect(sent()).toHaveLength(2);
		const redelivered = await runAfterEvent(
			sandbox,
			`n8n-nodes-messaging-rate.messagingTrigger`,
			sunday,
			reply,
		);
		expect(outputOf(redelivered)[0].json.skipped).toBe(true);
		expect(sent()).toHaveLength(2);
	});

	it('behind a Webhook: sends', async () => {
		const call = [{ json: { headers: {}, params: {}, query: {}, body: { text: 'db1 is DOWN' } } }];
		const run = await runAfterEvent(sandbox, 'n8n-nodes-base.webhook', call, {
			...sendText,
			text: '={{ $json.body.text }}',
		});
		expect(run.data.resultData.error).toBeUndefined();
		expect(sent()).toEqual([`${PHONE}: db1 is DOWN`]);
	});

	it('inside a sub-workflow: sends; a second call with the same data is skipped with a warning that says how to send it', async () => {
		const call = [{ json: { phone: PHONE, text: 'Your code is 1234' } }];
		const first = await runAfterEvent(
			sandbox,
			'n8n-nodes-base.executeWorkflowTrigger',
			call,
			mappedSendText(),
		);
		expect(outputOf(first)[0].json.sent).toBe(true);
		const second = await runAfterEvent(
			sandbox,
			'n8n-nodes-base.executeWorkflowTrigger',
			call,
			mappedSendText(),
		);
		expect(outputOf(second)[0].json.skipped).toBe(true);
		expect(hintsOf(second)).toEqual(
			expect.arrayContaining([
				expect.objectContaining({
					type: 'warning',
					message: expect.stringContaining('give each event its own Idempotency Key'),
				}),
			]),
		);
		expect(sent()).toHaveLength(1);
	});
});

describe('in a Loop Over Items', () => {
	it('each pass sends, also the same message on purpose ("ping" three times)', async () => {
		const ping = { phone: PHONE, text: 'ping' };
		const run = await runWorkflow(
			loopWorkflow([ping, ping, ping], mappedSendText()),
			sandboxCredential(sandbox.url),
		);
		expect(run.error).toBeUndefined();
		expect(run.run.data.resultData.runData.Node).toHaveLength(3);
		expect(sent()).toEqual([`${PHONE}: ping`, `${PHONE}: ping`, `${PHONE}: ping`]);
	});

	it('a loop over different rows sends each row once; the same run again sends nothing', async () => {
		const rows = [1, 2, 3].map((n) => ({ phone: PHONE, text: `Row ${n}` }));
		await runWorkflow(loopWorkflow(rows, mappedSendText()), sandboxCredential(sandbox.url));
		const again = await runWorkflow(
			loopWorkflow(rows, mappedSendText()),
			sandboxCredential(sandbox.url),
		);
		expect(again.error).toBeUndefined();
		expect(sent()).toEqual([`${PHONE}: Row 1`, `${PHONE}: Row 2`, `${PHONE}: Row 3`]);
	});
});
