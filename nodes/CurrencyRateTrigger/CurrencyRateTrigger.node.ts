import {
	NodeConnectionTypes,
	type IDataObject,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
	type IPollFunctions,
} from 'n8n-workflow';

import { apiClientFor } from '../shared/credential';
import { messagingRateApiTest } from '../shared/credentialTest';
import { nodeDocumentationUrl } from '../shared/documentationUrl';
import { inputError, toNodeError } from '../shared/errors';
import { notOffered } from '../shared/rates/rateFields';
import { fetchRateTable } from '../shared/rates/rateTable';
import { readTriggerSettings, triggerProperties } from './parameters';
import { decide, readMemory, sampleEvents, type RateEvent } from './rateWatch';

const MEMORY_KEY = 'rateWatch';

const SUBTITLE = [
	'={{ (() => { const read = (name) => { try { const v = $parameter[name]; const t = typeof v === "string" ? v.trim() : ""; return t.startsWith("=") || t.includes("{{") ? "" : t; } catch (e) { return ""; } };',
	'const code = read("provider"); const provider = (code === "other" ? read("providerCode") : code).toUpperCase();',
	'const codes = read("currencies").split(/[\\s,;]+/).filter((c) => c).map((c) => c.toUpperCase()).join(", ") || "all currencies";',
	'return provider ? provider + " · " + codes : codes; })() }}',
].join(' ');

const toItems = (events: RateEvent[]): INodeExecutionData[] =>
	events.map((event) => ({ json: event as unknown as IDataObject }));

export class CurrencyRateTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Currency Rate Trigger',
		name: 'currencyRateTrigger',
		icon: {
			light: 'file:../../icons/currencyRate.svg',
			dark: 'file:../../icons/currencyRate.dark.svg',
		},
		group: ['trigger'],
		version: 1,
		subtitle: SUBTITLE,
		documentationUrl: nodeDocumentationUrl('currency-rate-trigger.md', 'currency-rate-trigger'),
		// n8n's node picker merges this trigger into the Currency Rate entry and shows this description
		// there: Currency Rate's own, word for word.
		description:
			'Get exchange rates of Indonesian banks and the tax office, and convert amounts between currencies',
		defaults: { name: 'Currency Rate Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		// The literal name: n8n's lint finds a credential's testedBy by it.
		credentials: [{ name: 'messagingRateApi', required: true, testedBy: 'messagingRateApiTest' }],
		properties: triggerProperties,
	};

	methods = { credentialTest: { messagingRateApiTest } };

	// Fetch Test Event leaves the memory alone: testing never moves the active workflow's baseline.
	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const settings = readTriggerSettings(this);
		const staticData = this.getWorkflowStaticData('node');
		const known = readMemory(staticData[MEMORY_KEY], settings);
		const client = await apiClientFor(this);
		const table = await fetchRateTable(client, settings.provider, settings.version).catch(
			(error: unknown) => {
				const action = `fetch the rates of provider "${settings.provider}"`;
				throw toNodeError(this.getNode(), error, { action });
			},
		);
		// A watched currency seen before and missing now is a gap; one never seen is a wrong setting.
		const unknown = settings.currencies.filter(
			(code) => !table.quotes.has(code) && !known?.rates[code],
		);
		if (unknown.length > 0) {
			const fix = 'Use the listed codes, or another provider.';
			throw inputError(this.getNode(), undefined, 'Currencies', notOffered(unknown, table), fix);
		}
		if (this.getMode() === 'manual') return [toItems(sampleEvents(settings, table, known))];

		const { events, memory, mustSave } = decide(settings, table, known);
		staticData[MEMORY_KEY] = memory as unknown as IDataObject;
		if (events.length > 0) return [toItems(events)];
		// n8n saves static data after a poll only when it returns something: an empty result saves it.
		return mustSave ? [[]] : null;
	}
}
