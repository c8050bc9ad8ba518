import { createHash, createHmac } from 'crypto';
import { NodeOperationError, type IDataObject, type IExecuteFunctions } from 'n8n-workflow';

import { NotAttemptedError, causeInWords, itemLabel, itemList } from '../../shared/errors';
import type { CallGate, GateOutcome, ItemFate } from '../../shared/execution/itemScheduler';
import { ApiError } from '../../shared/transport';
import type { MessagingRun } from '../parameters';
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
}

export interface IdentifiedSend {
	key: string;
	phone: string;
}

export async function identifyRepeat(
	run: MessagingRun,
	itemIndex: number,
	send: SendIdentity,
): Promise<void> {
	const options = run.options(itemIndex);
	if (!(options.skipRepeatsHours > 0)) return;
	run.sends.set(itemIndex, {
		key: await repeatKeyOf(run, itemIndex, send.operation, send.phone, options.idempotencyKey, () =>
			send.content(),
		),
		phone: send.phone,
	});
}

/**
 * What makes two messages the same: the Idempotency Key; else the recipient, the content and,
 * from version 2 on, the cause (the event the item comes from).
 */
async function repeatKeyOf(
	run: MessagingRun,
	itemIndex: number,
	operation: string,
	phone: string,
	idempotencyKey: string,
	content: () => unknown[] | Promise<unknown[]>,
): Promise<string> {
	const { baseUrl, clientId, clientSecret } = run.credentials;
	let what: unknown[];
	if (idempotencyKey) what = ['key', idempotencyKey];
	else {
		const cause =
			run.node.typeVersion >= 2 ? (run.causes ??= new Causes(run.ctx)).of(itemIndex) : undefined;
		what = ['content', ...(await content()).map(sameText), cause ?? null];
	}
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

export function idempotencyGate(ctx: IExecuteFunctions, run: MessagingRun): CallGate | undefined {
	const hours = run.runOptions.skipRepeatsHours;
	return hours > 0 ? new IdempotencyGate(ctx, run, hours) : undefined;
}

class IdempotencyGate implements CallGate {
	private claims: SendClaims | undefined;
	private readonly claimed = new Map<number, string>();
	private skippedCount = 0;
	private readonly skippedFor = new Set<string>();

	constructor(
		private readonly ctx: IExecuteFunctions,
		private readonly run: MessagingRun,
		private readonly hours: number,
	) {}

	private get sends(): Map<number, IdentifiedSend> {
		return this.run.sends;
	}

	async admit(itemIndexes: number[]): Promise<Map<number, GateOutcome>> {
		const decided = new Map<number, GateOutcome>();
		const firstWithKey = new Map<string, number>();
		const toClaim: number[] = [];
		for (const itemIndex of itemIndexes) {
			const send = this.sends.get(itemIndex);
			if (!send) continue;
			const first = firstWithKey.get(send.key);
			if (first === undefined) {
				firstWithKey.set(send.key, itemIndex);
				toClaim.push(itemIndex);
			} else {
				decided.set(itemIndex, this.skip(itemIndex, { duplicateOf: first }));
			}
		}
		if (toClaim.length === 0) return decided;
		this.claims = new SendClaims(this.ctx, this.hours * 3_600_000);
		let results;
		try {
			results = await this.claims.claim(toClaim.map((i) => this.sends.get(i)!.key));
		} catch (error) {
			for (const itemIndex of toClaim)
				decided.set(itemIndex, { error: notAttempted(this.run, itemIndex, error) });
			return decided;
		}
		toClaim.forEach((itemIndex, i) => {
			const result = results[i];
			if (result.won) this.claimed.set(itemIndex, this.sends.get(itemIndex)!.key);
			else decided.set(itemIndex, this.skip(itemIndex, { holder: result.holder }));
		});
		this.hintAtSkips();
		return decided;
	}

	// Marked just before the request, never earlier: a dead worker leaves exactly the messages it may
	// have sent marked; marking ahead would make the next, unsent one "may have been delivered".
	async beforeCall(itemIndex: number): Promise<GateOutcome | undefined> {
		const key = this.claimed.get(itemIndex);
		if (!key || !this.claims) return undefined;
		let holder: Holder | undefined;
		try {
			holder = await this.claims.dispatch(key);
		} catch (error) {
			return { error: notAttempted(this.run, itemIndex, error) };
		}
		if (!holder) return undefined;
		// Another run took the claim over (this one was thought dead): it sends, this one does not.
		this.claimed.delete(itemIndex);
		return this.skip(itemIndex, { holder });
	}

	async settle(fates: ItemFate[]): Promise<void> {
		if (!this.claims) return;
		const outcomes = [...this.claimed].map(
			([itemIndex, key]): [string, 'sent' | 'maybe' | 'release'] => {
				const fate = fates[itemIndex];
				if (fate.kind === 'done') return [key, 'sent'];
				if (fate.kind === 'failed' && mayHaveBeenDelivered(fate.error)) return [key, 'maybe'];
				return [key, 'release'];
			},
		);
		try {
			await this.claims.settle(outcomes);
		} catch (error) {
			const released = outcomes.filter(([, outcome]) => outcome === 'release').length;
			if (released > 0)
				this.hint(
					`${released} message${released === 1 ? '' : 's'} not sent in this run could not be given back (${reasonOf(error)}): a Retry within ${this.window} skips ${released === 1 ? 'it' : 'them'} as if sent.`,
					'warning',
				);
		}
	}

	rerunNote(fates: ItemFate[]): string {
		const sent: number[] = [];
		const before: number[] = [];
		const maybe: number[] = [];
		const resend: number[] = [];
		for (const itemIndex of [...this.sends.keys()].sort((a, b) => a - b)) {
			const fate = fates[itemIndex];
			if (fate.kind === 'done') sent.push(itemIndex);
			else if (fate.kind === 'skipped') before.push(itemIndex);
			else if (fate.kind === 'failed' && mayHaveBeenDelivered(fate.error)) maybe.push(itemIndex);
			else resend.push(itemIndex);
		}
		const skips = [
			sent.length ? `${itemList(sent)} (sent)` : '',
			before.length ? `${itemList(before)} (sent before)` : '',
			maybe.length ? `${itemList(maybe)} (may have been delivered: check the recipient)` : '',
		].filter(Boolean);
		if (skips.length === 0 && resend.length === 0) return '';
		const skipText = skips.length ? `skips ${skips.join(', ')}` : 'skips nothing';
		const sendText = resend.length ? ` and sends ${itemList(resend)}` : ', and sends nothing';
		return `Running the same input again within ${this.window} (n8n's Retry, a re-run) ${skipText}${sendText}: Skip Repeats Within.`;
	}

	private get window(): string {
		return `${this.hours} h`;
	}

	private skip(itemIndex: number, why: { duplicateOf: number } | { holder: Holder }): GateOutcome {
		if (this.ctx.getNodeParameter('operation', 0) === 'sendAndWait')
			return { error: this.repeatedQuestion(itemIndex, why) };
		this.skippedCount++;
		if ('holder' in why) this.skippedFor.add(why.holder.executionId ?? '');
		const send = this.sends.get(itemIndex)!;
		const earlierSend: IDataObject =
			'duplicateOf' in why
				? { item: why.duplicateOf, executionId: this.ctx.getExecutionId() ?? null }
				: {
						executionId: why.holder.executionId,
						at: why.holder.at === null ? null : new Date(why.holder.at).toISOString(),
						notBefore: new Date(why.holder.notBefore).toISOString(),
					};
		return {
			output: {
				json: {
					skipped: true,
					reason: `Not sent again: ${'duplicateOf' in why ? `the same message as item ${why.duplicateOf} of this run` : describeHolder(why.holder)} (Skip Repeats Within ${this.window})`,
					phone: send.phone,
					idempotencyKey: send.key,
					earlierSend,
					protection: this.claims?.protection ?? 'process',
				},
				pairedItem: { item: itemIndex },
			},
		};
	}

	/** A skipped question would pass on an item that reads as nobody's decision: it fails instead. */
	private repeatedQuestion(
		itemIndex: number,
		why: { duplicateOf: number } | { holder: Holder },
	): NodeOperationError {
		const earlier =
			'duplicateOf' in why
				? `item ${why.duplicateOf} of this run asks the same`
				: describeHolder(why.holder).replace('the same message', 'the same question');
		return new NotAttemptedError(
			this.run.node,
			`Not asked again: ${earlier} (Skip Repeats Within ${this.window}) ${itemLabel(itemIndex)}`,
			itemIndex,
			'The answer to the earlier question resumes the execution that asked it; this item carries no answer. To ask again on purpose, set Options → Skip Repeats Within to 0 or give each question its own Idempotency Key.',
		);
	}

	private hintAtSkips(): void {
		if (this.claims?.protection === 'process')
			this.hint(
				'Skip Repeats Within holds until n8n restarts: this n8n has no processed-items store (n8n 1.66 or newer keeps it in its database).',
				'warning',
			);
		if (this.skippedCount === 0) return;
		const total = this.sends.size;
		const by = this.skippedBy();
		if (this.skippedCount === total)
			this.hint(
				`Nothing was sent: ${total === 1 ? 'the message is a repeat' : `all ${total} messages are repeats`} of ${by}, within ${this.window} (Options → Skip Repeats Within), so ${total === 1 ? 'it was' : 'they were'} not sent again. Each item says when it was sent. To send again on purpose, set Skip Repeats Within to 0.`,
				'warning',
			);
		else
			this.hint(
				`${this.skippedCount} of ${total} messages were not sent again: repeats of ${by}, within ${this.window} (Options → Skip Repeats Within). Each skipped item says when.`,
				'info',
			);
	}

	private skippedBy(): string {
		if (this.skippedFor.size === 0) return 'messages earlier in this run';
		const ids = [...this.skippedFor].filter(Boolean);
		if (ids.length === 0) return 'messages sent by an earlier execution';
		const list =
			ids.length === 1 ? ids[0] : `${ids.slice(0, -1).join(', ')} and ${ids[ids.length - 1]}`;
		return `messages sent by ${ids.length === 1 ? 'execution' : 'executions'} ${list}`;
	}

	private hint(message: string, type: 'info' | 'warning'): void {
		// addExecutionHints exists in newer n8n only.
		(this.ctx as Partial<IExecuteFunctions>).addExecutionHints?.({
			message,
			type,
			location: 'outputPane',
		});
	}
}

function describeHolder(holder: Holder): string {
	const by = holder.executionId ? `execution ${holder.executionId}` : 'an earlier execution';
	const at = holder.at === null ? '' : ` at ${new Date(holder.at).toISOString()}`;
	switch (holder.state) {
		case 'sending':
			return `the same message is being sent by ${by} now`;
		case 'sent':
			return `the same message was sent by ${by}${at}`;
		case 'maybe':
			return `the same message may have been delivered by ${by}${at} (its answer was lost)`;
		case 'stopped':
			return `${by} stopped while sending the same message${at}: it may have been delivered`;
		case 'recorded':
			return `the same message was sent by an earlier execution, not before ${new Date(holder.notBefore).toISOString()} (n8n's database holds it)`;
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

function reasonOf(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

function notAttempted(run: MessagingRun, itemIndex: number, error: unknown): NotAttemptedError {
	return new NotAttemptedError(
		run.node,
		`Not sent: Skip Repeats Within could not check whether this message was already sent: ${causeInWords(reasonOf(error))} ${itemLabel(itemIndex)}`,
		itemIndex,
		'Check that n8n reaches its database (and, in queue mode, its Redis), or set Skip Repeats Within to 0 to send without this check.',
	);
}
