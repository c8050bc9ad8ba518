import { createHash, createHmac } from 'crypto';
import type { IDataObject, INodeExecutionData, NodeOperationError } from 'n8n-workflow';

import {
	NotAttemptedError,
	causeInWords,
	inputError,
	itemLabel,
	itemList,
	listInWords,
	hint,
	shown,
} from '../../shared/errors';
import { ApiError } from '../../shared/transport';
import type { RunContext } from '../../shared/execution/operationRun';
import { Causes } from './cause';
import { SendClaims, type Holder } from './sendClaims';

// The key is keyed with the credential's secret, so that no one holding the store (or a skipped
// item) can confirm a guess of the content. What was sent or may have been delivered stays
// claimed; what certainly was not is given back, so that a Retry sends it.

export interface SendIdentity {
	/** The same content through two operations is two messages. */
	operation: string;
	phone: string;
	content: () => unknown[] | Promise<unknown[]>;
	/** A repeat fails its item before anything is sent, instead of being skipped (Send and Wait). */
	repeatIsError?: boolean;
}

export interface IdentifiedSend {
	key: string;
	phone: string;
	repeatIsError: boolean;
	/** Set by the Idempotency Key: the key as given and the content it stands for. */
	given?: { key: string; content: () => unknown[] | Promise<unknown[]> };
}

export interface RepeatSettings {
	skipRepeatsHours: number;
	idempotencyKey: string;
}

/**
 * What makes two messages the same: the Idempotency Key; else the recipient, the content and the
 * cause (the event the item comes from).
 */
function repeatKeyOf(
	{ baseUrl, clientId, clientSecret }: RunContext<unknown>['credentials'],
	operation: string,
	phone: string,
	what: unknown[],
): string {
	return createHmac('sha256', clientSecret)
		.update(JSON.stringify(['v2', operation, baseUrl, clientId, phone, ...what]))
		.digest('hex')
		.slice(0, 32);
}

/** Text that looks the same is the same: Unicode form and surrounding white space aside. */
function sameText(part: unknown): unknown {
	return typeof part === 'string' ? part.normalize('NFC').trim() : part;
}

export function base64Digest(base64: string): string {
	const hash = createHash('sha256');
	const piece = 4 * 64 * 1024;
	for (let start = 0; start < base64.length; start += piece)
		hash.update(Buffer.from(base64.slice(start, start + piece), 'base64'));
	return hash.digest('hex');
}

export async function streamDigest(stream: AsyncIterable<Buffer>): Promise<string> {
	const hash = createHash('sha256');
	for await (const chunk of stream) hash.update(chunk);
	return hash.digest('hex');
}

type Repeat = { duplicateOf: number } | { holder: Holder };

/** Skip Repeats Within for one run: what its items found, took and left. */
export class Repeats {
	/** In item order: every item is checked, one after another, before the first send. */
	private readonly sends = new Map<number, IdentifiedSend>();
	private readonly causes: Causes;
	private readonly claims: SendClaims;
	private known: Promise<Map<number, Repeat>> | undefined;
	private readonly outcome = new Map<number, 'sent' | 'skipped' | 'maybe' | 'refused'>();
	private readonly skippedFor = new Set<string>();
	private notGivenBack = 0;

	constructor(
		private readonly run: RunContext<RepeatSettings>,
		private readonly hours: number,
	) {
		this.causes = new Causes(run.ctx);
		this.claims = new SendClaims(run.ctx, hours * 3_600_000);
	}

	/** At the check of an item: its message's key. */
	async identify(itemIndex: number, send: SendIdentity): Promise<void> {
		const { idempotencyKey } = this.run.options(itemIndex);
		const what = idempotencyKey
			? ['key', idempotencyKey]
			: ['content', ...(await send.content()).map(sameText), this.causes.of(itemIndex) ?? null];
		this.sends.set(itemIndex, {
			key: repeatKeyOf(this.run.credentials, send.operation, send.phone, what),
			phone: send.phone,
			repeatIsError: send.repeatIsError === true,
			given: idempotencyKey ? { key: idempotencyKey, content: send.content } : undefined,
		});
	}

	/** Before the item waits its turn: the output of a known repeat, else undefined. */
	async check(itemIndex: number): Promise<INodeExecutionData | undefined> {
		let known: Map<number, Repeat>;
		try {
			known = await (this.known ??= this.findKnown());
		} catch (error) {
			throw notAttempted(this.run, itemIndex, error);
		}
		const repeat = known.get(itemIndex);
		return repeat && this.skip(itemIndex, repeat);
	}

	/** Just before the request: the output of a repeat found only now, else undefined. */
	async take(itemIndex: number): Promise<INodeExecutionData | undefined> {
		let holder: Holder | undefined;
		try {
			holder = await this.claims.take(this.sends.get(itemIndex)!.key);
		} catch (error) {
			throw notAttempted(this.run, itemIndex, error);
		}
		return holder && this.skip(itemIndex, { holder });
	}

	/**
	 * Once `take` holds the claim: what was sent or may have been delivered stays claimed, the rest
	 * is given back.
	 */
	async settle(itemIndex: number, failure?: { error: unknown }): Promise<void> {
		const settlement = !failure
			? 'sent'
			: mayHaveBeenDelivered(failure.error)
				? 'maybe'
				: 'release';
		if (settlement !== 'release') this.outcome.set(itemIndex, settlement);
		try {
			await this.claims.settle(this.sends.get(itemIndex)!.key, settlement);
		} catch {
			if (settlement === 'release') this.notGivenBack++;
		}
	}

	/**
	 * After every item is checked, before the first send: what must not be sent at all. Two messages
	 * under one Idempotency Key would send only the first; a repeated question would end a run that
	 * already asked the ones before it.
	 */
	async refusals(): Promise<Map<number, NodeOperationError>> {
		const refused = new Map<number, NodeOperationError>();
		const sends = [...this.sends];
		const keys = new Set(sends.map(([, send]) => send.given?.key));
		// One key for every item (an expression over a missing field, say) while messages to one
		// number differ: all but the first would be skipped.
		if (sends.length > 1 && keys.size === 1 && !keys.has(undefined)) {
			const firstTo = new Map<string, { itemIndex: number; content: string }>();
			for (const [itemIndex, { phone, given }] of sends) {
				const content = JSON.stringify(await given!.content());
				const first = firstTo.get(phone);
				if (!first) firstTo.set(phone, { itemIndex, content });
				else if (first.content !== content)
					refused.set(itemIndex, this.sharedKey(itemIndex, first.itemIndex, given!.key));
			}
		}
		if (![...this.sends.values()].some((send) => send.repeatIsError)) return refused;
		let known: Map<number, Repeat>;
		try {
			known = await (this.known ??= this.findKnown());
		} catch (error) {
			for (const itemIndex of this.sends.keys())
				refused.set(itemIndex, notAttempted(this.run, itemIndex, error));
			return refused;
		}
		for (const [itemIndex, why] of known)
			if (this.sends.get(itemIndex)?.repeatIsError && !refused.has(itemIndex))
				refused.set(itemIndex, this.repeatedQuestion(itemIndex, why));
		return refused;
	}

	private sharedKey(itemIndex: number, first: number, key: string): NodeOperationError {
		return inputError(
			this.run.node,
			itemIndex,
			'Options → Idempotency Key',
			`is ${shown(key)} for every item, and item ${first} sends another message to the same number: one key stands for one message, so this one would never be sent`,
			'Give each message its own key: an expression over a field every item has, e.g. {{ $json.orderId }}; an expression over a missing field gives every item the same key. Or leave the key empty: then the content and the event tell messages apart.',
		);
	}

	/** Within-run duplicates, then the holders of the others, in one read. */
	private async findKnown(): Promise<Map<number, Repeat>> {
		const known = new Map<number, Repeat>();
		const firstWithKey = new Map<string, number>();
		for (const [itemIndex, { key }] of this.sends) {
			const first = firstWithKey.get(key);
			if (first === undefined) firstWithKey.set(key, itemIndex);
			else known.set(itemIndex, { duplicateOf: first });
		}
		const held = await this.claims.held([...firstWithKey.keys()]);
		for (const [key, holder] of held) known.set(firstWithKey.get(key)!, { holder });
		return known;
	}

	private skip(itemIndex: number, why: Repeat): INodeExecutionData {
		const send = this.sends.get(itemIndex)!;
		if (send.repeatIsError) {
			this.outcome.set(itemIndex, 'refused');
			throw this.repeatedQuestion(itemIndex, why);
		}
		this.outcome.set(itemIndex, 'skipped');
		if ('holder' in why) this.skippedFor.add(why.holder.executionId ?? '');
		const earlierSend: IDataObject =
			'duplicateOf' in why
				? { item: why.duplicateOf, executionId: this.executionId }
				: {
						executionId: why.holder.executionId,
						at: why.holder.at === null ? null : new Date(why.holder.at).toISOString(),
					};
		// n8n's store keeps no time, only the window's slot: the earliest the earlier send can have been.
		if ('holder' in why && why.holder.at === null)
			earlierSend.notBefore = new Date(why.holder.notBefore).toISOString();
		return {
			json: {
				skipped: true,
				reason: `Not sent again: ${'duplicateOf' in why ? `the same message as item ${why.duplicateOf} of this run` : this.describe(why.holder)} (Skip Repeats Within ${this.window})`,
				phone: send.phone,
				idempotencyKey: send.key,
				earlierSend,
				protection: this.claims.protection,
			},
			pairedItem: { item: itemIndex },
		};
	}

	/** A skipped question would pass on an item that reads as nobody's decision: it fails instead. */
	private repeatedQuestion(itemIndex: number, why: Repeat): NodeOperationError {
		const asker =
			'duplicateOf' in why ? undefined : (why.holder.executionId ?? 'an earlier execution');
		const earlier =
			'duplicateOf' in why
				? `item ${why.duplicateOf} of this run asks the same`
				: this.describe(why.holder).replace('the same message', 'the same question');
		const answer = asker
			? `The person's answer (or the wait's time limit) resumes ${asker === 'an earlier execution' ? asker : `execution ${asker}`}, the one that asked: see it for the answer.`
			: 'Only one of two equal questions can be answered.';
		return new NotAttemptedError(
			this.run.node,
			`Not asked again: ${earlier} (Skip Repeats Within ${this.window}) ${itemLabel(itemIndex)}`,
			itemIndex,
			`${answer} Running this input again within ${this.window} refuses it again. To ask again on purpose, set Options → Skip Repeats Within to 0 or give each question its own Idempotency Key.`,
		);
	}

	/** What n8n's Retry of the same input sends and skips, for a stopped run's error. */
	rerunNote(): string {
		const by = {
			sent: [] as number[],
			skipped: [] as number[],
			maybe: [] as number[],
			refused: [] as number[],
			none: [] as number[],
		};
		for (const [itemIndex, send] of this.sends) {
			const outcome = this.outcome.get(itemIndex) ?? 'none';
			// A question asked (or maybe asked) is refused by the next run, not skipped.
			by[send.repeatIsError && outcome !== 'none' ? 'refused' : outcome].push(itemIndex);
		}
		const skips = [
			by.sent.length ? `${itemList(by.sent)} (sent)` : '',
			by.skipped.length ? `${itemList(by.skipped)} (sent before)` : '',
			by.maybe.length ? `${itemList(by.maybe)} (may have been delivered: check the recipient)` : '',
		].filter(Boolean);
		const skipText = skips.length ? `skips ${skips.join(', ')}` : 'skips nothing';
		const sendText = by.none.length ? ` and sends ${itemList(by.none)}` : ', and sends nothing';
		// A refusal stops the re-run before its first send.
		const what = by.refused.length
			? `refuses ${itemList(by.refused)} again (asked before), and sends nothing`
			: skipText + sendText;
		return `Running the same input again within ${this.window} (n8n's Retry, a re-run) ${what}: Skip Repeats Within.`;
	}

	/** The run's hints: where the claims are kept, what was skipped, what could not be given back. */
	async finish(): Promise<void> {
		const { ctx } = this.run;
		this.notGivenBack += await this.claims.finish();
		const n = this.notGivenBack;
		if (n > 0)
			hint(
				ctx,
				`${n} message${n === 1 ? '' : 's'} not sent in this run could not be given back: a Retry within ${this.window} skips ${n === 1 ? 'it' : 'them'} as if sent.`,
				'warning',
			);
		if (this.claims.storeFailure)
			hint(
				ctx,
				`n8n's processed-items store could not record this run's messages (${this.claims.storeFailure}): Skip Repeats Within knows them only until n8n restarts.`,
				'warning',
			);
		if (this.claims.protection === 'process')
			hint(
				ctx,
				'Skip Repeats Within holds until n8n restarts: this n8n has no processed-items store (n8n 1.66 or newer keeps it in its database).',
				'warning',
			);
		const skipped = [...this.outcome.values()].filter((o) => o === 'skipped').length;
		const total = this.sends.size;
		const by = this.skippedBy();
		if (skipped === total && total > 0)
			hint(
				ctx,
				`Nothing was sent: ${total === 1 ? 'the message is a repeat' : `all ${total} messages are repeats`} of ${by}, within ${this.window} (Options → Skip Repeats Within), so ${total === 1 ? 'it was' : 'they were'} not sent again. Each item says when it was sent. To send again on purpose, give each event its own Idempotency Key or set Skip Repeats Within to 0.`,
				'warning',
			);
		else if (skipped > 0)
			hint(
				ctx,
				`${skipped} of ${total} messages were not sent again: repeats of ${by}, within ${this.window} (Options → Skip Repeats Within). Each skipped item says when.`,
				// A repeat of another execution may be a new event whose data looks the same: said loudly.
				this.skippedFor.size > 0 ? 'warning' : 'info',
			);
	}

	private get executionId(): string | null {
		return this.run.ctx.getExecutionId() ?? null;
	}

	private describe(holder: Holder): string {
		const by =
			holder.executionId === null
				? 'an earlier execution'
				: holder.executionId === this.executionId
					? 'an earlier try of this execution (Retry On Fail)'
					: `execution ${holder.executionId}`;
		const at = holder.at === null ? '' : ` at ${new Date(holder.at).toISOString()}`;
		switch (holder.state) {
			case 'sending':
				return `the same message was being sent by ${by}${at}, with no answer yet: it may have been delivered`;
			case 'sent':
				return `the same message was sent by ${by}${at}`;
			case 'maybe':
				return `the same message may have been delivered by ${by}${at} (its answer did not say it was not)`;
			case 'recorded':
				return holder.executionId === null
					? `the same message was sent by an earlier execution, not before ${new Date(holder.notBefore).toISOString()} (n8n's database holds it)`
					: `the same message is being sent by ${by}, or was (n8n's database holds it)`;
		}
	}

	private get window(): string {
		return `${this.hours} h`;
	}

	private skippedBy(): string {
		if (this.skippedFor.size === 0) return 'messages earlier in this run';
		const ids = [...this.skippedFor].filter(Boolean);
		const others = ids.filter((id) => id !== this.executionId);
		return listInWords([
			...(ids.length === 0 ? ['messages sent by an earlier execution'] : []),
			...(others.length
				? [
						`messages sent by ${others.length === 1 ? 'execution' : 'executions'} ${listInWords(others)}`,
					]
				: []),
			...(others.length < ids.length ? ['an earlier try of this execution (Retry On Fail)'] : []),
		]);
	}
}

/** Then its claim is kept; unknown failures count as may. */
function mayHaveBeenDelivered(error: unknown): boolean {
	const apiError =
		error instanceof ApiError ? error : (error as { apiError?: ApiError } | undefined)?.apiError;
	if (apiError) return apiError.deliveryUnknown;
	const known = error as { notAttempted?: boolean; sourceFailure?: boolean } | undefined;
	// Kept back without a request, or a download that failed (the gateway got an incomplete request).
	return known?.notAttempted !== true && known?.sourceFailure !== true;
}

function notAttempted(
	run: RunContext<unknown>,
	itemIndex: number,
	error: unknown,
): NotAttemptedError {
	const reason = error instanceof Error ? error.message : String(error);
	return new NotAttemptedError(
		run.node,
		`Not sent: Skip Repeats Within could not check whether this message was already sent: ${causeInWords(reason)} ${itemLabel(itemIndex)}`,
		itemIndex,
		'Check that n8n reaches its database (and, in queue mode, its Redis), or set Skip Repeats Within to 0 to send without this check.',
	);
}
