import {
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { messagingRateApiTest } from '../shared/credential';
import { buildProperties } from '../shared/execution/operation';
import { nodeDocumentationUrl } from '../shared/documentationUrl';
import { route, type NodeDefinition } from '../shared/execution/router';
import { includeRawResponseProperty } from '../shared/aiTool';
import { currencyRateSubtitle } from '../shared/subtitle';
import { resources } from './actions';
import {
	CurrencyRateRun,
	currencyRateOptionsProperty,
	readCurrencyRateOptions,
	type CurrencyRateOptions,
} from './parameters';

/**
 * Items run this many at a time. There is no request per item (one rates request per provider
 * and run), so this only lets items that need different providers fetch at the same time;
 * items that need the same provider wait on the same request.
 */
const ITEM_CONCURRENCY = 16;

/** How the router runs this node: its resources, its Options, and a rate book per run. */
const currencyRateNode: NodeDefinition<CurrencyRateOptions, CurrencyRateRun> = {
	resources,
	readOptions: readCurrencyRateOptions,
	startRun: (basics) => new CurrencyRateRun(basics),
	pacing: () => ({ parallel: ITEM_CONCURRENCY, delayMs: 0 }),
	// The run's rate book keeps tables by this setting; version and base currency may differ per item.
	runWideOptions: ({ keepRatesMinutes }) => ({ 'Keep Rates For (Minutes)': keepRatesMinutes }),
};

export class CurrencyRate implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Currency Rate',
		name: 'currencyRate',
		icon: { light: 'file:../../icons/currencyRate.svg', dark: 'file:../../icons/currencyRate.dark.svg' },
		group: ['transform'],
		// 1.1: Convert keeps the input item's fields by default (Include Input Fields); 1 keeps giving the conversion details.
		version: [1, 1.1],
		defaultVersion: 1.1,
		subtitle: currencyRateSubtitle(resources),
		documentationUrl: nodeDocumentationUrl('currency-rate.md', 'currency-rate'),
		description: 'Get exchange rates of Indonesian banks and the tax office, and convert amounts between currencies',
		defaults: { name: 'Currency Rate' },
		usableAsTool: true,
		// eslint-disable-next-line @n8n/community-nodes/node-connection-type-literal -- n8n before 1.85 has no NodeConnectionTypes: the string loads in every version
		inputs: ['main'],
		// eslint-disable-next-line @n8n/community-nodes/node-connection-type-literal -- n8n before 1.85 has no NodeConnectionTypes: the string loads in every version
		outputs: ['main'],
		// The literal type name: n8n's lint finds a credential's testedBy by it (CREDENTIAL_TYPE in shared/credential.ts)
		credentials: [{ name: 'messagingRateApi', required: true, testedBy: 'messagingRateApiTest' }],
		properties: [...buildProperties(resources), currencyRateOptionsProperty, includeRawResponseProperty],
	};

	methods = { credentialTest: { messagingRateApiTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await route(this, currencyRateNode);
	}
}
