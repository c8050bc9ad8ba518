import type { ResourceDefinition } from '../../shared/execution/operation';
import type { CurrencyRateRun } from '../parameters';
import { auth } from './auth/auth.resource';
import { rate } from './rate/rate.resource';

/** Every resource of the Currency Rate node, in the order the selector shows them. */
export const resources: ReadonlyArray<ResourceDefinition<CurrencyRateRun>> = [rate, auth];
