import {
	NodeConnectionTypes,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
	type IPollFunctions,
} from 'n8n-workflow';

import { messagingRateApiTest } from '../shared/credentialTest';
import { nodeDocumentationUrl } from '../shared/documentationUrl';
import { triggerProperties } from './parameters';
import { pollRates } from './poll';

const SUBTITLE = [
	'={{ (() => { const read = (name) => { try { const v = $parameter[name]; const t = typeof v === "string" ? v.trim() : ""; return t.startsWith("=") || t.includes("{{") ? "" : t; } catch (e) { return ""; } };',
	'const code = read("provider"); const provider = (code === "other" ? read("providerCode") : code).toUpperCase();',
	'const codes = read("currencies").split(/[\\s,;]+/).filter((c) => c).map((c) => c.toUpperCase()).join(", ") || "all currencies";',
	'return provider ? provider + " · " + codes : codes; })() }}',
].join(' ');

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
		description:
			'Starts the workflow when an exchange rate moves, crosses a threshold or is published anew',
		defaults: { name: 'Currency Rate Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		// The literal name: n8n's lint finds a credential's testedBy by it.
		credentials: [{ name: 'messagingRateApi', required: true, testedBy: 'messagingRateApiTest' }],
		properties: triggerProperties,
	};

	methods = { credentialTest: { messagingRateApiTest } };

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		return await pollRates.call(this);
	}
}
