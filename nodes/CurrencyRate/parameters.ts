import type { IExecuteFunctions, INodeProperties, NodeOperationError } from 'n8n-workflow';

import { clock } from '../shared/clock';
import { inputError, toNodeError } from '../shared/errors';
import { OperationRun, numberValue, type FieldError } from '../shared/execution/operationRun';
import { MemoryTable } from '../shared/store';
import { asOptions, optionsCollection, showFor } from '../shared/properties';
import {
	KNOWN_PROVIDER_CODES,
	baseCurrencyOption,
	notOffered,
	providerCode,
	providerFields,
	rateVersionOption,
	readRateOptions,
} from '../shared/rates/rateFields';
import { fetchRateTable, type NumberFormat, type RateTable } from '../shared/rates/rateTable';
import { ApiError, describeEndpoint, endpoints } from '../shared/transport';

const MAX_KEEP_MINUTES = 1440;

export interface CurrencyRateOptions {
	version: string;
	baseCurrency: string;
	keepRatesMinutes: number;
	numberFormat: NumberFormat;
}

export const currencyRateOptionsProperty: INodeProperties = optionsCollection(
	[
		rateVersionOption,
		baseCurrencyOption(
			"The provider's home currency: its rates are amounts of this currency per 1 unit of each other currency, and conversions between two other currencies cross through it",
		),
		{
			displayName: 'Number Format',
			name: 'numberFormat',
			type: 'options',
			options: [
				{
					name: 'Refuse Ambiguous Text',
					value: 'auto',
					description:
						'Reads 1,234.56 and 1.234,56; refuses text such as 16.250 that reads two ways, showing both',
				},
				{
					name: '1,234.56 (Decimal Point)',
					value: 'point',
					description: 'English style: 16.250 is sixteen and a quarter',
				},
				{
					name: '1.234,56 (Decimal Comma)',
					value: 'comma',
					description: 'Indonesian style: 16.250 is sixteen thousand two hundred fifty',
				},
			],
			default: 'auto',
			description: 'How amounts given as text are written (numbers are always read as they are)',
		},
		{
			displayName: 'Keep Rates For (Minutes)',
			name: 'keepRatesMinutes',
			type: 'number',
			typeOptions: { minValue: 0, maxValue: MAX_KEEP_MINUTES },
			default: 0,
			description:
				'Reuse rates that an earlier execution fetched less than this many minutes ago (0 = fetch once per execution). Kept in the memory of this n8n process, per base URL, client ID, provider and version.',
		},
	],
	{ displayOptions: { show: { resource: ['rate'] } } },
);

export function readCurrencyRateOptions(
	ctx: IExecuteFunctions,
	itemIndex: number,
): CurrencyRateOptions {
	const options = asOptions(ctx.getNodeParameter('options', itemIndex, {}));
	const { numberFormat } = options;
	const fail: FieldError = (...error) => inputError(ctx.getNode(), itemIndex, ...error);
	const keep = { field: 'Keep Rates For (Minutes)', min: 0, max: MAX_KEEP_MINUTES };
	return {
		...readRateOptions(options),
		keepRatesMinutes: numberValue(options.keepRatesMinutes, 0, keep, fail),
		numberFormat: numberFormat === 'point' || numberFormat === 'comma' ? numberFormat : 'auto',
	};
}

export const providerProperties = (operation: string): INodeProperties[] =>
	providerFields(
		'Whose rates to use. An expression may give any provider code (for example a field of the input item); choose "Other Provider" to type a code the list does not have.',
		showFor('rate', operation),
	);

// "Keep Rates For": public rates only, per base URL, client ID, provider and version. The reader
// decides how old an entry may be, so workflows with other settings share one entry.
const keptTables = new MemoryTable<RateTable>(256 * 1024, (table) => 128 * table.quotes.size);

export class CurrencyRateRun extends OperationRun<CurrencyRateOptions> {
	// One request per provider and version per run, shared by every item that needs it; a refusal
	// is shared too, so an unknown provider costs one request.
	private readonly tables = new Map<string, Promise<RateTable>>();

	provider(itemIndex: number): string {
		return providerCode(
			(name) => this.parameter(name, itemIndex, ''),
			this.fail.bind(this, itemIndex),
		);
	}

	async rates(itemIndex: number, provider: string, version: string): Promise<RateTable> {
		const key = `${provider}|${version}`;
		let table = this.tables.get(key);
		if (!table) this.tables.set(key, (table = this.load(provider, version)));
		// Other failures pass on as they are: runItems converts them once, with their item.
		return await table.catch((error: unknown) => {
			if (!isRatesRefusal(error)) throw error;
			const nodeError = toNodeError(this.node, error, { itemIndex });
			const check = `The service gave no rates for provider "${provider}". Check the provider code (known codes: ${KNOWN_PROVIDER_CODES}) and the "API Version" option ("${version}").`;
			nodeError.description = error.hint ? `${check} ${error.hint}` : check;
			throw nodeError;
		});
	}

	private async load(provider: string, version: string): Promise<RateTable> {
		const minutes = this.runOptions.keepRatesMinutes;
		if (minutes === 0) return await fetchRateTable(this.client, provider, version, this.signal);
		// Only the public parts of the credential name the kept tables: never the secret.
		const key = `${this.credentials.baseUrl}|${this.credentials.clientId}|${provider}|${version}`;
		const kept = keptTables.get(key);
		if (kept && clock.now() - kept.fetchedAtMs < minutes * 60_000) return kept;
		const table = await fetchRateTable(this.client, provider, version, this.signal);
		keptTables.set(key, table, table.fetchedAtMs + MAX_KEEP_MINUTES * 60_000);
		return table;
	}

	unknownCurrency(
		itemIndex: number,
		field: string,
		code: string,
		table: RateTable,
		baseCurrency?: string,
	): NodeOperationError {
		const base = baseCurrency ? [`${baseCurrency} (base currency)`] : [];
		const offered = [...base, ...table.quotes.keys()];
		const fix = 'Use one of the listed codes (upper or lower case).';
		return this.fail(itemIndex, field, notOffered([code], table, offered), fix);
	}
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
