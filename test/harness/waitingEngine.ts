/**
 * Executions that wait (Message → Send and Wait for Response) and their resume, the way n8n 2.x
 * runs them, with n8n-core's real `WorkflowExecute` and `WebhookContext`, over real HTTP on
 * 127.0.0.1:
 *
 * - `run()`: a workflow runs until a node calls `putExecutionToWait(date)`; the execution is then
 *   "saved" as n8n saves it (its data through a JSON round trip, status `waiting`).
 * - the harness's HTTP server plays n8n's `/webhook-waiting/:executionId/:nodeId` route
 *   (`WaitingWebhooks.executeWebhook` of n8n 2.41): a send-and-wait node's link must carry a valid
 *   `signature` (n8n-core's `validateUrlSignature` with the instance's HMAC secret: the check n8n
 *   makes before the node sees the request, answered 401 otherwise); a finished execution answers
 *   "no action required"; else the node is disabled, the node's restart webhook for the method and
 *   path (`restartWebhook: true`, path = node id) runs its `webhook()` with the saved run data, and
 *   when it returns `workflowData` the execution resumes with it (n8n's `prepareExecutionData`:
 *   the waiting node's stack entry gets the items, `forwardAllOutputs`), else it keeps waiting.
 *   The request gets n8n's parsed query and, for a form post, its parsed body. `open()` is a GET
 *   (what a link preview or a scanner does), `press()` what a person does: open the page, press
 *   its button (a form post to the same signed address).
 * - `timeOut()`: what n8n's WaitTracker does when the wait's date has passed: the execution runs
 *   on from the waiting node (which n8n-core disables, passing its stack entry's items on).
 *
 * Not reproduced: express (the request is Node's `IncomingMessage` with `query`, `body`,
 * `params`), n8n's database, push messages, form-waiting routes (not used by this package). n8n
 * does no bot filtering of its own on these links: the node decides only on a button's press.
 */
import http from 'http';
import type { AddressInfo } from 'net';
import { parse as parseQueryString } from 'querystring';

import { Container } from '@n8n/di';
import {
	ExecutionLifecycleHooks,
	InstanceSettings,
	WAITING_TOKEN_QUERY_PARAM,
	WebhookContext,
	WorkflowExecute,
	generateUrlSignature,
	prepareUrlForSigning,
	validateUrlSignature,
} from 'n8n-core';
import {
	SEND_AND_WAIT_OPERATION,
	Workflow,
	createRunExecutionData,
	type IConnections,
	type ICredentialDataDecryptedObject,
	type IDataObject,
	type IHttpRequestMethods,
	type INode,
	type INodeParameters,
	type INodeExecutionData,
	type IRun,
	type IRunExecutionData,
	type IWebhookData,
	type IWebhookResponseData,
	type IWorkflowBase,
	type IWorkflowExecuteAdditionalData,
	type WorkflowExecuteMode,
} from 'n8n-workflow';

import {
	RECEIVED_NAME,
	TestCredentialsHelper,
	baseAdditionalData,
	nodeTypes,
	singleNodeWorkflow,
	type RunHooks,
	type WorkflowJson,
} from './engine';
import { captureAnswer } from './triggerEngine';

/** Items → Messaging (Send and Wait for Response, these parameters) → Received. */
export function askWorkflow(
	parameters: INodeParameters,
	items: IDataObject[] = [{}],
	settings: Partial<INode> = {},
): WorkflowJson {
	const base = singleNodeWorkflow(
		'messaging',
		{ resource: 'message', operation: 'sendAndWait', ...parameters },
		items,
		settings,
	);
	return {
		nodes: [
			...base.nodes,
			{
				id: '4',
				name: RECEIVED_NAME,
				type: 'test.received',
				typeVersion: 1,
				position: [600, 0],
				parameters: {},
			},
		],
		connections: {
			...base.connections,
			Node: { main: [[{ node: RECEIVED_NAME, type: 'main', index: 0 }]] },
		} as IConnections,
	};
}

export interface SavedExecution {
	id: string;
	status: 'running' | 'waiting' | 'success' | 'error';
	/** The run as n8n would have it after the last part of the execution ended. */
	run: IRun;
	/** The wait's end, while waiting. */
	waitTill?: Date;
	/** Output items of a node's last run. */
	output(nodeName: string, outputIndex?: number): INodeExecutionData[];
}

/** One HTTP request to a resume link, and what came of it. */
export interface ResumeCall {
	url: string;
	status: number;
	contentType?: string;
	text: string;
	json?: unknown;
	/** Whether the node returned `workflowData`, i.e. the execution resumed. */
	resumed: boolean;
	/** The answer's headers, as the client received them (set by `open()`). */
	headers?: Record<string, string>;
}

interface Stored {
	id: string;
	workflow: WorkflowJson;
	mode: WorkflowExecuteMode;
	status: SavedExecution['status'];
	/** JSON as n8n stores it. */
	data: string;
	running?: Promise<void>;
}

let executionCounter = 0;

/** A page's form as a browser reads it: its text fields and its submit button, unescaped. */
export interface PageForm {
	fields: Array<{ name: string; maxLength?: number }>;
	button: { name: string; value: string; label: string };
}

/** The form a page posts to its own address, or undefined when it has none (nothing to press). */
export function pageForm(html: string): PageForm | undefined {
	const form = /<form method="post">([\s\S]*?)<\/form>/.exec(html)?.[1];
	const button = form && /<button type="submit"([^>]*)>([\s\S]*?)<\/button>/.exec(form);
	if (!form || !button) return undefined;
	const fields = [...form.matchAll(/<(?:textarea|input)([^>]*)>/g)].map(([, attributes]) => {
		const maxLength = /\smaxlength="(\d+)"/.exec(attributes)?.[1];
		return {
			name: unescapeHtml(/\sname="([^"]*)"/.exec(attributes)?.[1] ?? ''),
			...(maxLength ? { maxLength: Number(maxLength) } : {}),
		};
	});
	return {
		fields,
		button: {
			name: unescapeHtml(/\sname="([^"]*)"/.exec(button[1])?.[1] ?? ''),
			value: unescapeHtml(/\svalue="([^"]*)"/.exec(button[1])?.[1] ?? ''),
			label: unescapeHtml(button[2]),
		},
	};
}

/** What a person reads on a page, piece by piece: its body's text, character references read. */
export function pageText(html: string): string[] {
	const body = /<body>([\s\S]*)<\/body>/.exec(html)?.[1] ?? '';
	return body
		.split(/<[^>]*>/)
		.filter((piece) => piece !== '')
		.map(unescapeHtml);
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Text as a browser shows it: character references (`&#60;`, `&#x3c;`, `&lt;`) read. */
function unescapeHtml(text: string): string {
	return text.replace(
		/&(?:#(\d+)|#x([\da-f]+)|([a-z]+));/gi,
		(reference, decimal?: string, hex?: string, name?: string) =>
			decimal
				? String.fromCodePoint(Number(decimal))
				: hex
					? String.fromCodePoint(parseInt(hex, 16))
					: (NAMED_ENTITIES[name?.toLowerCase() ?? ''] ?? reference),
	);
}

export class WaitingHarness {
	readonly calls: ResumeCall[] = [];
	private readonly executions = new Map<string, Stored>();
	private readonly credentialsHelper: TestCredentialsHelper;

	private constructor(
		private readonly server: http.Server,
		readonly baseUrl: string,
		credentials: Record<string, ICredentialDataDecryptedObject>,
	) {
		this.credentialsHelper = new TestCredentialsHelper(credentials);
	}

	static async start(
		credentials: Record<string, ICredentialDataDecryptedObject>,
	): Promise<WaitingHarness> {
		// Requests reach the server only once its address is known, so after `harness` is set.
		const server = http.createServer((req, res) => {
			void harness.handle(req, res);
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		const { port } = server.address() as AddressInfo;
		const harness = new WaitingHarness(server, `http://127.0.0.1:${port}`, credentials);
		return harness;
	}

	async close(): Promise<void> {
		await Promise.allSettled(
			[...this.executions.values()].map(async (stored) => await stored.running),
		);
		this.server.closeAllConnections();
		await new Promise<void>((resolve) => this.server.close(() => resolve()));
	}

	/** Runs `workflow` from its start node (a manual run, or `mode`) until it ends or waits. */
	async run(
		workflow: WorkflowJson,
		runHooks: RunHooks & { mode?: WorkflowExecuteMode } = {},
	): Promise<SavedExecution> {
		const id = `wait-${++executionCounter}`;
		const mode = runHooks.mode ?? 'manual';
		const wf = this.workflow(workflow);
		const start =
			(runHooks.startNode ? wf.getNode(runHooks.startNode) : wf.getStartNode()) ??
			workflow.nodes[0];
		const data = createRunExecutionData({
			executionData: {
				nodeExecutionStack: [
					{ node: start, data: { main: [runHooks.startItems ?? [{ json: {} }]] }, source: null },
				],
			},
		});
		const stored: Stored = { id, workflow, mode, status: 'running', data: '' };
		this.executions.set(id, stored);
		await this.execute(stored, data);
		return this.execution(id);
	}

	/** The execution as n8n's database holds it now. */
	execution(id: string): SavedExecution {
		const stored = this.executions.get(id);
		if (!stored) throw new Error(`No execution ${id}`);
		const data = JSON.parse(stored.data) as IRunExecutionData;
		const run = {
			data,
			status: stored.status,
			mode: stored.mode,
			startedAt: new Date(),
			finished: stored.status === 'success',
		} as unknown as IRun;
		return {
			id,
			status: stored.status,
			run,
			waitTill: data.waitTill ? new Date(data.waitTill) : undefined,
			output(nodeName, outputIndex = 0) {
				const runs = data.resultData.runData[nodeName];
				return runs?.at(-1)?.data?.main?.[outputIndex] ?? [];
			},
		};
	}

	/** Waits until a resumed execution has ended or waits again. */
	async settled(id: string): Promise<SavedExecution> {
		await this.executions.get(id)?.running;
		return this.execution(id);
	}

	/** The wait's date has passed: n8n's WaitTracker runs the execution on. */
	async timeOut(id: string): Promise<SavedExecution> {
		const stored = this.executions.get(id);
		if (stored?.status !== 'waiting') throw new Error(`Execution ${id} is not waiting`);
		await this.execute(stored, JSON.parse(stored.data) as IRunExecutionData);
		return this.execution(id);
	}

	/**
	 * What a person does: opens the link (GET), then presses the button of the page's form, as a
	 * browser submits it: a POST to the page's own address with the form's fields (`fields`, e.g. a
	 * typed answer) and the pressed button's name and value. Fails when the page has no such form.
	 */
	async press(url: string, fields: Record<string, string> = {}): Promise<ResumeCall> {
		const page = await this.open(url);
		const button = pageForm(page.text)?.button;
		if (!button) throw new Error(`The page of ${url} has no button to press:\n${page.text}`);
		return await this.open(url, { form: { ...fields, [button.name]: button.value } });
	}

	/** A GET (or POST with a form body) to a link, as a phone's browser would send it. */
	async open(
		url: string,
		init: {
			method?: 'GET' | 'HEAD' | 'POST';
			form?: Record<string, string>;
			/** A body other than a form, sent with the headers given. */
			body?: string;
			headers?: Record<string, string>;
		} = {},
	): Promise<ResumeCall> {
		const body = init.form ? new URLSearchParams(init.form).toString() : init.body;
		const response = await fetch(url, {
			method: init.method ?? (body ? 'POST' : 'GET'),
			headers: {
				'user-agent':
					'Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36',
				...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
				...init.headers,
			},
			body,
			redirect: 'manual',
		});
		await response.text();
		const call = this.calls.at(-1);
		if (!call) throw new Error('The harness recorded no call');
		call.headers = Object.fromEntries(response.headers);
		return call;
	}

	// -------------------------------------------------------------------------------------------

	private workflow(json: WorkflowJson): Workflow {
		return new Workflow({
			id: 'test-workflow',
			name: json.name ?? 'test',
			nodes: structuredClone(json.nodes),
			connections: json.connections,
			nodeTypes,
			active: false,
			settings: json.settings ?? {},
		});
	}

	private additionalData(id: string): IWorkflowExecuteAdditionalData {
		return { ...baseAdditionalData(this.credentialsHelper, this.baseUrl), executionId: id };
	}

	/** WorkflowRunner: runs (or resumes) an execution and saves it when it ends or waits. */
	private async execute(stored: Stored, data: IRunExecutionData): Promise<void> {
		const wf = this.workflow(stored.workflow);
		let finished: IRun | undefined;
		const workflowData = {
			id: wf.id,
			name: wf.name,
			nodes: stored.workflow.nodes,
			connections: stored.workflow.connections,
			active: false,
			settings: {},
		} as unknown as IWorkflowBase;
		const hooks = new ExecutionLifecycleHooks(stored.mode, stored.id, workflowData);
		hooks.addHandler('workflowExecuteAfter', (run) => {
			finished = run;
		});
		stored.status = 'running';
		const running = (async () => {
			const returned = await new WorkflowExecute(
				{ ...this.additionalData(stored.id), hooks },
				stored.mode,
				data,
			).processRunExecutionData(wf);
			const run = finished ?? returned;
			stored.data = JSON.stringify(run.data);
			stored.status = run.data.waitTill
				? 'waiting'
				: run.data.resultData.error
					? 'error'
					: 'success';
		})();
		stored.running = running;
		await running;
	}

	/** n8n's WaitingWebhooks.executeWebhook (2.41), as far as a send-and-wait node uses it. */
	private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
		const url = new URL(req.url ?? '/', this.baseUrl);
		const call: ResumeCall = { url: url.toString(), status: 0, text: '', resumed: false };
		this.calls.push(call);
		captureAnswer(res, call);
		const [, prefix, executionId, suffix] = url.pathname.split('/');
		const stored = prefix === 'webhook-waiting' ? this.executions.get(executionId) : undefined;
		if (!stored)
			return sendText(
				res,
				404,
				'application/json',
				JSON.stringify({ code: 404, message: `The execution "${executionId}" does not exist.` }),
			);

		const data = JSON.parse(stored.data || '{}') as IRunExecutionData;
		const wf = this.workflow(stored.workflow);
		const isSendAndWait = Object.values(wf.nodes).some(
			(node) =>
				node.id === decodeURIComponent(suffix ?? '') &&
				node.parameters.operation === SEND_AND_WAIT_OPERATION,
		);
		if (data.resumeToken) {
			const valid = isSendAndWait
				? validSignature(url)
				: url.searchParams.get(WAITING_TOKEN_QUERY_PARAM) === data.resumeToken;
			if (!valid) {
				return isSendAndWait
					? sendText(
							res,
							401,
							'text/html; charset=utf-8',
							'<html><body><h1>Invalid token</h1></body></html>',
						)
					: sendText(res, 401, 'application/json', JSON.stringify({ error: 'Invalid token' }));
			}
		}
		if (stored.status === 'running')
			return sendText(
				res,
				409,
				'application/json',
				JSON.stringify({
					code: 409,
					message: `The execution "${executionId}" is running already.`,
				}),
			);
		if (data.resultData.error)
			return sendText(
				res,
				409,
				'application/json',
				JSON.stringify({
					code: 409,
					message: `The execution "${executionId}" has finished with error.`,
				}),
			);
		if (stored.status === 'success') {
			if (isSendAndWait)
				return sendText(
					res,
					200,
					'text/html; charset=utf-8',
					'<html><body><h1>No action required</h1></body></html>',
				);
			return sendText(
				res,
				409,
				'application/json',
				JSON.stringify({
					code: 409,
					message: `The execution "${executionId} has finished already.`,
				}),
			);
		}

		// getWebhookExecutionData
		const stackEntry = data.executionData!.nodeExecutionStack[0];
		stackEntry.node.disabled = true;
		data.waitTill = undefined;
		const lastNodeExecuted = data.resultData.lastNodeExecuted!;
		const node = wf.getNode(lastNodeExecuted) as INode;
		const nodeType = nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
		const method = (req.method ?? 'GET') as IHttpRequestMethods;
		const webhookDescription = (nodeType.description.webhooks ?? []).find((description) => {
			const path = String(
				wf.expression.getSimpleParameterValue(node, description.path, 'internal', {}),
			);
			return (
				description.httpMethod === method &&
				path === decodeURIComponent(suffix ?? '') &&
				description.restartWebhook === true
			);
		});
		if (!webhookDescription) {
			if (isSendAndWait)
				return sendText(
					res,
					200,
					'text/html; charset=utf-8',
					'<html><body><h1>No action required</h1></body></html>',
				);
			return sendText(
				res,
				404,
				'application/json',
				JSON.stringify({
					code: 404,
					message: `The workflow for execution "${executionId}" does not contain a waiting webhook with a matching path/method.`,
				}),
			);
		}

		const request = req as http.IncomingMessage & {
			query: Record<string, unknown>;
			body?: unknown;
			params: Record<string, string>;
		};
		request.query = Object.fromEntries(
			[...new Set(url.searchParams.keys())].map((key) => {
				const values = url.searchParams.getAll(key);
				return [key, values.length === 1 ? values[0] : values];
			}),
		);
		request.params = {};
		const raw = await readBody(req);
		// n8n's parseContentType: the type lowercased, not trimmed.
		const type = (req.headers['content-type'] ?? '').split(';')[0].toLowerCase();
		if (type === 'application/x-www-form-urlencoded') {
			request.body = parseQueryString(raw.toString('utf8'), undefined, undefined, {
				maxKeys: 1000,
			});
		} else if (raw.length && type === 'application/json') {
			request.body = JSON.parse(raw.toString('utf8')) as unknown;
		} else {
			request.body = {};
		}

		const additionalData = {
			...this.additionalData(stored.id),
			httpRequest: request,
			httpResponse: res,
		} as unknown as IWorkflowExecuteAdditionalData;
		const webhookData: IWebhookData = {
			httpMethod: method,
			node: node.name,
			path: decodeURIComponent(suffix ?? ''),
			webhookDescription,
			workflowId: wf.id,
			workflowExecuteAdditionalData: additionalData,
		};
		let result: IWebhookResponseData;
		try {
			const context = new WebhookContext(
				wf,
				node,
				additionalData,
				stored.mode,
				webhookData,
				[],
				data,
			);
			result = (await nodeType.webhook!.call(context)) as IWebhookResponseData;
		} catch (error) {
			return sendText(
				res,
				500,
				'application/json',
				JSON.stringify({
					code: 0,
					message: 'Workflow Webhook Error: Workflow could not be started!',
					error: String(error),
				}),
			);
		}
		if (result.workflowData === undefined) {
			if (result.noWebhookResponse !== true)
				sendText(
					res,
					200,
					'application/json',
					JSON.stringify(result.webhookResponse ?? { message: 'Webhook call received' }),
				);
			return;
		}
		if (result.noWebhookResponse !== true) {
			const answer = result.webhookResponse;
			sendText(
				res,
				200,
				typeof answer === 'string' ? 'text/html; charset=utf-8' : 'application/json',
				typeof answer === 'string'
					? answer
					: JSON.stringify(answer ?? { message: 'Workflow was started' }),
			);
		}
		call.resumed = true;
		// prepareExecutionData: the waiting node's entry gets the webhook's items and forwards them.
		stackEntry.data.main = result.workflowData;
		stackEntry.metadata = { ...stackEntry.metadata, forwardAllOutputs: true };
		void this.execute(stored, data);
	}
}

/** A link as n8n would sign it, with the query it now has: a link of another wait, for one. */
export function signedAgain(url: URL): string {
	const signed = new URL(url);
	signed.searchParams.delete(WAITING_TOKEN_QUERY_PARAM);
	const secret = Container.get(InstanceSettings).hmacSignatureSecret;
	signed.searchParams.set(
		WAITING_TOKEN_QUERY_PARAM,
		generateUrlSignature(prepareUrlForSigning(signed), secret),
	);
	return signed.toString();
}

/** The check n8n makes on a send-and-wait link before the node sees it. */
function validSignature(url: URL): boolean {
	const provided = url.searchParams.get(WAITING_TOKEN_QUERY_PARAM);
	if (!provided) return false;
	return validateUrlSignature(provided, url, Container.get(InstanceSettings).hmacSignatureSecret);
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => resolve(Buffer.concat(chunks)));
		req.on('error', reject);
	});
}

function sendText(
	res: http.ServerResponse,
	status: number,
	contentType: string,
	text: string,
): void {
	if (res.headersSent) return;
	res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
	res.end(text);
}
