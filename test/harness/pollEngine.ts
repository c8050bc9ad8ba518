/**
 * Runs a polling trigger (the Currency Rate Trigger, the Messaging Account Trigger) the way n8n
 * 2.x runs one, with n8n-core's real `PollContext` and `TriggersAndPollers.runPollFunction`,
 * against a sandbox over real HTTP:
 *
 * - `activate()`: n8n's ActiveWorkflowTriggers.activatePollTrigger runs the first poll at once
 *   (mode "trigger", activation "activate"), and once activation succeeded n8n saves the
 *   workflow's static data when it changed (active-workflow-manager `add()`); `poll()` is each
 *   later tick of the schedule. One `Workflow` object lives from activation to deactivation, as
 *   in n8n, so its static data stays in memory between polls.
 * - a poll that returns items is emitted: n8n's `__emit` saves the workflow's static data when it
 *   changed (`__dataChanged`) and starts an execution that begins at the trigger with those items
 *   (WorkflowExecute passes a poll node's input through outside manual mode); the trigger's
 *   items and what the next node ("Received") got are recorded. A poll that returns null starts
 *   nothing and saves nothing (n8n's default, without durable poll cursors).
 * - `restart()`: the workflow is rebuilt from the saved static data (an n8n restart, leaving
 *   out the first poll n8n's start runs for it); `activate()` again is a restart with that poll.
 * - `fetchTestEvent()`: the editor's "Fetch Test Event": a manual run of the workflow, where
 *   WorkflowExecute calls `poll()` itself with a manual PollContext.
 *
 * Not reproduced: the cron schedule itself (tests call `poll()` for each tick), the isolate
 * n8n acquires around a scheduled poll, the durable poll-cursor store (opt-in in n8n 2.40).
 */
import { Container } from '@n8n/di';
import { PollContext, TriggersAndPollers } from 'n8n-core';
import {
	Workflow,
	type ICredentialDataDecryptedObject,
	type IDataObject,
	type INode,
	type INodeExecutionData,
	type INodeParameters,
	type IRun,
	type WorkflowExecuteMode,
} from 'n8n-workflow';

import {
	PACKAGE,
	RECEIVED_NAME,
	TestCredentialsHelper,
	baseAdditionalData,
	nodeTypes,
	runFromNode,
	type WorkflowJson,
} from './engine';

export const RATE_TRIGGER_TYPE = `${PACKAGE}.currencyRateTrigger`;
export const ACCOUNT_TRIGGER_TYPE = `${PACKAGE}.messagingAccountTrigger`;
const TRIGGER_NAMES: Record<string, string> = {
	[RATE_TRIGGER_TYPE]: 'Currency Rate Trigger',
	[ACCOUNT_TRIGGER_TYPE]: 'Messaging Account Trigger',
};
const WORKFLOW_ID = 'poll-workflow';

export interface PollExecution {
	mode: WorkflowExecuteMode;
	run: IRun;
	/** Items the trigger emitted. */
	triggerItems: INodeExecutionData[];
	/** Items the next node received. */
	receivedItems: INodeExecutionData[];
	/** Output items of any node of the workflow. */
	output(nodeName: string): INodeExecutionData[];
	error?: Error;
}

export interface PollOutcome {
	/** What `poll()` returned: items per output, or null ("nothing new"). */
	returned: INodeExecutionData[][] | null;
	/** The execution started with those items (undefined when the poll returned null). */
	execution?: PollExecution;
}

export interface PollHarnessOptions {
	/** The trigger's parameters, in a workflow trigger → "Received"; or a whole workflow instead. */
	parameters?: INodeParameters;
	/** A workflow (e.g. an example file) whose trigger of `triggerType` is polled. */
	workflow?: WorkflowJson;
	/** The polling trigger's type (default: the Currency Rate Trigger). */
	triggerType?: string;
	credentials: Record<string, ICredentialDataDecryptedObject>;
	/** Static data the workflow starts with (as stored in n8n's database). */
	staticData?: IDataObject;
}

export class PollHarness {
	readonly executions: PollExecution[] = [];
	private savedStaticData: IDataObject;
	private readonly node: INode;
	private readonly others: INode[];
	private readonly connections: WorkflowJson['connections'];
	private readonly credentialsHelper: TestCredentialsHelper;
	/** The active workflow (from activation to deactivation or restart). */
	private active?: Workflow;
	private executionCounter = 0;

	constructor(options: PollHarnessOptions) {
		const triggerType = options.triggerType ?? RATE_TRIGGER_TYPE;
		const triggerName = TRIGGER_NAMES[triggerType] ?? 'Trigger';
		if (options.workflow) {
			const trigger = options.workflow.nodes.find((node) => node.type === triggerType);
			if (!trigger) throw new Error(`The workflow has no ${triggerName}`);
			this.node = structuredClone(trigger);
			this.others = options.workflow.nodes.filter((node) => node !== trigger);
			this.connections = options.workflow.connections;
		} else {
			this.node = {
				id: 'poll-trigger-node',
				name: triggerName,
				type: triggerType,
				typeVersion: 1,
				position: [0, 0],
				parameters: options.parameters ?? {},
				credentials: { messagingRateApi: { id: 'cred-1', name: 'Sandbox' } },
			};
			this.others = [
				{
					id: 'received-node',
					name: RECEIVED_NAME,
					type: 'test.received',
					typeVersion: 1,
					position: [200, 0],
					parameters: {},
				},
			];
			this.connections = {
				[triggerName]: { main: [[{ node: RECEIVED_NAME, type: 'main', index: 0 }]] },
			} as never;
		}
		this.credentialsHelper = new TestCredentialsHelper(options.credentials);
		this.savedStaticData = structuredClone(options.staticData ?? {});
	}

	/** The workflow's static data as n8n would have saved it in its database. */
	staticData(): IDataObject {
		return structuredClone(this.savedStaticData);
	}

	/** The static data of the running workflow (in memory; saved only when a poll emits). */
	liveStaticData(): IDataObject {
		return jsonClone(this.active?.staticData ?? {});
	}

	/** Edits the node's parameters, as a user saving the workflow again (n8n then re-activates it). */
	setParameters(parameters: INodeParameters): void {
		this.node.parameters = parameters;
		if (this.active) this.active = this.workflow(this.savedStaticData);
	}

	/**
	 * Activating the workflow (and n8n's start, which activates every active workflow anew from
	 * its database row): n8n runs the first poll at once, then saves the static data.
	 */
	async activate(): Promise<PollOutcome> {
		const workflow = this.workflow(this.savedStaticData);
		this.active = workflow;
		const outcome = await this.poll();
		this.saveStaticData(workflow);
		return outcome;
	}

	/** One tick of the polling schedule. */
	async poll(): Promise<PollOutcome> {
		const workflow = this.active;
		if (!workflow) throw new Error('activate() first');
		const node = workflow.getNode(this.node.name)!;
		let emitted: INodeExecutionData[][] | undefined;
		let emittedError: Error | undefined;
		const context = new PollContext(
			workflow,
			node,
			baseAdditionalData(this.credentialsHelper),
			'trigger',
			'activate',
			(data) => {
				emitted = data;
			},
			(error) => {
				emittedError = error;
			},
		);
		// PollTriggerExecutor: run the poll; items are emitted, an error is reported through __emitError.
		let returned: INodeExecutionData[][] | null;
		try {
			returned = await Container.get(TriggersAndPollers).runPollFunction(workflow, node, context);
		} catch (error) {
			context.__emitError(error as Error);
			throw emittedError ?? error;
		}
		if (returned === null) return { returned };
		context.__emit(returned);
		// trigger-execution-context.factory: __emit saves the static data, then runs the workflow.
		this.saveStaticData(workflow);
		const execution = await this.execute(workflow, node, emitted ?? returned, 'trigger');
		return { returned, execution };
	}

	/** n8n restarts: the active workflow is rebuilt from the database (the saved static data). */
	restart(): void {
		this.active = this.workflow(this.savedStaticData);
	}

	/** "Fetch Test Event" in the editor: a manual run, in which WorkflowExecute calls poll() itself. */
	async fetchTestEvent(): Promise<PollExecution> {
		const workflow = this.workflow(this.savedStaticData);
		const node = workflow.getNode(this.node.name)!;
		return await this.execute(workflow, node, [[{ json: {} }]], 'manual');
	}

	/** A workflow as n8n builds it from its database row: trigger → Received. */
	private workflow(staticData: IDataObject): Workflow {
		return new Workflow({
			id: WORKFLOW_ID,
			name: 'Poll trigger test',
			nodes: [structuredClone(this.node), ...structuredClone(this.others)],
			connections: this.connections,
			active: true,
			nodeTypes,
			staticData: structuredClone(staticData),
			settings: {},
		});
	}

	/** WorkflowStaticDataService.saveStaticData: only when the workflow says it changed. */
	private saveStaticData(workflow: Workflow): void {
		if (workflow.staticData.__dataChanged !== true) return;
		const saved = jsonClone(workflow.staticData);
		delete saved.__dataChanged;
		this.savedStaticData = saved;
		workflow.staticData.__dataChanged = false;
	}

	/** WorkflowRunner: an execution that starts at the trigger with `data`. */
	private async execute(
		workflow: Workflow,
		node: INode,
		data: INodeExecutionData[][],
		mode: WorkflowExecuteMode,
	): Promise<PollExecution> {
		const run = await runFromNode(
			workflow,
			node,
			data,
			mode,
			baseAdditionalData(this.credentialsHelper),
			`poll-exec-${++this.executionCounter}`,
		);
		const runData = run.data.resultData.runData;
		const output = (name: string) => runData[name]?.at(-1)?.data?.main?.[0] ?? [];
		const execution: PollExecution = {
			mode,
			run,
			output,
			triggerItems: output(this.node.name),
			receivedItems: output(RECEIVED_NAME),
			error: run.data.resultData.error as Error | undefined,
		};
		this.executions.push(execution);
		return execution;
	}
}

/** Static data is a proxy (n8n's ObservableObject); n8n stores it as JSON. */
function jsonClone(data: IDataObject): IDataObject {
	return JSON.parse(JSON.stringify(data)) as IDataObject;
}
