/**
 * Shared by the Currency Rate tests: run the node through the engine against a sandbox and read
 * what the sandbox received.
 */
import type { IDataObject, INode, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { ratesFor } from '../../sandbox/rates';
import type { RequestLogEntry, Sandbox } from '../../sandbox/types';
import { runWorkflow, sandboxCredential, singleNodeWorkflow, type EngineRun } from './engine';

export const RATES_PATH = '/api/rate/1.0/get';
export const RATE_TOKEN_PATH = '/api/rate/1.0/authentication';

/** The params the spec lists for getkurs, as the sandbox must receive them. */
function getkursParams(provider: string, version = '1.0'): Record<string, string> {
	return {
		version,
		client_id: 'demo-client',
		client_secret: 'demo-secret',
		function: 'getkurs',
		currency_id_provider: provider,
	};
}

export async function runCurrencyRate(
	sandbox: Sandbox,
	parameters: INodeParameters,
	items: IDataObject[] = [{}],
	settings: Partial<INode> = {},
): Promise<EngineRun> {
	return await runWorkflow(
		singleNodeWorkflow('currencyRate', parameters, items, settings),
		sandboxCredential(sandbox.url),
	);
}

export function requestsTo(sandbox: Sandbox, path: string): RequestLogEntry[] {
	return sandbox.requests().filter((request) => request.path === path);
}

export function jsonOf(items: INodeExecutionData[]): IDataObject[] {
	return items.map((item) => item.json);
}

/** The sandbox's own quote for a currency, numbers parsed: what the node must report. */
export function sandboxQuote(
	provider: string,
	currency: string,
): { buy: number; sell: number; average: number } {
	const row = ratesFor(provider)?.find((r) => r.name === currency);
	if (!row) throw new Error(`sandbox has no ${currency} for ${provider}`);
	return { buy: Number(row.rate_buy), sell: Number(row.rate_sell), average: Number(row.rate_avg) };
}

/** The expressions docs/currency-rate.md and docs/ai-agents.md give for a model to fill Provider and Rate. */
export const PROVIDER_FROM_AI =
	"{{ $fromAI('provider', 'Rate provider code: bca, bni, bri, cimb, kmk', 'string') }}";
export const RATE_FROM_AI =
	"{{ $fromAI('rate', 'Which rate to use: average, buy, sell', 'string') }}";

export function sandboxCodes(provider: string): string[] {
	return (ratesFor(provider) ?? []).map((row) => row.name);
}

/** Asserts the one getkurs request of a run: method, path, bearer, exact params. */
export function expectOneRatesRequest(
	sandbox: Sandbox,
	provider: string,
	version = '1.0',
): RequestLogEntry {
	const requests = requestsTo(sandbox, RATES_PATH);
	expect(requests).toHaveLength(1);
	const [request] = requests;
	expect(request.method).toBe('GET');
	expect(request.contentType).toBe('application/json');
	expect(request.authorization).toMatch(/^Bearer \S{8,}$/);
	expect(request.params).toEqual(getkursParams(provider, version));
	expect(request.status).toBe(200);
	return request;
}
