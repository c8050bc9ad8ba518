/**
 * Shared by the Currency Rate tests: run the node through the engine against a sandbox and read
 * what the sandbox received.
 */
import type { IDataObject, INode, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { quotedUnit, ratesFor } from '../../sandbox/rates';
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

/** The sandbox's own table for a provider, numbers parsed: what the node must report. */
/** A sandbox quote as the nodes output it: per 1 unit, with the unit the provider quoted for. */
export function sandboxQuote(
	provider: string,
	currency: string,
): { buy: number; sell: number; average: number; unit: number } {
	const row = ratesFor(provider)?.find((r) => r.name === currency);
	if (!row) throw new Error(`sandbox has no ${currency} for ${provider}`);
	const unit = quotedUnit(provider, currency);
	return {
		buy: Number(row.rate_buy) / unit,
		sell: Number(row.rate_sell) / unit,
		average: Number(row.rate_avg) / unit,
		unit,
	};
}

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
