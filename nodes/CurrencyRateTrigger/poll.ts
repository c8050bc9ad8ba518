import {
	NodeOperationError,
	type IDataObject,
	type INodeExecutionData,
	type IPollFunctions,
} from 'n8n-workflow';

import { apiClientFor } from '../shared/credential';
import { toNodeError } from '../shared/errors';
import { RateBook } from '../shared/rates/rateBook';
import type { KnownRates, RateTable } from '../shared/rates/rateTable';
import { decide, knownRates, readMemory, sampleEvents, type RateEvent } from './rateWatch';
import { readTriggerSettings, type TriggerSettings } from './parameters';

/** Where the trigger keeps what it saw, in the node's static data (saved with the workflow). */
const MEMORY_KEY = 'rateWatch';

/**
 * The static data objects of activations that have polled: n8n saves static data after the
 * first poll of an activation whatever it returns, and later only when a poll returns something.
 */
const polledActivations = new WeakSet<object>();

/**
 * One poll: one rates request, compared with what the last polls saw. Returns one item per
 * currency that fired; an empty result when a threshold side changed without an event, so that
 * n8n saves it (an execution with no items); or null (n8n then starts no execution). In the editor ("Fetch Test Event",
 * manual mode) it returns the current rates as sample items and leaves the memory alone, so
 * testing never moves the active workflow's baseline.
 */
export async function pollRates(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
	const settings = readTriggerSettings(this);
	const staticData = this.getWorkflowStaticData('node');
	const remembered = readMemory(staticData[MEMORY_KEY]);
	// The answer is read the way earlier answers were (their number format, the rates seen).
	const table = await fetchTable(this, settings, knownRates(settings, remembered));

	if (this.getMode() === 'manual') {
		return [toItems(sampleEvents(settings, table, remembered), settings)];
	}
	const { events, memory, mustSave } = decide(
		settings,
		table,
		remembered,
		settings.fireOnFirstPoll,
	);
	staticData[MEMORY_KEY] = memory as unknown as IDataObject;
	const firstPoll = !polledActivations.has(staticData);
	polledActivations.add(staticData);
	if (events.length > 0) return [toItems(events, settings)];
	return mustSave && !firstPoll ? [[]] : null;
}

/** The provider's table, through the shared transport (its token cache) and the rates helpers. */
async function fetchTable(
	ctx: IPollFunctions,
	settings: TriggerSettings,
	known: KnownRates,
): Promise<RateTable> {
	const node = ctx.getNode();
	const client = await apiClientFor(ctx);
	let table: RateTable;
	try {
		table = await new RateBook({ client, sourceKey: '', keepMinutes: 0 }).tableFor(
			settings.provider,
			settings.version,
			known,
		);
	} catch (error) {
		throw toNodeError(node, error, {
			action: `fetch the rates of provider "${settings.provider}"`,
		});
	}
	const missing = settings.currencies.filter((code) => !table.quotes.has(code));
	if (missing.length > 0) {
		throw new NodeOperationError(
			node,
			`Field "Currencies" holds ${missing.map((code) => `"${code}"`).join(', ')}, which provider "${settings.provider}" does not offer; it offers ${table.codes.join(', ') || 'no currencies at the moment'}`,
			{ description: 'Use the listed codes, or another provider.' },
		);
	}
	return table;
}

function toItems(events: RateEvent[], settings: TriggerSettings): INodeExecutionData[] {
	return events.map((event) => {
		const { provider, currency, ...rest } = event;
		return {
			json: {
				provider,
				currency,
				baseCurrency: settings.baseCurrency,
				...rest,
			} as unknown as IDataObject,
		};
	});
}
