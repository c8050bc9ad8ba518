import { createHash } from 'crypto';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

// A message repeats when the same cause would send it again: the item n8n's paired-item lineage
// leads back to at the start of the execution. n8n's Retry reuses that item; a new event is new.

// Their item says only when they fired: the items the run read next are the cause.
const CLOCK_TRIGGERS = new Set([
	'n8n-nodes-base.manualTrigger',
	'n8n-nodes-base.scheduleTrigger',
	'n8n-nodes-base.cron',
	'n8n-nodes-base.interval',
]);

interface CauseNode {
	name: string;
	type: string;
}

export class Causes {
	private readonly nodes: CauseNode[];
	private readonly digests = new WeakMap<IDataObject, string>();

	constructor(private readonly ctx: IExecuteFunctions) {
		this.nodes = causeNodes(ctx);
	}

	/** undefined where the lineage is broken: the message is then the same by its words alone. */
	of(itemIndex: number): string | undefined {
		const previous = this.ctx.getInputSourceData?.(0)?.previousNode;
		for (const { name, type } of this.nodes) {
			const json =
				name === previous
					? this.ctx.getInputData()[itemIndex]?.json
					: pairedJson(this.ctx, itemIndex, name);
			if (json) return this.digest(json, type);
		}
		return undefined;
	}

	private digest(json: IDataObject, type: string): string {
		let digest = this.digests.get(json);
		if (digest === undefined) {
			digest = createHash('sha256')
				.update(JSON.stringify(eventOf(json, type)))
				.digest('hex');
			this.digests.set(json, digest);
		}
		return digest;
	}
}

function causeNodes(ctx: IExecuteFunctions): CauseNode[] {
	if (typeof ctx.getParentNodes !== 'function') return [];
	const ancestors = ctx.getParentNodes(ctx.getNode().name);
	const parents = new Map(
		ancestors.map((node) => [
			node.name,
			ctx.getParentNodes(node.name, { depth: 1 }).map((parent) => parent.name),
		]),
	);
	return ancestors
		.filter((node) => parents.get(node.name)?.length === 0)
		.flatMap((root) => {
			if (!CLOCK_TRIGGERS.has(root.type)) return [root];
			const read = ancestors.filter((node) => parents.get(node.name)?.includes(root.name));
			return read.length ? read : [root];
		});
}

function pairedJson(
	ctx: IExecuteFunctions,
	itemIndex: number,
	name: string,
): IDataObject | undefined {
	try {
		const node = ctx.getWorkflowDataProxy(itemIndex).$(name) as {
			isExecuted: boolean;
			item?: { json?: IDataObject };
		};
		return node.isExecuted ? node.item?.json : undefined;
	} catch {
		// n8n could not follow the lineage (a node that drops pairedItem).
		return undefined;
	}
}

/** What tells one event from another, and the same event delivered again. */
function eventOf(json: IDataObject, type: string): unknown {
	// This package's Messaging Trigger: a redelivery carries the same message id, a new time.
	if (type === 'n8n-nodes-messaging-rate.messagingTrigger' && typeof json.messageId === 'string')
		return { messageId: json.messageId, recipient: json.recipient };
	// A webhook call: its sender's redelivery differs only in headers.
	if (type === 'n8n-nodes-base.webhook')
		return { body: json.body, query: json.query, params: json.params };
	return json;
}
