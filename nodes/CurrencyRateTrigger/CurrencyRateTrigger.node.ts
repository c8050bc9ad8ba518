import { NodeConnectionTypes, type INodeExecutionData, type INodeType, type INodeTypeDescription, type IPollFunctions } from 'n8n-workflow';

import { CREDENTIAL_TYPE, messagingRateApiTest } from '../shared/credential';
import { triggerProperties } from './parameters';
import { pollRates } from './poll';

/**
 * Watches a provider's exchange rates on n8n's polling schedule and starts the workflow when a
 * rate moved by more than a percentage, crossed a threshold, or was published anew (poll.ts;
 * the rules are in nodes/shared/rates/rateWatch.ts; docs/currency-rate-trigger.md).
 */
export class CurrencyRateTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Currency Rate Trigger',
		name: 'currencyRateTrigger',
		icon: { light: 'file:currencyRate.svg', dark: 'file:currencyRate.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{$parameter["provider"].toUpperCase() + " " + $parameter["currencies"]}}',
		description: 'Starts the workflow when an exchange rate moves, crosses a threshold or is published anew',
		defaults: { name: 'Currency Rate Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: CREDENTIAL_TYPE, required: true, testedBy: 'messagingRateApiTest' }],
		properties: triggerProperties,
	};

	methods = { credentialTest: { messagingRateApiTest } };

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		return await pollRates.call(this);
	}
}
