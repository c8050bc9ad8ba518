import {
	NodeConnectionTypes,
	NodeOperationError,
	type ICredentialDataDecryptedObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { apiClientFor, CREDENTIAL_TYPE, messagingRateApiTest } from '../shared/apiClient';
import { buildProperties, findOperation } from '../shared/operation';
import { runItems } from '../shared/runItems';
import { parseCredentials } from '../shared/transport';
import { resources } from './actions';
import type { RateOperationContext } from './context';
import { currencyRateOptions, optionsProperty } from './options';
import { RateBook } from './rateBook';

/**
 * Items run this many at a time. There is no request per item (one rates request per provider
 * and run), so this only lets items that need different providers fetch at the same time;
 * items that need the same provider wait on the same request.
 */
const ITEM_CONCURRENCY = 16;

export class CurrencyRate implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Currency Rate',
		name: 'currencyRate',
		icon: { light: 'file:currencyRate.svg', dark: 'file:currencyRate.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description: 'Get exchange rates of Indonesian banks and the tax office, and convert amounts between currencies',
		defaults: { name: 'Currency Rate' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: CREDENTIAL_TYPE, required: true, testedBy: 'messagingRateApiTest' }],
		properties: [...buildProperties(resources), optionsProperty],
	};

	methods = { credentialTest: { messagingRateApiTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const resource = this.getNodeParameter('resource', 0) as string;
		const operation = this.getNodeParameter('operation', 0) as string;
		const module = findOperation(resources, resource, operation);
		if (!module) {
			throw new NodeOperationError(this.getNode(), `The operation "${operation}" of "${resource}" is not known`);
		}
		const client = await apiClientFor(this);
		const signal = this.getExecutionCancelSignal();
		const options = currencyRateOptions(this);
		// Already validated by apiClientFor; only the public parts name the cache entries.
		const { baseUrl, clientId } = parseCredentials(await this.getCredentials<ICredentialDataDecryptedObject>(CREDENTIAL_TYPE));
		const context: RateOperationContext = {
			client,
			signal,
			options,
			rates: new RateBook({ client, signal, sourceKey: `${baseUrl}|${clientId}`, keepMinutes: options.keepRatesMinutes }),
		};
		const output = await runItems(
			this,
			this.getInputData().length,
			async (itemIndex) => await module.execute.call(this, itemIndex, context),
			{ parallel: ITEM_CONCURRENCY, delayMs: 0 },
		);
		return [output];
	}
}
