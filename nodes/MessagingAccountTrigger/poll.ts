import { randomBytes } from 'crypto';
import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';

import { readCredential } from '../shared/credential';
import { toNodeError } from '../shared/errors';
import { checkAccount } from '../shared/gatewayAccount';
import { qrImage } from '../shared/qrImage';
import { ApiClient, ApiError, endpoints } from '../shared/transport';
import * as health from './health';
import { readTriggerSettings, type TriggerSettings } from './parameters';

const MEMORY_KEY = 'accountHealth';
/** Not enumerable, so n8n never saves it: a restart starts the count again, never stale. */
const ACTIVATION_KEY = 'accountHealthActivation';
type Activation = { polled: boolean; outage?: health.Snapshot['outage'] };

// A watched change without an event returns [[]]: n8n saves static data only when a poll returns
// something. Fetch Test Event leaves the memory alone.
export async function pollAccount(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
	const settings = readTriggerSettings(this);
	const credentials = await readCredential(this);
	const account = health.shortHash('account', credentials.baseUrl, credentials.clientId);
	const staticData = this.getWorkflowStaticData('node');
	const stored = staticData[MEMORY_KEY];
	const salt = randomBytes(12).toString('hex');
	const previous = health.readMemory(stored, account) ?? { v: 1, account, salt };
	const at = new Date().toISOString();
	const answers = await ask(new ApiClient(credentials), settings);

	if (this.getMode() === 'manual') {
		const current = health.readSnapshot(answers, at, previous.salt, settings);
		if (current.failures.length > 0) throw failureOf(this, current, settings);
		return [await toItems(this, health.samples(previous, current, settings), settings, at)];
	}
	if (!Object.hasOwn(staticData, ACTIVATION_KEY))
		Object.defineProperty(staticData, ACTIVATION_KEY, { value: { polled: false } });
	const activation = staticData[ACTIVATION_KEY] as unknown as Activation;
	const current = health.readSnapshot(answers, at, previous.salt, settings, activation.outage);
	const { items, memory, unknownBefore } = health.events(previous, current, settings);
	// n8n saves static data after the first poll of an activation, whatever it returns.
	const firstPoll = !activation.polled;
	Object.assign(activation, { polled: true, outage: current.outage });
	// The items first: the memory moves on only with what was reported.
	const output = await toItems(this, items, settings, at);
	if (asJson(stored) !== asJson(memory)) staticData[MEMORY_KEY] = memory as unknown as IDataObject;

	if (output.length > 0) return [output];
	if (unknownBefore) throw failureOf(this, current, settings);
	// Every change but the status word within one state is saved, with an empty result.
	if (!firstPoll && asJson(stored, 'status') !== asJson(memory, 'status')) return [[]];
	const quiet =
		firstPoll ||
		current.failures.every((f) => f.noAnswer && settings.events.has('gatewayUnreachable'));
	if (quiet) return null;
	throw failureOf(this, current, settings);
}

/** Keys sorted: a database may reorder them. */
const asJson = (memory: unknown, leaveOut?: string) =>
	JSON.stringify(memory ?? null, (key, field: unknown) => {
		if (key === leaveOut) return undefined;
		if (!field || typeof field !== 'object') return field;
		return Object.fromEntries(Object.entries(field).sort(([a], [b]) => (a < b ? -1 : 1)));
	});

async function ask(client: ApiClient, settings: TriggerSettings): Promise<health.Answers> {
	const request = {
		session: () => client.call(endpoints.status),
		// Check Account takes a webhook too; empty, so that nothing is claimed for this account.
		webhook: () =>
			checkAccount(
				client,
				{ whatsapp_number: settings.accountNumber, whatsapp_webhook: '' },
				{ version: settings.version },
			),
		usage: () => client.call(endpoints.limit),
	};
	const parts = (['session', 'webhook', 'usage'] as const).filter((part) =>
		health.watches(settings, part),
	);
	const answers = await Promise.all(
		(parts.length > 0 ? parts : (['session'] as const)).map(async (part) => {
			try {
				return [part, { ok: true, value: await request[part]() }];
			} catch (caught) {
				const error = caught instanceof Error ? caught : new Error(String(caught));
				return [part, { ok: false, error, noAnswer: isNoAnswer(error) }];
			}
		}),
	);
	return Object.fromEntries(answers) as health.Answers;
}

const isNoAnswer = (error: Error) =>
	error instanceof ApiError &&
	(['network', 'timeout', 'invalid-response'].includes(error.kind) ||
		(error.kind === 'http' && (error.httpStatus ?? 0) >= 500));

function failureOf(
	ctx: IPollFunctions,
	{ failures, outage }: health.Snapshot,
	settings: TriggerSettings,
) {
	const error = toNodeError(ctx.getNode(), failures[0]?.error ?? new Error('the poll failed'), {
		action: "read the account's health",
	});
	if (outage && outage.polls > 1)
		error.description =
			`${error.description ?? ''} The gateway has not answered ${outage.polls} polls in a row (since ${outage.since}).${settings.events.has('gatewayUnreachable') ? '' : ' Pick "Gateway Unreachable" in Trigger On to get one event instead of a failed execution per poll.'}`.trim();
	return error;
}

async function toItems(
	ctx: IPollFunctions,
	events: health.HealthEvent[],
	settings: TriggerSettings,
	checkedAt: string,
): Promise<INodeExecutionData[]> {
	return await Promise.all(
		events.map(async ({ qrCode, ...fields }): Promise<INodeExecutionData> => {
			const json: IDataObject = { ...fields, checkedAt };
			if (qrCode === undefined) return { json };
			const qr = await qrImage(qrCode).catch((error: Error) => error);
			// A code no image can hold still needs a scan: the event goes out and says why it has no image.
			if (qr instanceof Error)
				return {
					json: {
						...json,
						qrImageError: `No image: ${qr.message}. Scan the code on the gateway's own page.`,
					},
				};
			const binary = await ctx.helpers.prepareBinaryData(qr.image, qr.fileName, qr.mimeType);
			return {
				json: { ...json, qrImageField: settings.qrField },
				binary: { [settings.qrField]: binary },
			};
		}),
	);
}
