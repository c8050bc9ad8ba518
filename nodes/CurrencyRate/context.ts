import type { OperationContext } from '../shared/operation';
import type { CurrencyRateOptions } from './options';
import type { RateBook } from './rateBook';

/**
 * What the Currency Rate router hands every operation: the transport client and cancel signal
 * (as for every node of the package), plus the run's rate book, so that all items share one
 * rates request per provider, and the run's options, read once instead of once per item.
 */
export interface RateOperationContext extends OperationContext {
	readonly rates: RateBook;
	readonly options: CurrencyRateOptions;
}
