import {
	NodeConnectionTypes,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
	type IPollFunctions,
} from 'n8n-workflow';

import { messagingRateApiTest } from '../shared/credential';
import { nodeDocumentationUrl } from '../shared/documentationUrl';
import { triggerProperties } from './parameters';
import { pollRates } from './poll';

/**
 * `BCA · USD, EUR` on the canvas. Values that are expressions (unknown in the editor) are left
 * out; reading one may throw, hence the guard (see nodes/shared/subtitle.ts for the rules).
 */
const SUBTITLE = [
	'={{ (() => { const read = (name) => { try { const v = $parameter[name]; const t = typeof v === "string" ? v.trim() : ""; return t.startsWith("=") || t.includes("{{") ? "" : t; } catch (e) { return ""; } };',
	'const code = read("provider"); const provider = (code === "other" ? read("providerCode") : code).toUpperCase();',
	'const codes = read("currencies").split(/[\\s,;]+/).filter((c) => c).map((c) => c.toUpperCase()).join(", ") || "all currencies";',
	'return provider ? provider + " · " + codes : codes; })() }}',
].join(' ');

/**
 * Watches a provider's exchange rates on n8n's polling schedule and starts the workflow when a
 * rate moved by more than a percentage, crossed a threshold, or was published anew (poll.ts;
 * the rules are in rateWatch.ts; docs/currency-rate-trigger.md).
 */
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
		// The literal type name: n8n's lint finds a credential's testedBy by it (CREDENTIAL_TYPE in shared/credential.ts)
		credentials: [{ name: 'messagingRateApi', required: true, testedBy: 'messagingRateApiTest' }],
		properties: triggerProperties,
	};

	methods = { credentialTest: { messagingRateApiTest } };

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		return await pollRates.call(this);
	}
}
