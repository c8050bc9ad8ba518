import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { messagingRateApiTest } from '../shared/credentialTest';
import { nodeDocumentationUrl } from '../shared/documentationUrl';
import { includeRawResponseProperty } from '../shared/aiTool';
import { executeNode } from '../shared/execution/execute';
import {
	buildProperties,
	type NodeDefinition,
	type ResourceDefinition,
} from '../shared/execution/router';
import { operationNames, subtitleExpression } from '../shared/subtitle';
import { auth } from './actions/auth/auth.resource';
import { rate } from './actions/rate/rate.resource';
import {
	CurrencyRateRun,
	currencyRateOptionsProperty,
	readCurrencyRateOptions,
	type CurrencyRateOptions,
} from './parameters';

export const resources: ReadonlyArray<ResourceDefinition<CurrencyRateRun>> = [rate, auth];

const currencyRateNode: NodeDefinition<CurrencyRateOptions, CurrencyRateRun> = {
	resources,
	readOptions: readCurrencyRateOptions,
	startRun: (basics) => new CurrencyRateRun(basics),
	// Items make no request each: 16 at once only lets different providers fetch at the same time.
	pacing: () => ({ parallel: 16, delayMs: 0 }),
	// The run's rate book keeps tables by this setting; version and base currency may differ per item.
	runWideOptions: ({ keepRatesMinutes }) => ({ 'Keep Rates For (Minutes)': keepRatesMinutes }),
};

const SUBTITLE = subtitleExpression(
	[
		'(() => {',
		'const read = (name) => { try { const v = $parameter[name]; const t = typeof v === "string" || typeof v === "number" ? String(v).trim() : ""; return t.startsWith("=") || t.includes("{{") ? "" : t; } catch (e) { return ""; } };',
		`const name = (${JSON.stringify(operationNames(resources))})[$parameter["resource"] + ":" + $parameter["operation"]] || "";`,
		'if ($parameter["resource"] !== "rate") return name;',
		'const code = read("provider");',
		'const provider = (code === "other" ? read("providerCode") : code).toUpperCase();',
		'let what = name;',
		'if ($parameter["operation"] === "convert") { const from = read("fromCurrency").toUpperCase(); const to = read("toCurrency").toUpperCase(); if (from && to) what = from + " → " + to; }',
		'if ($parameter["operation"] === "get") { let raw = ""; let known = true; try { const v = $parameter["currencies"]; raw = Array.isArray(v) ? v.join(",") : String(v ?? ""); } catch (e) { known = false; }',
		'if (known && !raw.trim().startsWith("=") && !raw.includes("{{")) { const codes = raw.split(/[\\s,;]+/).filter((c) => c).map((c) => c.toUpperCase()); what = codes.length === 0 ? "all currencies" : codes.length > 3 ? codes.slice(0, 3).join(", ") + " +" + (codes.length - 3) : codes.join(", "); } }',
		'return provider ? provider + " · " + what : what;',
		'})()',
	].join(' '),
);

export class CurrencyRate implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Currency Rate',
		name: 'currencyRate',
		icon: {
			light: 'file:../../icons/currencyRate.svg',
			dark: 'file:../../icons/currencyRate.dark.svg',
		},
		group: ['transform'],
		version: 1,
		subtitle: SUBTITLE,
		documentationUrl: nodeDocumentationUrl('currency-rate.md', 'currency-rate'),
		description:
			'Get exchange rates of Indonesian banks and the tax office, and convert amounts between currencies',
		defaults: { name: 'Currency Rate' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		// The literal name: n8n's lint finds a credential's testedBy by it.
		credentials: [{ name: 'messagingRateApi', required: true, testedBy: 'messagingRateApiTest' }],
		properties: [
			...buildProperties(resources, 'currency-rate.md'),
			currencyRateOptionsProperty,
			includeRawResponseProperty,
		],
	};

	methods = { credentialTest: { messagingRateApiTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await executeNode(this, currencyRateNode);
	}
}
