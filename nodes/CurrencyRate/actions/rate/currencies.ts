import type { IExecuteFunctions, NodeOperationError } from 'n8n-workflow';

import { inputError } from '../../../shared/errors';
import type { RateTable } from '../../rateTable';

/**
 * Bad currency code of one item: names the field and the item and lists what the provider
 * offers, so the user can fix it without looking anything up.
 * Example: `Field "From Currency" holds "XYZ", which provider "bca" does not offer; it offers
 * IDR (base currency), USD, EUR, SGD [item 3]`.
 */
export function unknownCurrencyError(
	ctx: IExecuteFunctions,
	itemIndex: number,
	field: string,
	code: string,
	table: RateTable,
	baseCurrency?: string,
): NodeOperationError {
	const offered = [...(baseCurrency ? [`${baseCurrency} (base currency)`] : []), ...table.codes];
	return inputError(
		ctx.getNode(),
		itemIndex,
		field,
		`holds "${code}", which provider "${table.provider}" does not offer; it offers ${offered.join(', ') || 'no currencies at the moment'}`,
		'Use one of the listed codes (upper or lower case).',
	);
}
