/**
 * Shared by the Messaging engine tests: run the node against a sandbox, read what the sandbox
 * received, and read a QR code back out of a PNG.
 */
import {
	Workflow,
	type IDataObject,
	type INode,
	type INodeExecutionData,
	type INodeParameters,
	type IRun,
} from 'n8n-workflow';

import type { RequestLogEntry, Sandbox } from '../../sandbox/types';
import {
	TestCredentialsHelper,
	baseAdditionalData,
	nodeTypes,
	runFromNode,
	runWorkflow,
	sandboxCredential,
	setBinaryDataMode,
	singleNodeWorkflow,
	type EngineRun,
	type WorkflowJson,
} from './engine';

export { pngShowsQrOf } from './qrReader';

export const SECRET = 'demo-secret';
export const CLIENT_ID = 'demo-client';
export const DEFAULT_VERSION = '16.0.1.3';
/** "+62 812-8877-6713" as people paste it, and as the API wants it. */
export const PHONE_PASTED = '+62 812-8877-6713';
export const PHONE = '6281288776713';

export async function runMessaging(
	sandbox: Sandbox,
	parameters: INodeParameters,
	items: Array<IDataObject | INodeExecutionData> = [{}],
	settings: Partial<INode> = {},
): Promise<EngineRun> {
	return await runWorkflow(
		singleNodeWorkflow('messaging', parameters, items, settings),
		sandboxCredential(sandbox.url),
	);
}

/** Send Text with Phone Number and Text mapped from the item (`{{ $json.phone }}`, `{{ $json.text }}`). */
export function mappedSendText(options: INodeParameters = {}): INodeParameters {
	return {
		resource: 'message',
		operation: 'sendText',
		phone: '={{ $json.phone }}',
		text: '={{ $json.text }}',
		options,
	};
}

/** `count` items for `mappedSendText`: `Order <n> is ready` to PHONE, from `from` on. */
export function orderItems(count: number, from = 0): Array<{ phone: string; text: string }> {
	return Array.from({ length: count }, (_, i) => ({
		phone: PHONE,
		text: `Order ${from + i} is ready`,
	}));
}

/** Requests other than token requests, in the order they arrived. */
export function apiRequests(sandbox: Sandbox): RequestLogEntry[] {
	return sandbox
		.requests()
		.filter((entry) => entry.path !== '/api/wa/authentication')
		.sort((a, b) => a.seq - b.seq);
}

export function tokenRequests(sandbox: Sandbox): RequestLogEntry[] {
	return sandbox.requests().filter((entry) => entry.path === '/api/wa/authentication');
}

/** What a test asserts about one request: the wire facts, with the bearer as present/absent. */
export function wire(entry: RequestLogEntry): {
	method: string;
	path: string;
	bearer: boolean;
	params: unknown;
} {
	return {
		method: entry.method,
		path: entry.path,
		bearer: /^Bearer \S+$/.test(entry.authorization ?? ''),
		params: entry.params,
	};
}

/** One bad input of one operation, and what the user must be told. */
export interface BadInput {
	what: string;
	parameters: INodeParameters;
	/** Items, or a function making them (binaries must be stored in the mode under test first). */
	items?: Array<IDataObject | INodeExecutionData> | (() => Promise<INodeExecutionData[]>);
	/** Store binaries on disk (in `storagePath`) rather than in memory. */
	filesystem?: boolean;
	message: string;
	/** Words the "how to fix" description must hold. */
	fix: RegExp;
}

/** Runs a bad input: a clear error naming the field and the item, how to fix it, and nothing sent. */
export async function expectRefusedInput(
	sandbox: Sandbox,
	bad: BadInput,
	storagePath?: string,
): Promise<void> {
	if (bad.filesystem) await setBinaryDataMode('filesystem', storagePath);
	const items = typeof bad.items === 'function' ? await bad.items() : bad.items;
	const run = await runMessaging(sandbox, bad.parameters, items);
	expect(run.error?.message).toBe(bad.message);
	expect(run.error?.description).toMatch(bad.fix);
	expect(apiRequests(sandbox)).toEqual([]);
	expect(sandbox.ledger()).toEqual([]);
}

/** Sandbox options: the account is not connected and waits for a QR scan (the Session operations' tests). */
export const WAITING_FOR_SCAN = {
	accounts: [{ clientId: CLIENT_ID, clientSecret: SECRET, status: 'init' as const }],
};

/** The QR payload the gateway answered, from a Session operation's output. */
export function qrPayloadOf(json: Record<string, unknown>): string {
	return (json.response as { qrCode: string }).qrCode;
}

let eventExecutions = 0;

/**
 * An execution a trigger started, as n8n runs it: the trigger node (`eventType`, e.g. this
 * package's Messaging Trigger or n8n's Webhook) hands `eventItems` to a Messaging node.
 */
export async function runAfterEvent(
	sandbox: Sandbox,
	eventType: string,
	eventItems: INodeExecutionData[],
	parameters: INodeParameters,
	settings: Partial<INode> = { typeVersion: 1 },
	{
		retryOf,
		between = false,
	}: {
		/** n8n's Retry of this failed execution of the same workflow. */
		retryOf?: IRun;
		/**
		 * A node between the event and the Messaging node: one item, paired to the event's; or the
		 * items it emits, as `test.items` takes them.
		 */
		between?: boolean | INodeExecutionData[];
	} = {},
): Promise<IRun> {
	const betweenItems = Array.isArray(between) ? between : [{}];
	const { nodes, connections } = singleNodeWorkflow(
		'messaging',
		parameters,
		betweenItems,
		settings,
	);
	const event: INode = { ...nodes[0], name: 'Event', type: eventType, webhookId: 'event' };
	const workflow = new Workflow({
		id: 'event-workflow',
		nodes: between !== false ? [event, nodes[1], nodes[2]] : [event, nodes[2]],
		connections:
			between !== false
				? { Event: connections.Start, Items: connections.Items }
				: { Event: connections.Items },
		active: true,
		nodeTypes,
		settings: {},
	});
	const additionalData = baseAdditionalData(
		new TestCredentialsHelper(sandboxCredential(sandbox.url)),
	);
	return await runFromNode(
		workflow,
		event,
		[eventItems],
		'webhook',
		additionalData,
		`event-${++eventExecutions}`,
		retryOf,
	);
}

/** Manual Trigger → items → Loop Over Items → a Messaging node → back into the loop. */
export function loopWorkflow(items: object[], parameters: INodeParameters): WorkflowJson {
	return {
		nodes: [
			{
				id: '1',
				name: 'Start',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			{
				id: '2',
				name: 'Items',
				type: 'test.items',
				typeVersion: 1,
				position: [200, 0],
				parameters: { items: JSON.stringify(items) },
			},
			{
				id: '3',
				name: 'Loop',
				type: 'n8n-nodes-base.splitInBatches',
				typeVersion: 3,
				position: [400, 0],
				parameters: {},
			},
			{
				id: '4',
				name: 'Node',
				type: 'n8n-nodes-messaging-rate.messaging',
				typeVersion: 1,
				position: [600, 0],
				parameters,
				credentials: { messagingRateApi: { id: 'cred-1', name: 'Sandbox' } },
			},
		],
		connections: {
			Start: { main: [[{ node: 'Items', type: 'main', index: 0 }]] },
			Items: { main: [[{ node: 'Loop', type: 'main', index: 0 }]] },
			Loop: { main: [[], [{ node: 'Node', type: 'main', index: 0 }]] },
			Node: { main: [[{ node: 'Loop', type: 'main', index: 0 }]] },
		},
	};
}
