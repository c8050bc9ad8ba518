import { randomBytes } from 'crypto';
import {
	deepCopy,
	type IDataObject,
	type INodeExecutionData,
	type IPollFunctions,
} from 'n8n-workflow';

import { readCredential } from '../shared/credential';
import { toNodeError } from '../shared/errors';
import { checkAccount } from '../shared/gateway';
import { qrImage } from '../shared/qrImage';
import { ApiClient, ApiError, endpoints } from '../shared/transport';
import * as health from './health';
import { readSettings, type Settings } from './parameters';

const MEMORY_KEY = 'accountHealth';
/** Not enumerable, so n8n never saves it: a restart starts the count again, never stale. */
const ACTIVATION_KEY = 'accountHealthActivation';
type Activation = { polled: boolean; outage?: health.Snapshot['outage'] };

// A watched change without an event returns [[]]: n8n saves static data only when a poll returns
// something. Fetch Test Event leaves the memory alone.
export async function pollAccount(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
	const settings = readSettings(this);
	const credentials = await readCredential(this);
	const account = health.shortHash('account', credentials.baseUrl, credentials.clientId);
	const staticData = this.getWorkflowStaticData('node');
	const stored = staticData[MEMORY_KEY] as Partial<health.Memory> | undefined;
	const previous: health.Memory =
		stored?.v === 1 && stored.account === account && typeof stored.salt === 'string'
			? deepCopy(stored as health.Memory)
			: { v: 1, account, salt: randomBytes(12).toString('hex') };
	const client = new ApiClient(credentials);

	if (this.getMode() === 'manual') {
		const current = await look(client, settings, previous.salt);
		if (current.failures.length > 0) throw failureOf(this, current, settings);
		return [await toItems(this, health.samples(previous, current, settings), settings, current.at)];
	}
	if (!Object.hasOwn(staticData, ACTIVATION_KEY))
		Object.defineProperty(staticData, ACTIVATION_KEY, { value: { polled: false } });
	const activation = staticData[ACTIVATION_KEY] as unknown as Activation;
	const current = await look(client, settings, previous.salt, activation.outage);
	const { items, memory, unknownBefore } = health.decide(previous, current, settings);
	// n8n saves static data after the first poll of an activation, whatever it returns.
	const firstPoll = !activation.polled;
	Object.assign(activation, { polled: true, outage: current.outage });
	// The items first: the memory moves on only with what was reported.
	const output = await toItems(this, items, settings, current.at);
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

/** Each part a chosen event watches: its request, and its answer read into the snapshot. */
const PARTS = {
	session: async (client: ApiClient) => health.sessionOf(await client.call(endpoints.status)),
	// Check Account takes a webhook too; empty, so that nothing is claimed for this account.
	webhook: async (client: ApiClient, settings: Settings, salt: string) => {
		const params = { whatsapp_number: settings.accountNumber, whatsapp_webhook: '' };
		return health.webhookOf(await checkAccount(client, params, settings), salt);
	},
	usage: async (client: ApiClient, settings: Settings) =>
		health.usageOf(await client.call(endpoints.limit), settings.usageRule),
};

async function look(
	client: ApiClient,
	settings: Settings,
	salt: string,
	outageBefore?: health.Snapshot['outage'],
): Promise<health.Snapshot> {
	const snapshot: health.Snapshot = { at: new Date().toISOString(), failures: [] };
	const watched = (['session', 'webhook', 'usage'] as const).filter((p) =>
		health.watches(settings, p),
	);
	const parts = watched.length > 0 ? watched : (['session'] as const);
	const answers = await Promise.allSettled(
		parts.map(async (part) => await PARTS[part](client, settings, salt)),
	);
	for (const [index, answer] of answers.entries()) {
		const part = parts[index];
		if (answer.status === 'fulfilled') Object.assign(snapshot, { [part]: answer.value });
		else
			snapshot.failures.push({ part, error: answer.reason, noAnswer: isNoAnswer(answer.reason) });
	}
	const last = snapshot.failures.at(-1);
	if (last && snapshot.failures.filter((failure) => failure.noAnswer).length === parts.length) {
		const { polls = 0, since = snapshot.at } = outageBefore ?? {};
		snapshot.outage = { polls: polls + 1, since, error: last.error.message };
	}
	return snapshot;
}

const isNoAnswer = (error: unknown) =>
	error instanceof ApiError &&
	(['network', 'timeout', 'invalid-response'].includes(error.kind) ||
		(error.kind === 'http' && (error.httpStatus ?? 0) >= 500));

const PICK_UNREACHABLE =
	' Pick "Gateway Unreachable" in Events to Watch to get one event instead of a failed execution per poll.';

function failureOf(ctx: IPollFunctions, { failures, outage }: health.Snapshot, settings: Settings) {
	const action = "read the account's health";
	const error = toNodeError(ctx.getNode(), failures[0]?.error, { action });
	if (outage && outage.polls > 1) {
		const pick = settings.events.has('gatewayUnreachable') ? '' : PICK_UNREACHABLE;
		const since = `The gateway has not answered ${outage.polls} polls in a row (since ${outage.since}).`;
		error.description = `${error.description ?? ''} ${since}${pick}`.trim();
	}
	return error;
}

async function toItems(
	ctx: IPollFunctions,
	events: health.HealthEvent[],
	{ qrField }: Settings,
	checkedAt: string,
): Promise<INodeExecutionData[]> {
	return await Promise.all(
		events.map(async ({ qrCode, ...fields }): Promise<INodeExecutionData> => {
			const json: IDataObject = { ...fields, checkedAt };
			if (qrCode === undefined) return { json };
			const qr = await qrImage(qrCode).catch((error: Error) => error);
			// A code no image can hold still needs a scan: the event goes out and says why it has none.
			if (qr instanceof Error) {
				json.qrImageError = `No image: ${qr.message}. Scan the code on the gateway's own page.`;
				return { json };
			}
			const binary = await ctx.helpers.prepareBinaryData(qr.image, qr.fileName, qr.mimeType);
			return { json: { ...json, qrImageField: qrField }, binary: { [qrField]: binary } };
		}),
	);
}
