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

const MEMORY_KEY = 'rateWatch';

/** n8n saves static data after an activation's first poll, later only if a poll returns results. */
const polledActivations = new WeakSet<object>();

// Fetch Test Event leaves the memory alone: testing never moves the active workflow's baseline.
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
