import type { INodeProperties, NodeOperationError } from 'n8n-workflow';

import { inputError, toNodeError } from '../../shared/errors';
import { showFor } from '../../shared/properties';
import { KNOWN_PROVIDER_CODES, providerCode, providerFields } from '../../shared/rates/rateFields';
import type { RateTable } from '../../shared/rates/rateTable';
import { ApiError, describeEndpoint, endpoints } from '../../shared/transport';
import type { CurrencyRateRun } from '../parameters';

export function providerProperties(operation: string): INodeProperties[] {
	return providerFields(
		'Whose rates to use. An expression may give any provider code (for example a field of the input item); choose "Other Provider" to type a code the list does not have.',
		showFor('rate', operation),
	);
}

export function readProvider(run: CurrencyRateRun, itemIndex: number): string {
	const read = providerCode((name) => run.parameter(name, itemIndex, ''));
	if ('code' in read) return read.code;
	throw inputError(run.node, itemIndex, read.field, read.problem, read.fix);
}

export async function ratesForItem(
	run: CurrencyRateRun,
	itemIndex: number,
	provider: string,
	version: string,
): Promise<RateTable> {
	// Other failures pass on as they are: runItems converts them once, with their item.
	return await run.rates.tableFor(provider, version).catch((error: unknown) => {
		if (!isRatesRefusal(error)) throw error;
		const nodeError = toNodeError(run.node, error, { itemIndex });
		nodeError.description = [
			`The service gave no rates for provider "${provider}". Check the provider code (known codes: ${KNOWN_PROVIDER_CODES}) and the "API Version" option ("${version}").`,
			error.hint,
		]
			.filter(Boolean)
			.join(' ');
		throw nodeError;
	});
}

/** Not a failed token request or an auth failure: those say nothing about the provider. */
function isRatesRefusal(error: unknown): error is ApiError {
	return (
		error instanceof ApiError &&
		error.endpoint === describeEndpoint(endpoints.getKurs) &&
		!error.authFailure &&
		(error.kind === 'rejected' || error.kind === 'rpc')
	);
}

export function unknownCurrencyError(
	run: CurrencyRateRun,
	itemIndex: number,
	field: string,
	code: string,
	table: RateTable,
	baseCurrency?: string,
): NodeOperationError {
	const offered = [
		...(baseCurrency ? [`${baseCurrency} (base currency)`] : []),
		...table.quotes.keys(),
	];
	return inputError(
		run.node,
		itemIndex,
		field,
		`holds "${code}", which provider "${table.provider}" does not offer; it offers ${offered.join(', ') || 'no currencies at the moment'}`,
		'Use one of the listed codes (upper or lower case).',
	);
}
