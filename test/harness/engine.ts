/**
 * Runs a workflow (the same JSON a user imports) through n8n's real execution engine,
 * n8n-core's `WorkflowExecute`, with this package's nodes and a credential pointing at a
 * sandbox. No fake `this`: nodes get n8n's own execute functions, parameter resolution,
 * expression evaluation, continueOnFail handling and pairedItem checks.
 */
import { Container } from '@n8n/di';
import {
	BinaryDataConfig,
	BinaryDataService,
	ExecutionLifecycleHooks,
	WorkflowExecute,
} from 'n8n-core';
import type { Readable } from 'stream';
import {
	ICredentialsHelper,
	NodeHelpers,
	Workflow,
	createRunExecutionData,
	type ICredentialDataDecryptedObject,
	type ICredentials,
	type IBinaryData,
	type IDataObject,
	type INode,
	type INodeExecutionData,
	type INodeParameters,
	type INodeProperties,
	type INodeType,
	type INodeTypes,
	type IRun,
	type IRunExecutionData,
	type ISourceData,
	type IVersionedNodeType,
	type IWorkflowBase,
	type IWebhookResponseData,
	type IWorkflowExecuteAdditionalData,
	type IConnections,
	type WorkflowExecuteMode,
} from 'n8n-workflow';

import { CurrencyRate } from '../../nodes/CurrencyRate/CurrencyRate.node';
import { CurrencyRateTrigger } from '../../nodes/CurrencyRateTrigger/CurrencyRateTrigger.node';
import { Messaging } from '../../nodes/Messaging/Messaging.node';
import { MessagingAccountTrigger } from '../../nodes/MessagingAccountTrigger/MessagingAccountTrigger.node';
import { MessagingTrigger } from '../../nodes/MessagingTrigger/MessagingTrigger.node';
// n8n's processed-items store, installed into n8n-core for every engine run of this test file.
import './processedItems';

export const PACKAGE = 'n8n-nodes-messaging-rate';

class ManualTrigger implements INodeType {
	description = {
		displayName: 'Manual Trigger',
		name: 'n8n-nodes-base.manualTrigger',
		group: ['trigger'],
		version: 1,
		description: 'Start',
		defaults: { name: 'When clicking "Execute workflow"' },
		inputs: [],
		outputs: ['main'],
		properties: [] as INodeProperties[],
	} as unknown as INodeType['description'];

	async execute(this: import('n8n-workflow').IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [this.getInputData()];
	}
}

/**
 * Emits the items given in its `items` parameter (JSON array), so a test can feed any input.
 * Binary items: `{ "json": {...}, "binary": {...} }` entries are passed through as they are, paired
 * to the first input item unless they give `pairedItem` (null: none).
 */
class TestItems implements INodeType {
	description = {
		displayName: 'Test Items',
		name: 'test.items',
		group: ['transform'],
		version: 1,
		description: 'Emits fixed items',
		defaults: { name: 'Items' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [
			{ displayName: 'Items', name: 'items', type: 'json', default: '[]' },
		] as INodeProperties[],
	} as unknown as INodeType['description'];

	async execute(this: import('n8n-workflow').IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const raw = this.getNodeParameter('items', 0) as string | IDataObject[];
		const list = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<
			IDataObject | INodeExecutionData
		>;
		return [
			list.map((entry) => {
				if (!('json' in entry && typeof entry.json === 'object'))
					return { json: entry as IDataObject, pairedItem: { item: 0 } };
				// An entry that names its pairing keeps it; null stands for none (a node that drops it).
				if (!('pairedItem' in entry))
					return { ...(entry as INodeExecutionData), pairedItem: { item: 0 } };
				const { pairedItem, ...rest } = entry as INodeExecutionData;
				return pairedItem === null ? rest : { ...rest, pairedItem };
			}),
		];
	}
}

/**
 * Stands in for n8n's Send Email (n8n-nodes-base, not a dependency here): no mail leaves the
 * engine; each item's message, as n8n's node would build it from its parameters, becomes the
 * output, with the binary fields it would attach.
 */
class EmailStandIn implements INodeType {
	description = {
		displayName: 'Send Email (stand-in)',
		name: 'n8n-nodes-base.emailSend',
		group: ['output'],
		version: [2, 2.1],
		description: 'Shows the email it would send',
		defaults: { name: 'Send Email' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [
			{ displayName: 'From', name: 'fromEmail', type: 'string', default: '' },
			{ displayName: 'To', name: 'toEmail', type: 'string', default: '' },
			{ displayName: 'Subject', name: 'subject', type: 'string', default: '' },
			{ displayName: 'Format', name: 'emailFormat', type: 'string', default: 'text' },
			{ displayName: 'Text', name: 'text', type: 'string', default: '' },
			{ displayName: 'HTML', name: 'html', type: 'string', default: '' },
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				default: {},
				options: [
					{ displayName: 'Attachments', name: 'attachments', type: 'string', default: '' },
					{ displayName: 'Attribution', name: 'appendAttribution', type: 'boolean', default: true },
				],
			},
		] as INodeProperties[],
	} as unknown as INodeType['description'];

	async execute(this: import('n8n-workflow').IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [
			this.getInputData().map((item, itemIndex) => {
				const text = (name: string) => String(this.getNodeParameter(name, itemIndex, ''));
				const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
				const attachments = String(options.attachments ?? '')
					.split(',')
					.map((name) => name.trim())
					.filter((name) => name !== '');
				for (const name of attachments) this.helpers.assertBinaryData(itemIndex, name);
				return {
					json: {
						from: text('fromEmail'),
						to: text('toEmail'),
						subject: text('subject'),
						[text('emailFormat') === 'html' ? 'html' : 'text']: text(
							text('emailFormat') === 'html' ? 'html' : 'text',
						),
						attachments,
					},
					binary: item.binary,
					pairedItem: { item: itemIndex },
				};
			}),
		];
	}
}

/** Stands in for n8n's Webhook trigger: started by a call, it hands on the items it was given. */
class WebhookStandIn implements INodeType {
	description = {
		displayName: 'Webhook (stand-in)',
		name: 'n8n-nodes-base.webhook',
		group: ['trigger'],
		version: 2,
		description: 'Starts the workflow on a call',
		defaults: { name: 'Webhook' },
		inputs: [],
		outputs: ['main'],
		webhooks: [],
		properties: [] as INodeProperties[],
	} as unknown as INodeType['description'];

	async webhook(): Promise<IWebhookResponseData> {
		return { noWebhookResponse: true };
	}
}

/**
 * Stands in for n8n's Loop Over Items (Split in Batches v3) with a batch size of 1, as its code
 * does it: the first run keeps the items and its source in the node's context and hands on the
 * first item (output 1, "loop"); each later run (fed back by the loop's last node) hands on the
 * next one, its lineage pointed at the first run's source; when none is left, everything the loop
 * gave back goes to output 0, "done".
 */
class LoopStandIn implements INodeType {
	description = {
		displayName: 'Loop Over Items (stand-in)',
		name: 'n8n-nodes-base.splitInBatches',
		group: ['organization'],
		version: 3,
		description: 'One item per pass',
		defaults: { name: 'Loop Over Items' },
		inputs: ['main'],
		outputs: ['main', 'main'],
		outputNames: ['done', 'loop'],
		properties: [] as INodeProperties[],
	} as unknown as INodeType['description'];

	async execute(this: import('n8n-workflow').IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const input = this.getInputData().slice();
		const context = this.getContext('node') as {
			items?: INodeExecutionData[];
			source?: ISourceData;
			processed: INodeExecutionData[];
		};
		let next: INodeExecutionData | undefined;
		if (context.items === undefined) {
			context.source = JSON.parse(JSON.stringify(this.getInputSourceData())) as ISourceData;
			next = input.shift();
			context.items = input;
			context.processed = [];
		} else {
			const source = this.getInputSourceData();
			context.processed.push(
				...input.map((item, index) => ({
					...item,
					pairedItem: { item: index, sourceOverwrite: source },
				})),
			);
			next = context.items.shift();
			if (next) {
				const paired = typeof next.pairedItem === 'object' ? next.pairedItem : { item: 0 };
				next = {
					...next,
					pairedItem: { ...(paired as object), sourceOverwrite: context.source },
				} as INodeExecutionData;
			}
		}
		if (!next) return [context.processed, []];
		return [[], [next]];
	}
}

export const RECEIVED_NAME = 'Received';

/** Passes its input on, so a test sees what a trigger handed to the next node. */
export class Received implements INodeType {
	description = {
		displayName: 'Received',
		name: 'test.received',
		group: ['transform'],
		version: 1,
		description: 'Passes items on',
		defaults: { name: RECEIVED_NAME },
		inputs: ['main'],
		outputs: ['main'],
		properties: [] as INodeProperties[],
	} as unknown as INodeType['description'];

	async execute(this: import('n8n-workflow').IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [this.getInputData()];
	}
}

/**
 * The tool variant n8n makes of a node with `usableAsTool` (its `<name>Tool` type, as
 * convertNodeToAiTool names it: the `@tool` display option and the node's own check see it),
 * but with a main input and output: here a test's input item stands for the model's tool-call
 * arguments, which `$fromAI()` reads (n8n hands them to the tool node the same way).
 */
function toolVariant(node: INodeType): INodeType {
	const description = {
		...node.description,
		name: `${node.description.name}Tool`,
		displayName: `${node.description.displayName} Tool`,
	};
	delete description.usableAsTool;
	return Object.assign(Object.create(Object.getPrototypeOf(node) as object) as INodeType, node, {
		description,
	});
}

const nodeClasses: Record<string, INodeType | IVersionedNodeType> = {
	[`${PACKAGE}.messaging`]: new Messaging(),
	[`${PACKAGE}.currencyRate`]: new CurrencyRate(),
	[`${PACKAGE}.messagingTrigger`]: new MessagingTrigger(),
	[`${PACKAGE}.currencyRateTrigger`]: new CurrencyRateTrigger(),
	[`${PACKAGE}.messagingAccountTrigger`]: new MessagingAccountTrigger(),
	[`${PACKAGE}.messagingTool`]: toolVariant(new Messaging()),
	[`${PACKAGE}.currencyRateTool`]: toolVariant(new CurrencyRate()),
	'test.received': new Received(),
	'n8n-nodes-base.manualTrigger': new ManualTrigger(),
	// The example workflows start on a schedule; in the engine the schedule "fires" once, now.
	'n8n-nodes-base.scheduleTrigger': new ManualTrigger(),
	'n8n-nodes-base.emailSend': new EmailStandIn(),
	'test.items': new TestItems(),
	'n8n-nodes-base.webhook': new WebhookStandIn(),
	// Triggers that hand on what they were given, as n8n runs them once started.
	'n8n-nodes-base.executeWorkflowTrigger': new ManualTrigger(),
	'@n8n/n8n-nodes-langchain.chatTrigger': new ManualTrigger(),
	'n8n-nodes-base.splitInBatches': new LoopStandIn(),
};

export const nodeTypes: INodeTypes = {
	getByName: (name) => lookup(name),
	getByNameAndVersion: (name, version) => NodeHelpers.getVersionedNodeType(lookup(name), version),
	getKnownTypes: () => ({}),
};

function lookup(name: string): INodeType | IVersionedNodeType {
	const type = nodeClasses[name];
	if (!type) throw new Error(`Unknown node type in test workflow: ${name}`);
	return type;
}

/** Hands the engine the test's plain credential data (n8n would decrypt it from its database). */
export class TestCredentialsHelper extends ICredentialsHelper {
	constructor(private readonly credentials: Record<string, ICredentialDataDecryptedObject>) {
		super();
	}

	getParentTypes(): string[] {
		return [];
	}

	isCredentialUsableByNode(): boolean {
		return true;
	}

	async authenticate(
		_c: ICredentialDataDecryptedObject,
		_t: string,
		requestOptions: never,
	): Promise<never> {
		return requestOptions;
	}

	async preAuthentication(): Promise<undefined> {
		return undefined;
	}

	async runPreAuthentication(): Promise<undefined> {
		return undefined;
	}

	async getCredentials(): Promise<ICredentials> {
		throw new Error('not used by these nodes');
	}

	async getDecrypted(
		_a: unknown,
		_n: unknown,
		type: string,
	): Promise<ICredentialDataDecryptedObject> {
		const data = this.credentials[type];
		if (!data) throw new Error(`No test credential of type ${type}`);
		return data;
	}

	async updateCredentials(): Promise<void> {}

	async updateCredentialsOauthTokenData(): Promise<void> {}

	getCredentialsProperties(): INodeProperties[] {
		return [];
	}
}

export interface WorkflowJson {
	name?: string;
	nodes: INode[];
	connections: IConnections;
	settings?: IDataObject;
}

export interface EngineRun {
	run: IRun;
	/** Output items of a node's first output of its last run (empty array if it did not run). */
	output(nodeName: string, outputIndex?: number): INodeExecutionData[];
	/** The error the execution stopped with, if any. */
	error?: Error & { description?: string | null; context?: IDataObject };
}

let executionCounter = 0;

/** Optional settings of a run: where it starts, and observers (benchmarks measure one node with them). */
export interface RunHooks {
	/** Node to start from (default: n8n's start node). Examples with two triggers start at "Run Now". */
	startNode?: string;
	/** Items the start node receives (default: one empty item); not JSON-serialised, so any value passes. */
	startItems?: INodeExecutionData[];
	onNodeExecuteBefore?: (nodeName: string) => void | Promise<void>;
	onNodeExecuteAfter?: (nodeName: string) => void | Promise<void>;
	/**
	 * The workflow's id (default `test-workflow`); null: none, as a workflow n8n's processed-items
	 * store cannot hold anything for (what nodes see on an n8n without that store).
	 */
	workflowId?: string | null;
	/**
	 * n8n's Stop (what the editor's Stop button does) as soon as this is true, checked every few
	 * milliseconds while the run lasts and no longer (a check left behind would outlive the test).
	 */
	stopWhen?: () => boolean;
	/** n8n's Retry of this failed execution: a new execution that goes on from its failed node. */
	retryOf?: IRun;
}

/**
 * What n8n's Retry of a failed execution runs (n8n's ExecutionService.retry): the execution's
 * stored data (here through JSON, as through n8n's database) without its error and without the
 * failed node's failed run; its stack still holds the failed node with its input.
 */
function retryData(failed: IRun): IRunExecutionData {
	const data = JSON.parse(JSON.stringify(failed.data)) as IRunExecutionData;
	delete data.resultData.error;
	const last = data.resultData.lastNodeExecuted;
	const runs = last ? data.resultData.runData[last] : undefined;
	if (runs?.length && runs[runs.length - 1].error !== undefined) runs.pop();
	return data;
}

/** Runs `workflow` from its first node without inputs (a manual run) and collects the result. */
export async function runWorkflow(
	workflow: WorkflowJson,
	credentials: Record<string, ICredentialDataDecryptedObject>,
	runHooks: RunHooks = {},
): Promise<EngineRun> {
	const executionId = `test-${++executionCounter}`;
	const workflowId =
		runHooks.workflowId === null ? undefined : (runHooks.workflowId ?? 'test-workflow');
	const wf = new Workflow({
		id: workflowId,
		name: workflow.name ?? 'test',
		nodes: workflow.nodes,
		connections: workflow.connections,
		nodeTypes,
		active: false,
		settings: workflow.settings ?? {},
	});
	const workflowData = {
		id: workflowId,
		name: workflow.name ?? 'test',
		nodes: workflow.nodes,
		connections: workflow.connections,
		active: false,
		settings: workflow.settings ?? {},
		createdAt: new Date(),
		updatedAt: new Date(),
	} as unknown as IWorkflowBase;

	let finished: IRun | undefined;
	const mode: WorkflowExecuteMode = runHooks.retryOf ? 'retry' : 'manual';
	const hooks = new ExecutionLifecycleHooks(mode, executionId, workflowData);
	hooks.addHandler('workflowExecuteAfter', (run) => {
		finished = run;
	});
	const { onNodeExecuteBefore, onNodeExecuteAfter } = runHooks;
	if (onNodeExecuteBefore)
		hooks.addHandler('nodeExecuteBefore', async (nodeName) => await onNodeExecuteBefore(nodeName));
	if (onNodeExecuteAfter)
		hooks.addHandler('nodeExecuteAfter', async (nodeName) => await onNodeExecuteAfter(nodeName));
	const additionalData = {
		...baseAdditionalData(new TestCredentialsHelper(credentials)),
		executionId,
		hooks,
	} as IWorkflowExecuteAdditionalData;

	const start =
		(runHooks.startNode ? wf.getNode(runHooks.startNode) : wf.getStartNode()) ?? workflow.nodes[0];
	const runExecutionData = runHooks.retryOf
		? retryData(runHooks.retryOf)
		: createRunExecutionData({
				executionData: {
					nodeExecutionStack: [
						{ node: start, data: { main: [runHooks.startItems ?? [{ json: {} }]] }, source: null },
					],
				},
			});
	const execution = new WorkflowExecute(
		additionalData,
		mode,
		runExecutionData,
	).processRunExecutionData(wf);
	const stopCheck =
		runHooks.stopWhen &&
		setInterval(() => {
			if (!runHooks.stopWhen?.()) return;
			clearInterval(stopCheck);
			execution.cancel();
		}, 10);
	const run = await execution.finally(() => clearInterval(stopCheck));
	const result = finished ?? run;
	const runData = result.data.resultData.runData;
	return {
		run: result,
		error: result.data.resultData.error as EngineRun['error'],
		output(nodeName, outputIndex = 0) {
			const runs = runData[nodeName];
			if (!runs?.length) return [];
			return runs[runs.length - 1].data?.main?.[outputIndex] ?? [];
		},
	};
}

/** WorkflowExecuteAdditionalData.getBase, as far as these nodes use it (URLs under `baseUrl`). */
export function baseAdditionalData(
	credentialsHelper: ICredentialsHelper,
	baseUrl = 'http://localhost',
): IWorkflowExecuteAdditionalData {
	return {
		credentialsHelper,
		webhookBaseUrl: `${baseUrl}/webhook`,
		webhookTestBaseUrl: `${baseUrl}/webhook-test`,
		webhookWaitingBaseUrl: `${baseUrl}/webhook-waiting`,
		formWaitingBaseUrl: `${baseUrl}/form-waiting`,
		restApiUrl: `${baseUrl}/rest`,
		instanceBaseUrl: `${baseUrl}/`,
		currentNodeParameters: undefined,
		variables: {},
	} as unknown as IWorkflowExecuteAdditionalData;
}

/** The stored form of an active workflow, as n8n's lifecycle hooks and webhook helpers get it. */
export function workflowBase(workflow: Workflow): IWorkflowBase {
	return {
		id: workflow.id,
		name: workflow.name,
		nodes: Object.values(workflow.nodes),
		connections: workflow.connectionsBySourceNode,
		active: true,
		settings: {},
		createdAt: new Date(),
		updatedAt: new Date(),
	} as unknown as IWorkflowBase;
}

/**
 * WorkflowRunner for an execution a trigger started: the run begins at `node` with `data` (in
 * modes other than "manual" WorkflowExecute passes a trigger's or poll node's input through).
 */
export async function runFromNode(
	workflow: Workflow,
	node: INode,
	data: INodeExecutionData[][],
	mode: WorkflowExecuteMode,
	additionalData: IWorkflowExecuteAdditionalData,
	executionId: string,
	retryOf?: IRun,
): Promise<IRun> {
	let finished: IRun | undefined;
	const hooks = new ExecutionLifecycleHooks(mode, executionId, workflowBase(workflow));
	hooks.addHandler('workflowExecuteAfter', (run) => {
		finished = run;
	});
	const runExecutionData = retryOf
		? retryData(retryOf)
		: createRunExecutionData({
				executionData: { nodeExecutionStack: [{ node, data: { main: data }, source: null }] },
			});
	const returned = await new WorkflowExecute(
		{ ...additionalData, executionId, hooks },
		retryOf ? 'retry' : mode,
		runExecutionData,
	).processRunExecutionData(workflow);
	return finished ?? returned;
}

/** A two-node workflow: test items → one node of this package with the given parameters. */
export function singleNodeWorkflow(
	type: 'messaging' | 'currencyRate' | 'messagingTool' | 'currencyRateTool',
	parameters: INodeParameters,
	items: Array<IDataObject | INodeExecutionData> = [{}],
	settings: Partial<INode> = {},
): WorkflowJson {
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
				name: 'Node',
				type: `${PACKAGE}.${type}`,
				typeVersion: 1,
				position: [400, 0],
				parameters,
				credentials: { messagingRateApi: { id: 'cred-1', name: 'Sandbox' } },
				...settings,
			},
		],
		connections: {
			Start: { main: [[{ node: 'Items', type: 'main', index: 0 }]] },
			Items: { main: [[{ node: 'Node', type: 'main', index: 0 }]] },
		} as IConnections,
	};
}

/** The credential data for a sandbox (`messagingRateApi` fields). */
export function sandboxCredential(
	baseUrl: string,
	overrides: IDataObject = {},
): Record<string, ICredentialDataDecryptedObject> {
	return {
		messagingRateApi: {
			baseUrl,
			clientId: 'demo-client',
			clientSecret: 'demo-secret',
			bearerLifetimeMinutes: 60,
			timeoutSeconds: 10,
			ignoreSSLIssues: false,
			...overrides,
		},
	};
}

/**
 * Where n8n keeps binary data in this process, as n8n itself sets it up at start
 * (`N8N_DEFAULT_BINARY_DATA_MODE` + `N8N_BINARY_DATA_STORAGE_PATH`, then `BinaryDataService.init()`):
 * - `memory`: n8n's `default` mode, the file is base64 in `binary.data`;
 * - `filesystem`: files on disk under `storagePath`, items carry `binary.id` and nodes read them
 *   with `helpers.getBinaryStream(id)` / `getBinaryMetadata(id)`.
 * The setting is process-wide: a test file picks one per test (beforeEach) or per file.
 * Files stored in filesystem mode stay readable after switching back to memory mode.
 */
export async function setBinaryDataMode(
	mode: 'memory' | 'filesystem',
	storagePath?: string,
): Promise<void> {
	const config = Container.get(BinaryDataConfig);
	config.mode = mode === 'memory' ? 'default' : 'filesystem';
	if (storagePath) config.localStoragePath = storagePath;
	await Container.get(BinaryDataService).init();
}

/**
 * Stores a file the way an upstream node's `prepareBinaryData` does, in the current binary-data
 * mode, and returns the `IBinaryData` to put under an item's `binary` (memory mode: base64 in
 * `data`; filesystem mode: an `id`).
 */
export async function storeBinary(
	content: Buffer | Readable,
	meta: { fileName?: string; mimeType?: string } = {},
	executionId = 'test-input',
): Promise<IBinaryData> {
	const binary: IBinaryData = { data: '', mimeType: meta.mimeType ?? 'application/octet-stream' };
	if (meta.fileName) binary.fileName = meta.fileName;
	return await Container.get(BinaryDataService).store(
		{ type: 'execution', workflowId: 'test-workflow', executionId },
		content,
		binary,
	);
}
