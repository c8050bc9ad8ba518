import { createHash } from 'crypto';
import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	IRunData,
	ISourceData,
} from 'n8n-workflow';

// A message repeats when the same cause would send it again: the event n8n's paired-item lineage
// leads back to at the start of the execution, and the pass of this node that sends it. n8n's
// Retry copies the trigger's run (its items, its start time); a new event is a new run.

/** A person pressed Execute: the items the run read next are the cause, so a re-run by hand is one. */
const MANUAL_TRIGGER = 'n8n-nodes-base.manualTrigger';
const MESSAGING_TRIGGER = 'n8n-nodes-messaging-rate.messagingTrigger';
const WEBHOOK = 'n8n-nodes-base.webhook';

/** Triggers whose item can be the same for two events: their run's start time tells them apart. */
const TIMED = new Set([
	'n8n-nodes-base.scheduleTrigger',
	'n8n-nodes-base.cron',
	'n8n-nodes-base.interval',
	'@n8n/n8n-nodes-langchain.chatTrigger',
	'@n8n/n8n-nodes-langchain.manualChatTrigger',
]);

/** More steps than any workflow has nodes means a loop in the lineage: no cause. */
const MAX_STEPS = 1_000;

interface Lineage {
	/** The trigger: where the lineage starts. */
	root: { type: string; json: IDataObject; startTime: number | undefined };
	/** The item the run read right after the trigger, if any. */
	next: IDataObject | undefined;
}

export class Causes {
	private readonly runData: IRunData | undefined;
	/** Where this node's items came from; none for a start node. */
	private readonly source: ISourceData | undefined;
	private readonly input: INodeExecutionData[];
	private readonly pass: number;
	private readonly digests = new WeakMap<IDataObject, string>();
	private typeOf: Map<string, string> | undefined;

	constructor(private readonly ctx: IExecuteFunctions) {
		// n8n's execute context holds the execution's run data and this node's run index; its
		// interface declares neither.
		const internals = ctx as unknown as {
			runExecutionData?: { resultData?: { runData?: IRunData } };
			runIndex?: unknown;
		};
		this.runData = internals.runExecutionData?.resultData?.runData;
		this.pass = typeof internals.runIndex === 'number' ? internals.runIndex : 0;
		this.source = ctx.getExecuteData().source?.main[0] ?? undefined;
		this.input = ctx.getInputData();
	}

	/** undefined where the lineage is broken: the message is then the same by its words alone. */
	of(itemIndex: number): string | undefined {
		const item = this.input[itemIndex];
		// A start node ("Execute step" on a lone node, a run begun at it): its own items are the cause.
		if (!this.source)
			return this.digest(item.json, () => ({ item: canonical(item.json), pass: this.pass }));
		const lineage = this.follow(this.source, itemIndex);
		if (!lineage) return undefined;
		const { root, next } = lineage;
		const cause = root.type === MANUAL_TRIGGER && next ? next : root.json;
		return this.digest(cause, () => ({ event: eventOf(lineage), pass: this.pass }));
	}

	/** From this node's input item back to the trigger's item, along pairedItem and each run's source. */
	private follow(start: ISourceData, itemIndex: number): Lineage | undefined {
		let source = start;
		let index = itemIndex;
		let next: IDataObject | undefined;
		for (let step = 0; step < MAX_STEPS && this.runData; step++) {
			const task = this.runData[source.previousNode]?.[source.previousNodeRun ?? 0];
			const item = task?.data?.main?.[source.previousNodeOutput ?? 0]?.[index];
			if (!task || !item) return undefined;
			const paired = firstPaired(item.pairedItem);
			// A loop's later passes name the source of its first pass (n8n's Loop Over Items).
			const from = paired?.sourceOverwrite ?? task.source?.[paired?.input ?? 0];
			if (!from) {
				const type = this.types().get(source.previousNode) ?? '';
				const root = { type, json: item.json, startTime: task.startTime };
				return { root, next };
			}
			if (!paired) return undefined;
			next = item.json;
			source = from;
			index = paired.item;
		}
		return undefined;
	}

	/** The type of every node before this one, looked up once per run. */
	private types(): Map<string, string> {
		this.typeOf ??= new Map(
			this.ctx.getParentNodes(this.ctx.getNode().name).map(({ name, type }) => [name, type]),
		);
		return this.typeOf;
	}

	private digest(json: IDataObject, identity: () => unknown): string {
		let digest = this.digests.get(json);
		if (digest === undefined) {
			digest = createHash('sha256').update(JSON.stringify(identity())).digest('hex');
			this.digests.set(json, digest);
		}
		return digest;
	}
}

function firstPaired(
	paired: INodeExecutionData['pairedItem'],
): { item: number; input?: number; sourceOverwrite?: ISourceData } | undefined {
	const first = Array.isArray(paired) ? paired[0] : paired;
	return typeof first === 'number' ? { item: first } : first;
}

/** What tells one event from another, and the same event delivered again. */
function eventOf({ root, next }: Lineage): string {
	const { type, json, startTime } = root;
	if (type === MANUAL_TRIGGER) return canonical(next ?? json);
	// This package's Messaging Trigger: a redelivery carries the same message id, a new time.
	if (type === MESSAGING_TRIGGER && typeof json.messageId === 'string' && json.messageId !== '')
		return canonical({ messageId: json.messageId, recipient: json.recipient });
	if (type === WEBHOOK) {
		// A sender's redelivery differs only in headers; a call that carries nothing is told by its time.
		const call = { body: json.body ?? {}, query: json.query ?? {}, params: json.params ?? {} };
		const carries = Object.values(call).some((part) => !isEmpty(part));
		return canonical(carries ? call : { call, startTime });
	}
	return canonical(TIMED.has(type) ? { json, startTime } : json);
}

// Each part is an object or a text here: a missing one reads as {}.
const isEmpty = (value: unknown) =>
	value === '' || (typeof value === 'object' && Object.keys(value as object).length === 0);

/** JSON with the keys of every object sorted: the same data serialised in another order is the same. */
function canonical(value: unknown): string {
	return JSON.stringify(value, (_key, inner: unknown) =>
		inner !== null && typeof inner === 'object' && !Array.isArray(inner)
			? Object.fromEntries(
					Object.keys(inner)
						.sort()
						.map((key) => [key, (inner as IDataObject)[key]]),
				)
			: inner,
	);
}
