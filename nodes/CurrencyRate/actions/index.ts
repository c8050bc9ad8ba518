import type { ResourceDefinition } from '../../shared/operation';
import { auth } from './auth';
import { rate } from './rate';

/** Every resource of the Currency Rate node, in the order the selector shows them. */
export const resources: readonly ResourceDefinition[] = [rate, auth];
