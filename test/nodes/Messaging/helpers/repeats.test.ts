/**
 * What makes a message a repeat (nodes/Messaging/helpers/cause.ts, idempotency.ts): the same
 * recipient and content from the same cause, the event n8n's paired-item lineage leads back to.
 * Through n8n's real engine, with this package's Messaging Trigger (its real items) or n8n's
 * Webhook in front, against the sandbox's ledger. The table in docs/delivery-and-scale.md is
 * checked row by row against these runs.
 */
import { createHash } from 'crypto';
import { readFileSync } from 'fs';
import { join } from 'path';
import type { INodeExecutionData, INodeParameters, IRun } from 'n8n-workflow';

import { clock } from '../../../../nodes/shared/clock';
import { PACKAGE, runWorkflow, sandboxCredential } from '../../../harness/engine';
import {
	PHONE,
	loopWorkflow,
	mappedSendText,
	orderItems,
	runAfterEvent,
	runMessaging,
} from '../../../harness/messagingNode';
import { TRIGGER_CUSTOMER, useTrigger } from '../../../harness/messagingTriggerNode';
import { useSandbox } from '../../../harness/useSandbox';
import { useVirtualTime } from '../../../harness/virtualTime';

const sandbox = useSandbox();
const trigger = useTrigger(sandbox);
// Version 2's pause between messages takes virtual time.
useVirtualTime();

const MESSAGING_TRIGGER = `${PACKAGE}.messagingTrigger`;
const WEBHOOK = 'n8n-nodes-base.webhook';
const SCHEDULE = 'n8n-nodes-base.scheduleTrigger';
const CHAT_TRIGGER = '@n8n/n8n-nodes-langchain.chatTrigger';
const SUB_WORKFLOW = 'n8n-nodes-base.executeWorkflowTrigger';
const HOUR = 3_600_000;

const sent = () => sandbox.ledger().length;
const texts = () => sandbox.ledger().map((entry) => entry.text);
/** A schedule's items: one row each. */
const scheduled = (count: number) => orderItems(count).map((json) => ({ json }));
const outputOf = (run: IRun): INodeExecutionData[] =>
	run.data.resultData.runData.Node?.[0]?.data?.main?.[0] ?? [];

const reply: INodeParameters = {
	resource: 'message',
	operation: 'sendText',
	phone: '={{ $json.sender }}',
	text: 'Thanks, we got your message',
};

const alert: INodeParameters = {
	resource: 'message',
	operation: 'sendText',
	phone: PHONE,
	text: '={{ $json.body.text }}',
};

const webhookCall = (body: object, requestId: string): INodeExecutionData[] => [
	{
		json: {
			headers: { 'content-type': 'application/json', 'x-request-id': requestId },
			params: {},
			query: {},
			body,
			webhookUrl: 'http://localhost/webhook/alerts',
			executionMode: 'production',
		} as never,
	},
];

/** The items the real Messaging Trigger emitted for one inbound message. */
async function inbound(text: string): Promise<INodeExecutionData[]> {
	const { executions } = await trigger.deliver({ sender: TRIGGER_CUSTOMER, message: text });
	expect(executions).toHaveLength(1);
	return executions[0].triggerItems;
}

beforeEach(async () => {
	await trigger.activate();
});

/** Each row of the docs' table, as runs: returns whether the second send went out. */
const situations: Record<string, () => Promise<'yes' | 'no'>> = {
	"n8n's Retry of a failed execution": async () => {
		// A schedule's run: n8n's Retry goes on from the failed node with the trigger's run as it was.
		sandbox.addFaults([{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, skip: 1 }]);
		const first = await runAfterEvent(sandbox, SCHEDULE, scheduled(2), mappedSendText());
		expect(first.data.resultData.error).toBeDefined();
		sandbox.clearFaults();
		const retry = await runAfterEvent(
			sandbox,
			SCHEDULE,
			[],
			mappedSendText(),
			{},
			{ retryOf: first },
		);
		expect(retry.data.resultData.error).toBeUndefined();
		expect(texts()).toEqual(['Order 0 is ready', 'Order 1 is ready']);
		return sandbox.ledger().filter((entry) => entry.text === 'Order 0 is ready').length > 1
			? 'yes'
			: 'no';
	},
	'Retry On Fail': async () => {
		sandbox.addFaults([
			{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, skip: 1, times: 1 },
		]);
		const run = await runMessaging(sandbox, mappedSendText(), orderItems(2), {
			retryOnFail: true,
			maxTries: 2,
			waitBetweenTries: 0,
		});
		expect(run.error).toBeUndefined();
		return sent() > 2 ? 'yes' : 'no';
	},
	'The same input run again by hand after a failure': async () => {
		sandbox.addFaults([
			{ kind: 'sentFalse', match: { rpcMethod: 'sendMessage' }, skip: 1, times: 1 },
		]);
		await runMessaging(sandbox, mappedSendText(), orderItems(2));
		await runMessaging(sandbox, mappedSendText(), orderItems(2));
		return sent() > 2 ? 'yes' : 'no';
	},
	'Two executions of the same event at once': async () => {
		const call = { incident: 7, text: 'db1 is DOWN' };
		await Promise.all([
			runAfterEvent(sandbox, WEBHOOK, webhookCall(call, 'a'), alert),
			runAfterEvent(sandbox, WEBHOOK, webhookCall(call, 'b'), alert),
		]);
		return sent() > 1 ? 'yes' : 'no';
	},
	'The same webhook call delivered again, its JSON in another key order': async () => {
		await runAfterEvent(
			sandbox,
			WEBHOOK,
			webhookCall({ incident: 3, text: 'db1 is DOWN' }, 'a'),
			alert,
		);
		await runAfterEvent(
			sandbox,
			WEBHOOK,
			webhookCall({ text: 'db1 is DOWN', incident: 3 }, 'b'),
			alert,
		);
		return sent() > 1 ? 'yes' : 'no';
	},
	'A webhook called twice with no body or query': async () => {
		const ping = { ...alert, text: 'Someone rang the bell' };
		await runAfterEvent(sandbox, WEBHOOK, webhookCall({}, 'a'), ping);
		await runAfterEvent(sandbox, WEBHOOK, webhookCall({}, 'a'), ping);
		return sent() > 1 ? 'yes' : 'no';
	},
	'A chat message typed twice, same answer': async () => {
		const chat = (id: string) => [
			{ json: { sessionId: 'visitor-1', action: 'sendMessage', chatInput: id } },
		];
		const answer = { ...alert, text: 'An agent will call you back' };
		await runAfterEvent(sandbox, CHAT_TRIGGER, chat('help'), answer);
		await runAfterEvent(sandbox, CHAT_TRIGGER, chat('help'), answer);
		return sent() > 1 ? 'yes' : 'no';
	},
	'A reminder every 4 hours from a schedule, same text': async () => {
		const remind = { ...alert, text: 'Time to take your pills' };
		const start = Date.UTC(2026, 10, 23, 7);
		await runAfterEvent(sandbox, SCHEDULE, [{ json: {} }], remind);
		jest.spyOn(clock, 'now').mockReturnValue(start + 4 * HOUR);
		await runAfterEvent(sandbox, SCHEDULE, [{ json: {} }], remind);
		return sent() > 1 ? 'yes' : 'no';
	},
	'A loop sending the same message on each pass': async () => {
		const ping = { phone: PHONE, text: 'ping' };
		const run = await runWorkflow(
			loopWorkflow([ping, ping], mappedSendText()),
			sandboxCredential(sandbox.url),
		);
		expect(run.run.data.resultData.runData.Node).toHaveLength(2);
		return sent() > 1 ? 'yes' : 'no';
	},
	'A sub-workflow called twice with the same data': async () => {
		const call = [{ json: { phone: PHONE, text: 'Your code is 1234' } }];
		await runAfterEvent(sandbox, SUB_WORKFLOW, call, mappedSendText());
		const second = await runAfterEvent(sandbox, SUB_WORKFLOW, call, mappedSendText());
		expect(outputOf(second)[0].json.skipped).toBe(true);
		return sent() > 1 ? 'yes' : 'no';
	},
	'A reply to a new inbound message without a message id (an older gateway), same reply text':
		async () => {
			const withoutId = async (text: string) => {
				const { executions } = await trigger.deliver({
					rawBody: JSON.stringify({ params: { sender: TRIGGER_CUSTOMER, message: text } }),
				});
				expect(executions).toHaveLength(1);
				expect(executions[0].triggerItems[0].json.messageId).toBe('');
				return executions[0].triggerItems;
			};
			await runAfterEvent(sandbox, MESSAGING_TRIGGER, await withoutId('Hi'), reply);
			await runAfterEvent(sandbox, MESSAGING_TRIGGER, await withoutId('Hi'), reply);
			return sent() > 1 ? 'yes' : 'no';
		},
	'A queue-mode worker died mid-run, the run is repeated': async () => {
		// Real workers are killed in test/n8n/queue.ts; here its check is only found by name.
		const queue = readFileSync(join(__dirname, '../../../n8n/queue.ts'), 'utf8');
		expect(queue).toContain('a worker killed while it sends 200 items');
		return 'no';
	},
	'A reply to a new inbound message, same reply text': async () => {
		await runAfterEvent(sandbox, MESSAGING_TRIGGER, await inbound('Do you open on Sunday?'), reply);
		await runAfterEvent(sandbox, MESSAGING_TRIGGER, await inbound('And on Monday?'), reply);
		return sent() > 1 ? 'yes' : 'no';
	},
	'The same inbound message delivered again': async () => {
		const items = await inbound('Do you open on Sunday?');
		await runAfterEvent(sandbox, MESSAGING_TRIGGER, items, reply);
		// Another process took the redelivery: the same message id, received later.
		const again = items.map((item) => ({
			...item,
			json: { ...item.json, receivedAt: new Date(Date.now() + 60_000).toISOString() },
		}));
		const second = await runAfterEvent(sandbox, MESSAGING_TRIGGER, again, reply);
		expect(outputOf(second)[0].json.skipped).toBe(true);
		return sent() > 1 ? 'yes' : 'no';
	},
	'An alert for a new incident, same text': async () => {
		await runAfterEvent(
			sandbox,
			WEBHOOK,
			webhookCall({ incident: 1, text: 'db1 is DOWN' }, 'a'),
			alert,
		);
		await runAfterEvent(
			sandbox,
			WEBHOOK,
			webhookCall({ incident: 2, text: 'db1 is DOWN' }, 'b'),
			alert,
		);
		return sent() > 1 ? 'yes' : 'no';
	},
	'A daily message with the same text': async () => {
		const start = Date.UTC(2026, 10, 23, 7);
		jest.spyOn(clock, 'now').mockReturnValue(start);
		await runMessaging(sandbox, mappedSendText(), orderItems(1));
		jest.spyOn(clock, 'now').mockReturnValue(start + 24 * HOUR);
		await runMessaging(sandbox, mappedSendText(), orderItems(1));
		jest.restoreAllMocks();
		return sent() > 1 ? 'yes' : 'no';
	},
	'Idempotency Key set, same key': async () => {
		const options = { idempotencyKey: '={{ $json.orderId }}' };
		await runMessaging(sandbox, mappedSendText(options), [
			{ phone: PHONE, text: 'Shipped', orderId: 4 },
		]);
		await runMessaging(sandbox, mappedSendText(options), [
			{ phone: PHONE, text: 'Shipped!', orderId: 4 },
		]);
		return sent() > 1 ? 'yes' : 'no';
	},
};

function docsTable(): Array<[string, string]> {
	const docs = readFileSync(join(__dirname, '../../../../docs/delivery-and-scale.md'), 'utf8');
	const table = docs.split('<!-- repeats-table')[1].split('<!-- /repeats-table -->')[0];
	return table
		.split('\n')
		.filter((line) => line.startsWith('| ') && !line.startsWith('| Situation'))
		.map((line) => line.split('|').map((cell) => cell.trim()))
		.map((cells) => [cells[1], cells[2]]);
}

describe('the table in docs/delivery-and-scale.md holds, row by row', () => {
	it('every row has a run here and every run a row', () => {
		expect(
			docsTable()
				.map(([situation]) => situation)
				.sort(),
		).toEqual(Object.keys(situations).sort());
	});

	it.each(docsTable())('%s: sent again? %s', async (situation, wanted) => {
		expect(await situations[situation]()).toBe(wanted);
	});
});

describe('a chatbot and an alert with the same words', () => {
	it('two inbound messages answered with the same text: two replies, each paired with its message', async () => {
		const first = await runAfterEvent(sandbox, MESSAGING_TRIGGER, await inbound('Hi'), reply);
		const second = await runAfterEvent(sandbox, MESSAGING_TRIGGER, await inbound('Hello?'), reply);
		expect([outputOf(first)[0].json.sent, outputOf(second)[0].json.sent]).toEqual([true, true]);
		expect(sandbox.ledger().map((entry) => [entry.phone, entry.text])).toEqual([
			[TRIGGER_CUSTOMER, 'Thanks, we got your message'],
			[TRIGGER_CUSTOMER, 'Thanks, we got your message'],
		]);
	});

	it('two inbound messages the gateway gave no id: each is its own event, and each is answered', async () => {
		const noId = async (message: string) => {
			const { executions } = await trigger.deliver({ sender: TRIGGER_CUSTOMER, message, uuid: '' });
			expect(executions[0].triggerItems[0].json.messageId).toBe('');
			return executions[0].triggerItems;
		};
		await runAfterEvent(sandbox, MESSAGING_TRIGGER, await noId('Hi'), reply);
		await runAfterEvent(sandbox, MESSAGING_TRIGGER, await noId('Hello?'), reply);
		expect(sent()).toBe(2);
	});

	it("a webhook's redelivery (other headers, the same body) is skipped and says which execution sent it", async () => {
		const call = { incident: 9, text: 'db1 is DOWN' };
		await runAfterEvent(sandbox, WEBHOOK, webhookCall(call, 'first'), alert);
		const again = await runAfterEvent(sandbox, WEBHOOK, webhookCall(call, 'retried'), alert);
		expect(outputOf(again)[0].json).toMatchObject({
			skipped: true,
			reason: expect.stringMatching(
				/^Not sent again: the same message was sent by execution event-\d+/,
			),
		});
		expect(sent()).toBe(1);
	});

	it.each([
		['a GET webhook that carries only its query (?order=41)', 'query'],
		['a webhook whose path names the order (/orders/:order)', 'params'],
	])('%s: the same call again is skipped, another order is sent', async (_shape, part) => {
		const call = (order: string, requestId: string) =>
			webhookCall({}, requestId).map((item) => ({ json: { ...item.json, [part]: { order } } }));
		const ring = { ...alert, text: `=Order {{ $json.${part}.order }} is at the door` };
		await runAfterEvent(sandbox, WEBHOOK, call('41', 'first'), ring);
		const again = await runAfterEvent(sandbox, WEBHOOK, call('41', 'retried'), ring);
		expect(outputOf(again)[0].json).toMatchObject({ skipped: true });
		await runAfterEvent(sandbox, WEBHOOK, call('42', 'next'), ring);
		expect(texts()).toEqual(['Order 41 is at the door', 'Order 42 is at the door']);
	});

	it.each([
		['a field that is null', { incident: 9, resolvedAt: null }],
		['a bare number', 9],
	])("a webhook's redelivery of a body with %s is skipped", async (_shape, body) => {
		const ring = { ...alert, text: 'Incident 9 changed' };
		await runAfterEvent(sandbox, WEBHOOK, webhookCall(body as never, 'first'), ring);
		await runAfterEvent(sandbox, WEBHOOK, webhookCall(body as never, 'retried'), ring);
		expect(sent()).toBe(1);
	});

	it('a bell: a webhook called with an empty text body or none at all sends on every call', async () => {
		const ring = { ...alert, text: 'Someone rang the bell' };
		for (const body of ['', null, '', null])
			await runAfterEvent(sandbox, WEBHOOK, webhookCall(body as never, 'same'), ring);
		expect(sent()).toBe(4);
	});

	it('rows with the same words to one number, from one manual run, are each sent: each row is its own event', async () => {
		const rows = [1, 2].map((order) => ({ phone: PHONE, text: 'Your order shipped', order }));
		const run = await runMessaging(sandbox, mappedSendText(), rows);
		expect(run.output('Node').map((item) => item.json.sent)).toEqual([true, true]);
		const again = await runMessaging(sandbox, mappedSendText(), rows);
		expect(again.output('Node').map((item) => item.json.skipped)).toEqual([true, true]);
	});

	it('a schedule with a node between it and the send: each firing is its own event', async () => {
		const remind = { ...alert, text: 'Time to take your pills' };
		const start = Date.UTC(2026, 10, 23, 7);
		jest.spyOn(clock, 'now').mockReturnValue(start);
		await runAfterEvent(sandbox, SCHEDULE, [{ json: {} }], remind, undefined, {
			between: true,
		});
		jest.spyOn(clock, 'now').mockReturnValue(start + 4 * HOUR);
		const second = await runAfterEvent(sandbox, SCHEDULE, [{ json: {} }], remind, undefined, {
			between: true,
		});
		expect(outputOf(second)[0].json.sent).toBe(true);
		expect(sent()).toBe(2);
	});

	it('two webhook calls that differ only in a number are two events', async () => {
		const ring = { ...alert, text: 'A new order came in' };
		await runAfterEvent(sandbox, WEBHOOK, webhookCall({ orderId: 41 }, 'first'), ring);
		await runAfterEvent(sandbox, WEBHOOK, webhookCall({ orderId: 42 }, 'next'), ring);
		expect(sent()).toBe(2);
	});

	describe('a node between the schedule and the send, and what its items say of their pairing', () => {
		const remind = { ...alert, text: '={{ $json.text }}' };
		const start = Date.UTC(2026, 10, 23, 7);
		/** Two firings, four hours apart, each read through a node that emits `emitted`. */
		const fireTwice = async (emitted: object[]) => {
			const runs = [];
			for (const at of [start, start + 4 * HOUR]) {
				jest.spyOn(clock, 'now').mockReturnValue(at);
				const event = [{ json: { firing: 'a' } }, { json: { firing: 'b' } }];
				const between = emitted as INodeExecutionData[];
				runs.push(await runAfterEvent(sandbox, SCHEDULE, event, remind, undefined, { between }));
			}
			return runs.map((run) => outputOf(run).map((item) => item.json));
		};
		const pill = (text: string, pairedItem: unknown) => ({ json: { text }, pairedItem });

		/** A pairing that names where its item came from (as n8n's Loop Over Items writes it). */
		const from = (source: object) => ({
			item: 0,
			sourceOverwrite: { previousNode: 'Event', ...source },
		});

		it.each([
			['written as a number', 1],
			['naming the event node', from({ previousNodeRun: 0, previousNodeOutput: 0 })],
		])('a pairing %s is followed: each firing is its own event', async (_shape, paired) => {
			const [first, second] = await fireTwice([pill('Take your pills', paired)]);
			expect([...first, ...second].map((json) => json.sent)).toEqual([true, true]);
		});

		it.each([
			// Three items from two: n8n cannot pair them itself.
			['no pairing', [null, null, null]],
			['a pairing to an item that is not there', [{ item: 5 }]],
			['a pairing to a node that did not run', [from({ previousNode: 'Nowhere' })]],
			['a pairing to a run that is not there', [from({ previousNodeRun: 1 })]],
			['a pairing to an output that is not there', [from({ previousNodeOutput: 3 })]],
			['a pairing that leads back to itself', [from({ previousNode: 'Items' })]],
		])('%s: the lineage is lost, so the words alone make the message', async (_shape, paired) => {
			const emitted = paired.map((pairedItem, i) => pill(`Take pill ${i}`, pairedItem));
			const [first, second] = await fireTwice(emitted);
			expect(first.map((json) => json.sent)).toEqual(paired.map(() => true));
			expect(second.map((json) => json.skipped)).toEqual(paired.map(() => true));
			expect(sent()).toBe(paired.length);
		});
	});

	it('text that differs only in Unicode form or surrounding white space is the same message', async () => {
		const typed = (text: string) => ({
			resource: 'message',
			operation: 'sendText',
			phone: PHONE,
			text,
		});
		await runMessaging(sandbox, typed('Caf\u00e9 is open'), [{}]);
		const again = await runMessaging(sandbox, typed('Cafe\u0301 is open  \n'), [{}]);
		expect(again.output('Node')[0].json.skipped).toBe(true);
		expect(sent()).toBe(1);
	});
});

describe('the key', () => {
	it("cannot confirm a guess of the content without the credential's secret (a login code)", async () => {
		const code = (n: number) => `Your login code is ${String(n).padStart(6, '0')}`;
		await runMessaging(sandbox, mappedSendText(), [{ phone: PHONE, text: code(41337) }]);
		const again = await runMessaging(sandbox, mappedSendText(), [
			{ phone: PHONE, text: code(41337) },
		]);
		const key = again.output('Node')[0].json.idempotencyKey as string;
		expect(key).toMatch(/^[0-9a-f]{32}$/);
		// What someone holding n8n's database knows: the parts and the form; they guess the code.
		const cause = createHash('sha256')
			.update(JSON.stringify({ phone: PHONE, text: code(41337) }))
			.digest('hex');
		const guesses = Array.from({ length: 2000 }, (_, i) => code(40000 + i)).flatMap((text) =>
			[[text], [text, cause], [text, null]].flatMap((what) =>
				['v1', 'v2'].map((v) =>
					createHash('sha256')
						.update(
							JSON.stringify([
								v,
								'sendText',
								sandbox.url,
								'demo-client',
								PHONE,
								'content',
								...what,
							]),
						)
						.digest('hex')
						.slice(0, 32),
				),
			),
		);
		expect(guesses).not.toContain(key);
	});
});
