import { randomBytes } from 'crypto';
import { type IDataObject, type INodeExecutionData, type IPollFunctions } from 'n8n-workflow';

import { readCredential } from '../shared/credential';
import { toNodeError } from '../shared/errors';
import { checkAccount, readAccountAnswer } from '../shared/gatewayAccount';
import { readSessionAnswer } from '../shared/gatewaySession';
import { qrImage } from '../shared/qrImage';
import { ApiClient, ApiError, endpoints } from '../shared/transport';
import { readUsageLimit } from '../shared/usageLimit';
import {
	decide,
	readMemory,
	requestsFor,
	sampleEvents,
	shortHash,
	type HealthEvent,
	type Observation,
	type PollDecision,
	type PollStreak,
	type Reading,
	type SessionReading,
	type WebhookReading,
} from './healthWatch';
import { readTriggerSettings, type TriggerSettings } from './parameters';

/** Where the trigger keeps what it saw, in the node's static data (saved with the workflow). */
const MEMORY_KEY = 'accountHealth';

/**
 * Failed polls in a row, per activation: keyed by the node's static data object, which lives as
 * long as n8n's `Workflow` of the activation (a restart, reactivation or update starts anew). It
 * is never saved, so that a save does not carry a count that a restart would make stale.
 */
const streaks = new WeakMap<object, PollStreak>();

/**
 * One poll: the requests the chosen events need (at most three), compared with what earlier
 * polls saw (healthWatch.ts). Returns the events that fired; an empty result when a watched state
 * changed without firing, so that n8n saves the memory (it saves static data only when a poll
 * returns something, and once after activation); or null. In the editor ("Fetch Test Event",
 * manual mode) it returns one sample item per chosen event from the account's state now and leaves
 * the memory alone.
 */
export async function pollAccount(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
	const settings = readTriggerSettings(this);
	const credentials = await readCredential(this);
	const account = shortHash('account', credentials.baseUrl, credentials.clientId);
	const observation = await observe(new ApiClient(credentials), settings);
	const staticData = this.getWorkflowStaticData('node');
	const stored = staticData[MEMORY_KEY];
	const remembered = readMemory(stored, account);

	if (this.getMode() === 'manual') {
		const failure = [observation.session, observation.webhook, observation.usage].find(
			(reading) => reading && !reading.ok,
		);
		if (failure && !failure.ok) throw pollError(this, failure.error, undefined);
		return [
			await toItems(
				this,
				sampleEvents(settings, observation, remembered),
				settings,
				observation.at,
			),
		];
	}

	// The first poll of an activation: n8n saves static data right after it, whatever it returns.
	const firstPoll = !streaks.has(staticData);
	const decision = decide(
		settings,
		remembered,
		observation,
		streaks.get(staticData) ?? { failed: 0 },
		{
			account,
			salt: randomBytes(12).toString('hex'),
		},
	);
	streaks.set(staticData, decision.streak);
	if (JSON.stringify(decision.memory) !== JSON.stringify(stored ?? null))
		staticData[MEMORY_KEY] = decision.memory as unknown as IDataObject;

	if (decision.events.length > 0)
		return [await toItems(this, decision.events, settings, observation.at)];
	if (decision.baselineFailed) throw failureOf(this, decision, settings);
	if (decision.mustSave && !firstPoll) return [[]];
	if (decision.failures.length === 0 || firstPoll) return null;
	const quiet =
		settings.events.has('gatewayUnreachable') && decision.failures.every((f) => f.noAnswer);
	if (quiet) return null;
	throw failureOf(this, decision, settings);
}

/** The requests the events need, at the same time; each one's answer or failure. */
async function observe(client: ApiClient, settings: TriggerSettings): Promise<Observation> {
	const at = new Date().toISOString();
	const needs = requestsFor(settings.events);
	const [session, webhook, usage] = await Promise.all([
		needs.session ? reading(async () => sessionOf(await client.call(endpoints.status))) : undefined,
		needs.webhook
			? reading(async () =>
					webhookOf(
						await checkAccount(
							client,
							// Check Account takes a webhook too; empty, so that nothing is claimed for this account.
							{ whatsapp_number: settings.accountNumber, whatsapp_webhook: '' },
							{ version: settings.version },
						),
					),
				)
			: undefined,
		needs.usage
			? reading(async () => readUsageLimit(await client.call(endpoints.limit)))
			: undefined,
	]);
	return { at, session, webhook, usage };
}

async function reading<T>(request: () => Promise<T>): Promise<Reading<T>> {
	try {
		return { ok: true, value: await request() };
	} catch (error) {
		const failure = error instanceof Error ? error : new Error(String(error));
		return { ok: false, error: failure, noAnswer: isNoAnswer(failure) };
	}
}

/** The gateway gave no answer at all: the network, a time-out, or a proxy's page instead of the API. */
function isNoAnswer(error: Error): boolean {
	if (!(error instanceof ApiError)) return false;
	if (error.kind === 'network' || error.kind === 'timeout' || error.kind === 'invalid-response')
		return true;
	return error.kind === 'http' && (error.httpStatus ?? 0) >= 500;
}

function sessionOf(result: unknown): SessionReading {
	const session = readSessionAnswer(result);
	if (!session.stated)
		throw new Error(
			`Get Status answered without a status or a QR code${session.hint ? `: "${session.hint}"` : ''}`,
		);
	return {
		connected: session.connected,
		status: session.status,
		qrCode: session.qrCode,
		hint: session.hint,
	};
}

function webhookOf(result: unknown): WebhookReading {
	const url = readAccountAnswer(result).webhookUrl;
	if (url === undefined)
		throw new Error(
			'Check Account answered without the webhook, so this gateway cannot tell when it changes',
		);
	return { url };
}

/** The error of a failed poll: the first failure, with how long polls have been failing. */
function failureOf(ctx: IPollFunctions, decision: PollDecision, settings: TriggerSettings): Error {
	const first = decision.failures[0];
	const streak = decision.streak;
	const inARow =
		streak.failed > 1
			? ` The gateway has not answered ${streak.failed} polls in a row (since ${streak.since}).${settings.events.has('gatewayUnreachable') ? '' : ' Pick "Gateway Unreachable" in Trigger On to get one event instead of a failed execution per poll.'}`
			: '';
	return pollError(ctx, first?.error ?? new Error('the poll failed'), inARow);
}

function pollError(ctx: IPollFunctions, error: Error, more: string | undefined): Error {
	const nodeError = toNodeError(ctx.getNode(), error, { action: "read the account's health" });
	if (more) nodeError.description = `${nodeError.description ?? ''}${more}`.trim();
	return nodeError;
}

/** The events as output items; a QR code becomes a PNG in the binary field, never JSON. */
async function toItems(
	ctx: IPollFunctions,
	events: HealthEvent[],
	settings: TriggerSettings,
	checkedAt: string,
): Promise<INodeExecutionData[]> {
	const items: INodeExecutionData[] = [];
	for (const { qrCode, ...fields } of events) {
		const json = { ...fields, checkedAt } as IDataObject;
		if (qrCode === undefined) {
			items.push({ json });
			continue;
		}
		const qr = await qrImage(qrCode);
		json.qrImageField = settings.qrField;
		items.push({
			json,
			binary: {
				[settings.qrField]: await ctx.helpers.prepareBinaryData(qr.image, qr.fileName, qr.mimeType),
			},
		});
	}
	return items;
}
