/**
 * Runs the Messaging Trigger the way n8n 2.x runs a webhook trigger, with n8n-core's real
 * contexts, over real HTTP on 127.0.0.1:
 *
 * - activation / deactivation: `webhookMethods.default.{checkExists, create, delete}` are called
 *   with n8n-core's `HookContext`, in the order and modes of n8n's ActiveWorkflowManager
 *   (`checkExists`, then `create` when it says false, mode "trigger"; `delete` with mode
 *   "internal", activation "update", on a workflow rebuilt from the saved static data; a failed
 *   activation runs `delete` too). Static data is saved between them like n8n saves it.
 *   "Listen for test event" (n8n's TestWebhooks) is there too: test URL, mode "manual", static
 *   data kept from `create` to `delete`.
 * - requests: a small `http` server plays n8n's webhook server. Each request gets n8n's
 *   `rawBodyReader` (`req.rawBody` / `req.readRawBody()`, gzip/deflate, the payload size limit)
 *   and `parseRequestBody` for a typeVersion-1 node (the body is read and, for
 *   `application/json`, parsed before the node runs; a parse failure is answered 422 by "n8n").
 *   Then the node's `webhook()` runs with n8n-core's real `WebhookContext`; its answer is written
 *   as n8n writes it (`webhookResponse` as JSON with the webhook's status, `noWebhookResponse`
 *   left to the node), and `workflowData` starts a real `WorkflowExecute` run of the workflow
 *   (trigger → "Received" pass-through node), whose result is recorded.
 * - static data as n8n 2.40.7 handles it: a production request reads the saved static data and
 *   saves it after the node answered (LiveWebhooks), unless the request started an execution (n8n
 *   then loses the change, see handle()); a test listener starts from empty static data and its requests use
 *   what `create` left, saving nothing (TestWebhooks). Each harness is its own workflow (own id)
 *   in an n8n process of its own (own trigger instance), unless told otherwise.
 * - what the node logs through its context's logger is recorded in `logs`.
 *
 * Not reproduced (n8n-core alone does not have them): express itself (the request is Node's
 * `IncomingMessage` with the fields n8n adds: `rawBody`, `readRawBody`, `contentType`,
 * `encoding`, `body`, `query`, `params`; the response is Node's `ServerResponse`), the fields of a
 * multipart body (its stream is read, as n8n reads it), XML body parsing, the webhook database and
 * execution storage.
 */
import { randomUUID } from 'crypto';
import http from 'http';
import type { AddressInfo } from 'net';
import { parse as parseQueryString } from 'querystring';
import type { Readable } from 'stream';
import { createGunzip, createInflate } from 'zlib';

import { ExecutionLifecycleHooks, HookContext, WebhookContext, WorkflowExecute } from 'n8n-core';
import {
	NodeHelpers,
	Workflow,
	createRunExecutionData,
	jsonParse,
	type ICredentialDataDecryptedObject,
	type IDataObject,
	type IHttpRequestMethods,
	type INode,
	type INodeExecutionData,
	type INodeParameters,
	type INodeType,
	type INodeTypes,
	type IRun,
	type IWebhookData,
	type IWebhookResponseData,
	type IWorkflowExecuteAdditionalData,
	type WebhookSetupMethodNames,
	type WorkflowActivateMode,
	type WorkflowExecuteMode,
} from 'n8n-workflow';

import { MessagingTrigger } from '../../nodes/MessagingTrigger/MessagingTrigger.node';
import {
	RECEIVED_NAME,
	Received,
	TestCredentialsHelper,
	baseAdditionalData,
	workflowBase,
} from './engine';

const TRIGGER_TYPE = 'n8n-nodes-messaging-rate.messagingTrigger';
const TRIGGER_NAME = 'Messaging Trigger';

/** The node types one n8n process loaded: one instance of each, kept for the process's life. */
function processNodeTypes(trigger: MessagingTrigger): INodeTypes {
	const nodeClasses: Record<string, INodeType> = {
		[TRIGGER_TYPE]: trigger,
		'test.received': new Received(),
	};
	const lookup = (name: string): INodeType => {
		const type = nodeClasses[name];
		if (!type) throw new Error(`Unknown node type in trigger test workflow: ${name}`);
		return type;
	};
	return {
		getByName: (name) => lookup(name),
		getByNameAndVersion: (name, version) => NodeHelpers.getVersionedNodeType(lookup(name), version),
		getKnownTypes: () => ({}),
	};
}

/** The request object as n8n's middlewares leave it (n8n-workflow declares these fields). */
type N8nRequest = http.IncomingMessage & {
	rawBody: Buffer;
	readRawBody(): Promise<void>;
	_body: boolean;
	contentType?: string;
	encoding: BufferEncoding;
	body?: unknown;
	query: Record<string, unknown>;
	params: Record<string, string>;
};

/** One HTTP request to a webhook URL and what came of it. */
export interface WebhookCall {
	url: string;
	status: number;
	/** The answer's body as text, and parsed when it was JSON. */
	text: string;
	json?: unknown;
	contentType?: string;
	/** Whether the node returned `workflowData`, i.e. an execution was started. */
	startedExecution: boolean;
}

export interface TriggerExecution {
	run: IRun;
	/** Items the trigger emitted. */
	triggerItems: INodeExecutionData[];
	/** Items the next node received. */
	receivedItems: INodeExecutionData[];
	error?: Error;
}

export interface TriggerHarnessOptions {
	parameters: INodeParameters;
	credentials: Record<string, ICredentialDataDecryptedObject>;
	/** n8n's N8N_PAYLOAD_SIZE_MAX in MiB; default 16, as in n8n. */
	payloadSizeMaxMb?: number;
	/** Static data the workflow starts with (as stored in n8n's database). */
	staticData?: IDataObject;
	/** The trigger node's typeVersion (default: the node's defaultVersion, what a new node gets). */
	typeVersion?: number;
	/**
	 * The workflow's id (default: one of its own). Two harnesses with the same id are one workflow
	 * served by two n8n processes (main and an `n8n webhook` process).
	 */
	workflowId?: string;
	/**
	 * The trigger as the n8n process serving this workflow loaded it (default: a new one, i.e. a
	 * process of its own). Harnesses given the same one are workflows of one process.
	 */
	process?: MessagingTrigger;
}

interface Listening {
	mode: 'production' | 'test';
	webhooks: IWebhookData[];
	/** Test webhooks: the static data `create` left, restored for `delete` (n8n does the same). */
	testStaticData?: IDataObject;
}

/** What the node logged through its context's logger (n8n writes it to its log). */
export interface LoggedLine {
	level: 'error' | 'warn' | 'info' | 'debug';
	message: string;
	meta?: unknown;
}

/**
 * n8n-core's contexts take their logger from the DI container on first use (memoized on the
 * instance); an own property set before that use replaces it, so the harness records the lines.
 */
function recordLogs(context: object, logs: LoggedLine[]): void {
	const line = (level: LoggedLine['level']) => (message: string, meta?: unknown) => {
		logs.push({ level, message, meta });
	};
	Object.defineProperty(context, 'logger', {
		value: { error: line('error'), warn: line('warn'), info: line('info'), debug: line('debug') },
		configurable: true,
	});
}

export class TriggerHarness {
	readonly calls: WebhookCall[] = [];
	/** Every line the trigger logged during activation, deactivation and requests. */
	readonly logs: LoggedLine[] = [];
	readonly executions: TriggerExecution[] = [];
	private readonly pending = new Set<Promise<unknown>>();
	private savedStaticData: IDataObject;
	private listening: Listening[] = [];
	private executionCounter = 0;
	/** Each harness is a workflow of its own, as two workflows in one n8n are (unless told otherwise). */
	readonly workflowId: string;
	private readonly node: INode;
	private readonly credentialsHelper: TestCredentialsHelper;
	private readonly payloadSizeMaxBytes: number;
	private readonly nodeTypes: INodeTypes;

	private constructor(
		private readonly server: http.Server,
		readonly baseUrl: string,
		options: TriggerHarnessOptions,
	) {
		this.node = {
			id: 'trigger-node',
			name: TRIGGER_NAME,
			type: TRIGGER_TYPE,
			typeVersion: options.typeVersion ?? defaultTriggerVersion(),
			position: [0, 0],
			parameters: options.parameters,
			credentials: { messagingRateApi: { id: 'cred-1', name: 'Sandbox' } },
			webhookId: randomUUID(),
		};
		this.workflowId = options.workflowId ?? `trigger-workflow-${randomUUID()}`;
		this.credentialsHelper = new TestCredentialsHelper(options.credentials);
		this.payloadSizeMaxBytes = (options.payloadSizeMaxMb ?? 16) * 1024 * 1024;
		this.savedStaticData = structuredClone(options.staticData ?? {});
		this.nodeTypes = processNodeTypes(options.process ?? new MessagingTrigger());
	}

	static async start(options: TriggerHarnessOptions): Promise<TriggerHarness> {
		// Requests reach the server only once its address is known, so after `harness` is set.
		const server = http.createServer((req, res) => {
			void harness.handle(req as N8nRequest, res);
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		const { port } = server.address() as AddressInfo;
		const harness = new TriggerHarness(server, `http://127.0.0.1:${port}`, options);
		return harness;
	}

	/** Whether the workflow is active (its production webhook listens). */
	get isActive(): boolean {
		return this.listening.some((entry) => entry.mode === 'production');
	}

	/** The production URL n8n would give this node (`<base>/webhook/<webhookId>/webhook`). */
	get productionUrl(): string {
		return `${this.baseUrl}/webhook/${this.node.webhookId}/webhook`;
	}

	get testUrl(): string {
		return `${this.baseUrl}/webhook-test/${this.node.webhookId}/webhook`;
	}

	/** The workflow's static data as n8n would have saved it in its database. */
	staticData(): IDataObject {
		return structuredClone(this.savedStaticData);
	}

	/** The trigger node's own static data (`getWorkflowStaticData('node')`). */
	nodeStaticData(): IDataObject {
		return (this.savedStaticData[`node:${TRIGGER_NAME}`] as IDataObject | undefined) ?? {};
	}

	/** Edits a node parameter, as a user editing the saved workflow would. */
	setParameters(parameters: INodeParameters): void {
		this.node.parameters = parameters;
	}

	/** Activating the workflow: ActiveWorkflowManager.addWebhooks. Returns whether `create` ran. */
	async activate(): Promise<{ created: boolean }> {
		const workflow = this.workflow(this.savedStaticData);
		const webhooks = this.webhooksOf(workflow, false);
		let created = false;
		try {
			for (const webhook of webhooks) {
				const exists = await this.runHook('checkExists', workflow, webhook, 'trigger', 'activate');
				if (!exists) {
					await this.runHook('create', workflow, webhook, 'trigger', 'activate');
					created = true;
				}
			}
		} catch (error) {
			// n8n clears the workflow's webhooks (runs `delete`) before it reports the failure.
			await this.clearWebhooks().catch(() => undefined);
			throw error;
		}
		this.saveStaticData(workflow);
		this.listening = [
			...this.listening.filter((entry) => entry.mode !== 'production'),
			{ mode: 'production', webhooks },
		];
		return { created };
	}

	/** What `checkExists` answers now (n8n asks it on every activation and start-up). */
	async checkExists(): Promise<boolean> {
		const workflow = this.workflow(this.savedStaticData);
		const [webhook] = this.webhooksOf(workflow, false);
		return (await this.runHook('checkExists', workflow, webhook, 'trigger', 'init')) === true;
	}

	/** Deactivating: ActiveWorkflowManager.clearWebhooks. Returns what `delete` answered. */
	async deactivate(): Promise<boolean | undefined> {
		this.listening = this.listening.filter((entry) => entry.mode !== 'production');
		return await this.clearWebhooks();
	}

	/** "Listen for test event" in the editor: TestWebhooks.needsWebhook. */
	async listenForTestEvent(): Promise<{ created: boolean }> {
		// TestWebhooks.toWorkflow builds the workflow with empty static data; what `create` leaves
		// there is cached with the registration and used for the test requests and for `delete`.
		const workflow = this.workflow({});
		const webhooks = this.webhooksOf(workflow, true);
		let created = false;
		for (const webhook of webhooks) {
			if (!(await this.runHook('checkExists', workflow, webhook, 'manual', 'manual'))) {
				await this.runHook('create', workflow, webhook, 'manual', 'manual');
				created = true;
			}
		}
		this.listening.push({ mode: 'test', webhooks, testStaticData: jsonClone(workflow.staticData) });
		return { created };
	}

	/** The test listener ends (event received, timeout or cancel): TestWebhooks.deactivateWebhooks. */
	async stopListeningForTestEvent(): Promise<boolean | undefined> {
		const entry = this.listening.find((candidate) => candidate.mode === 'test');
		if (!entry) return undefined;
		this.listening = this.listening.filter((candidate) => candidate !== entry);
		const workflow = this.workflow(entry.testStaticData ?? {});
		let answer: boolean | undefined;
		for (const webhook of this.webhooksOf(workflow, true)) {
			answer = await this.runHook('delete', workflow, webhook, 'internal', 'update');
		}
		return answer;
	}

	/** Waits for every execution started so far. */
	async settled(): Promise<void> {
		while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
	}

	async close(): Promise<void> {
		await this.settled();
		this.server.closeAllConnections();
		await new Promise<void>((resolve) => this.server.close(() => resolve()));
	}

	private async clearWebhooks(): Promise<boolean | undefined> {
		const workflow = this.workflow(this.savedStaticData);
		let answer: boolean | undefined;
		for (const webhook of this.webhooksOf(workflow, false)) {
			answer = await this.runHook('delete', workflow, webhook, 'internal', 'update');
		}
		this.saveStaticData(workflow);
		return answer;
	}

	/** A workflow as n8n builds it from its database row. */
	private workflow(staticData: IDataObject): Workflow {
		return new Workflow({
			id: this.workflowId,
			name: 'Messaging Trigger test',
			nodes: [
				structuredClone(this.node),
				{
					id: 'received-node',
					name: RECEIVED_NAME,
					type: 'test.received',
					typeVersion: 1,
					position: [200, 0],
					parameters: {},
				},
			],
			connections: {
				[TRIGGER_NAME]: { main: [[{ node: RECEIVED_NAME, type: 'main', index: 0 }]] },
			} as never,
			active: true,
			nodeTypes: this.nodeTypes,
			staticData: structuredClone(staticData),
			settings: {},
		});
	}

	/** WorkflowExecuteAdditionalData.getBase, as far as these nodes use it. */
	private additionalData(): IWorkflowExecuteAdditionalData {
		return baseAdditionalData(this.credentialsHelper, this.baseUrl);
	}

	/** WebhookService.getNodeWebhooks for the trigger node. */
	private webhooksOf(workflow: Workflow, isTest: boolean): IWebhookData[] {
		const node = workflow.getNode(TRIGGER_NAME)!;
		const nodeType = this.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
		const additionalData = this.additionalData();
		return (nodeType.description.webhooks ?? []).map((description) => {
			const rawPath = String(
				workflow.expression.getSimpleParameterValue(node, description.path, 'internal', {}),
			);
			const path = NodeHelpers.getNodeWebhookPath(
				workflow.id,
				node,
				rawPath.replace(/^\/|\/$/g, ''),
				false,
				false,
			);
			const webhook: IWebhookData = {
				httpMethod: String(description.httpMethod) as IHttpRequestMethods,
				node: node.name,
				path,
				webhookDescription: description,
				workflowId: workflow.id,
				workflowExecuteAdditionalData: additionalData,
			};
			if (isTest) webhook.isTest = true;
			return webhook;
		});
	}

	/** WebhookService.runWebhookMethod. */
	private async runHook(
		method: WebhookSetupMethodNames,
		workflow: Workflow,
		webhook: IWebhookData,
		mode: WorkflowExecuteMode,
		activation: WorkflowActivateMode,
	): Promise<boolean | undefined> {
		const node = workflow.getNode(webhook.node)!;
		const nodeType = this.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
		const hook = nodeType.webhookMethods?.[webhook.webhookDescription.name]?.[method];
		if (hook === undefined) return undefined;
		const context = new HookContext(
			workflow,
			node,
			webhook.workflowExecuteAdditionalData,
			mode,
			activation,
			webhook,
		);
		recordLogs(context, this.logs);
		return (await hook.call(context)) as boolean;
	}

	/** WorkflowStaticDataService.saveStaticData: only when the workflow says it changed. */
	private saveStaticData(workflow: Workflow): void {
		if (workflow.staticData.__dataChanged !== true) return;
		const saved = jsonClone(workflow.staticData);
		delete saved.__dataChanged;
		this.savedStaticData = saved;
	}

	private async handle(req: N8nRequest, res: http.ServerResponse): Promise<void> {
		const url = new URL(req.url ?? '/', this.baseUrl);
		const call: WebhookCall = { url: url.toString(), status: 0, text: '', startedExecution: false };
		this.calls.push(call);
		captureAnswer(res, call);

		const [, prefix, ...rest] = url.pathname.split('/');
		const path = rest.join('/');
		const mode =
			prefix === 'webhook' ? 'production' : prefix === 'webhook-test' ? 'test' : undefined;
		const entry = this.listening.find(
			(candidate) =>
				candidate.mode === mode &&
				candidate.webhooks.some((hook) => hook.path === path && hook.httpMethod === req.method),
		);
		const webhook = entry?.webhooks.find(
			(candidate) => candidate.path === path && candidate.httpMethod === req.method,
		);
		if (!entry || !webhook) {
			sendJson(res, 404, {
				code: 404,
				message: `The requested webhook "${req.method} ${path}" is not registered.`,
			});
			return;
		}

		rawBodyReader(req, this.payloadSizeMaxBytes);
		req.query = parseQuery(url.searchParams);
		req.params = { path };
		const executionMode: WorkflowExecuteMode = mode === 'test' ? 'manual' : 'webhook';
		// LiveWebhooks loads the workflow (with its static data) from the database for each request
		// and saves the static data after the webhook answered; TestWebhooks uses the cached test
		// static data (setTestStaticData) and saves nothing. When the webhook starts an execution,
		// n8n 2.40.7 builds the execution's workflow from the same static data object first, which
		// resets its "changed" flag, so what the webhook changed is not saved (seen under n8n start:
		// test/n8n/scenarios/messaging-trigger-defaults.ts).
		const workflow = this.workflow(
			mode === 'test' ? (entry.testStaticData ?? {}) : this.savedStaticData,
		);
		const saveAfterwards = (startedExecution: boolean) => {
			if (mode === 'production' && !startedExecution) this.saveStaticData(workflow);
		};
		const node = workflow.getNode(TRIGGER_NAME)!;

		try {
			await parseRequestBody(req);
		} catch (error) {
			// webhook-helpers.executeWebhook: a ResponseError under 500 is answered as it is,
			// anything else as "There was a problem executing the workflow" (500).
			if (error instanceof UnprocessableRequestError) {
				sendJson(res, 422, { code: 422, message: error.message, hint: error.hint });
			} else {
				sendJson(res, 500, { code: 0, message: 'There was a problem executing the workflow' });
			}
			return;
		}

		const additionalData = this.additionalData();
		additionalData.httpRequest = req as never;
		additionalData.httpResponse = res as never;
		let result: IWebhookResponseData;
		try {
			const nodeType = this.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
			const context = new WebhookContext(
				workflow,
				node,
				additionalData,
				executionMode,
				webhook,
				[],
				null,
			);
			recordLogs(context, this.logs);
			result = (await nodeType.webhook!.call(context)) as IWebhookResponseData;
		} catch {
			sendJson(res, 500, {
				code: 0,
				message: 'Workflow Webhook Error: Workflow could not be started!',
			});
			return;
		}
		saveAfterwards(result.workflowData !== undefined);

		// handleImmediateWebhookResponse
		if (result.workflowData === undefined) {
			if (result.noWebhookResponse !== true) {
				sendJson(
					res,
					200,
					result.webhookResponse !== undefined
						? result.webhookResponse
						: { message: 'Webhook call received' },
				);
			}
			return;
		}

		call.startedExecution = true;
		const execution = this.execute(workflow, node, result.workflowData, executionMode);
		this.pending.add(execution);
		void execution.finally(() => this.pending.delete(execution));
		// responseMode "onReceived": answered once the execution is started, not finished.
		if (result.noWebhookResponse !== true) {
			sendJson(
				res,
				200,
				result.webhookResponse !== undefined
					? result.webhookResponse
					: { message: 'Workflow was started' },
			);
		}
	}

	/** WebhookHelpers.prepareExecutionData + WorkflowRunner: the trigger's items start the run. */
	private async execute(
		workflow: Workflow,
		node: INode,
		workflowData: INodeExecutionData[][],
		mode: WorkflowExecuteMode,
	): Promise<void> {
		const executionId = `trigger-exec-${++this.executionCounter}`;
		let finished: IRun | undefined;
		const hooks = new ExecutionLifecycleHooks(mode, executionId, workflowBase(workflow));
		hooks.addHandler('workflowExecuteAfter', (run) => {
			finished = run;
		});
		const additionalData = {
			...this.additionalData(),
			executionId,
			hooks,
		} as IWorkflowExecuteAdditionalData;
		const runExecutionData = createRunExecutionData({
			executionData: { nodeExecutionStack: [{ node, data: { main: workflowData }, source: null }] },
		});
		const returned = await new WorkflowExecute(
			additionalData,
			mode,
			runExecutionData,
		).processRunExecutionData(workflow);
		const run = finished ?? returned;
		const runData = run.data.resultData.runData;
		const output = (name: string) => runData[name]?.at(-1)?.data?.main?.[0] ?? [];
		this.executions.push({
			run,
			triggerItems: output(TRIGGER_NAME),
			receivedItems: output(RECEIVED_NAME),
			error: run.data.resultData.error as Error | undefined,
		});
	}
}

function defaultTriggerVersion(): number {
	const { version, defaultVersion } = new MessagingTrigger().description;
	return defaultVersion ?? (Array.isArray(version) ? Math.max(...version) : version);
}

/** Static data is a proxy (n8n's ObservableObject); n8n stores it as JSON. */
function jsonClone(data: IDataObject): IDataObject {
	return JSON.parse(JSON.stringify(data)) as IDataObject;
}

/** n8n's UnprocessableRequestError (422), as `parseBody` throws it. */
class UnprocessableRequestError extends Error {
	constructor(
		message: string,
		readonly hint: string,
	) {
		super(message);
	}
}

/** raw-body's "request entity too large" (status 413). */
class PayloadTooLargeError extends Error {
	readonly status = 413;
	readonly type = 'entity.too.large';
}

/** n8n's `rawBodyReader` middleware with n8n-core's `parseIncomingMessage`. */
function rawBodyReader(req: N8nRequest, limit: number): void {
	const contentTypeHeader = req.headers['content-type'];
	if (contentTypeHeader) {
		const [type, ...parameters] = contentTypeHeader.split(';');
		req.contentType = type.trim().toLowerCase() || undefined;
		const charset = parameters
			.map((parameter) => parameter.trim().split('='))
			.find(([key]) => key.toLowerCase() === 'charset');
		req.encoding = (charset?.[1]?.replace(/"/g, '').toLowerCase() ?? 'utf-8') as BufferEncoding;
	}
	req.readRawBody = async () => {
		if (req.rawBody) return;
		// n8n 2.x's check; a multipart body was already read by n8n's form-data parser.
		if (req.destroyed || !req.readable) {
			throw new Error('Request body stream was aborted or is not readable');
		}
		let stream: Readable = req;
		let declaredLength: number | undefined;
		switch (req.headers['content-encoding']) {
			case 'gzip':
				stream = req.pipe(createGunzip());
				break;
			case 'deflate':
				stream = req.pipe(createInflate());
				break;
			default:
				declaredLength =
					req.headers['content-length'] === undefined
						? undefined
						: Number(req.headers['content-length']);
		}
		if (declaredLength !== undefined && declaredLength > limit) {
			req.resume();
			throw new PayloadTooLargeError('request entity too large');
		}
		const chunks: Buffer[] = [];
		let size = 0;
		for await (const chunk of stream) {
			size += (chunk as Buffer).length;
			if (size > limit) {
				req.resume();
				throw new PayloadTooLargeError('request entity too large');
			}
			chunks.push(chunk as Buffer);
		}
		req.rawBody = Buffer.concat(chunks);
		req._body = true;
	};
}

/**
 * webhook-helpers.parseRequestBody for a typeVersion-1 node without the Webhook node's
 * "binaryData" option, and middlewares/body-parser.parseBody.
 */
async function parseRequestBody(req: N8nRequest): Promise<void> {
	if (req.contentType === 'multipart/form-data') {
		// n8n's form-data parser (formidable) reads the stream; its fields are not needed here.
		req.resume();
		await new Promise((resolve) => req.once('end', resolve));
		req.body = { data: {}, files: {} };
		return;
	}
	await req.readRawBody();
	const { rawBody, contentType, encoding } = req;
	if (!rawBody?.length) return;
	try {
		if (contentType === 'application/json') {
			req.body = jsonParse(rawBody.toString(encoding));
		} else if (contentType === 'application/x-www-form-urlencoded') {
			req.body = parseQueryString(rawBody.toString(encoding), undefined, undefined, {
				maxKeys: 1000,
			});
		} else if (contentType === 'text/plain') {
			req.body = rawBody.toString(encoding);
		}
	} catch (error) {
		throw new UnprocessableRequestError('Failed to parse request body', (error as Error).message);
	}
}

/** Query parameters as express gives them: a string, or an array when repeated. */
function parseQuery(params: URLSearchParams): Record<string, unknown> {
	const query: Record<string, unknown> = {};
	for (const key of new Set(params.keys())) {
		const values = params.getAll(key);
		query[key] = values.length === 1 ? values[0] : values;
	}
	return query;
}

/** express's `res.status(code).json(body)`. */
function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
	if (res.headersSent) return;
	const text = JSON.stringify(body);
	res.writeHead(status, {
		'content-type': 'application/json; charset=utf-8',
		'content-length': Buffer.byteLength(text),
	});
	res.end(text);
}

/** Records the answer whoever writes it (n8n's side or the node). */
export function captureAnswer(
	res: http.ServerResponse,
	call: Pick<WebhookCall, 'status' | 'text' | 'json' | 'contentType'>,
): void {
	const chunks: Buffer[] = [];
	let headContentType: string | undefined;
	const writeHead = res.writeHead.bind(res);
	res.writeHead = ((status: number, ...rest: unknown[]) => {
		const headers = rest.find((arg) => typeof arg === 'object' && arg !== null) as
			Record<string, unknown> | undefined;
		const found = Object.entries(headers ?? {}).find(
			([name]) => name.toLowerCase() === 'content-type',
		);
		if (found) headContentType = String(found[1]);
		return (writeHead as (...args: unknown[]) => http.ServerResponse)(status, ...rest);
	}) as typeof res.writeHead;
	const write = res.write.bind(res);
	const end = res.end.bind(res);
	res.write = ((chunk: unknown, ...rest: unknown[]) => {
		if (chunk !== undefined && chunk !== null && typeof chunk !== 'function')
			chunks.push(Buffer.from(chunk as string));
		return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
	}) as typeof res.write;
	res.end = ((chunk?: unknown, ...rest: unknown[]) => {
		if (chunk !== undefined && chunk !== null && typeof chunk !== 'function')
			chunks.push(Buffer.from(chunk as string));
		call.status = res.statusCode;
		call.contentType = headContentType ?? res.getHeader('content-type')?.toString();
		call.text = Buffer.concat(chunks).toString('utf8');
		try {
			call.json = JSON.parse(call.text);
		} catch {
			call.json = undefined;
		}
		return (end as (...args: unknown[]) => http.ServerResponse)(chunk, ...rest);
	}) as typeof res.end;
}
