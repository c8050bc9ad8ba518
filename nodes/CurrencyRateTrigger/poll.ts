import {
	NodeOperationError,
	type IDataObject,
	type INodeExecutionData,
	type IPollFunctions,
} from 'n8n-workflow';

import { apiClientFor } from '../shared/credential';
import { toNodeError } from '../shared/errors';
import { fetchRateTable } from '../shared/rates/rateBook';
import type { RateTable } from '../shared/rates/rateTable';
import { decide, readMemory, sampleEvents, type RateEvent } from './rateWatch';
import { readTriggerSettings, type TriggerSettings } from './parameters';

const MEMORY_KEY = 'rateWatch';

// Fetch Test Event leaves the memory alone: testing never moves the active workflow's baseline.
export async function pollRates(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
	const settings = readTriggerSettings(this);
	const staticData = this.getWorkflowStaticData('node');
	const known = readMemory(staticData[MEMORY_KEY], settings);
	const table = await fetchTable(this, settings);
	// A watched currency seen before and missing now is a gap; one never seen is a wrong setting.
	const unknown = settings.currencies.filter(
		(code) => !table.quotes.has(code) && !known?.rates[code],
	);
	if (unknown.length > 0) {
		throw new NodeOperationError(
			this.getNode(),
			`Field "Currencies" holds ${unknown.map((code) => `"${code}"`).join(', ')}, which provider "${settings.provider}" does not offer; it offers ${[...table.quotes.keys()].join(', ') || 'no currencies at the moment'}`,
			{ description: 'Use the listed codes, or another provider.' },
		);
	}
	if (this.getMode() === 'manual') return [toItems(sampleEvents(settings, table, known))];

	const { events, memory, mustSave } = decide(settings, table, known, settings.fireOnFirstPoll);
	staticData[MEMORY_KEY] = memory as unknown as IDataObject;
	if (events.length > 0) return [toItems(events)];
	// n8n saves static data after a poll only when it returns something: an empty result saves it.
	return mustSave ? [[]] : null;
}

async function fetchTable(ctx: IPollFunctions, settings: TriggerSettings): Promise<RateTable> {
	const client = await apiClientFor(ctx);
	try {
		return await fetchRateTable(client, settings.provider, settings.version);
	} catch (error) {
		const action = `fetch the rates of provider "${settings.provider}"`;
		throw toNodeError(ctx.getNode(), error, { action });
	}
}

function toItems(events: RateEvent[]): INodeExecutionData[] {
	return events.map((event) => ({ json: event as unknown as IDataObject }));
}
