import type { ResourceDefinition } from '../../shared/operation';
import { message } from './message';

/** Every resource of the Messaging node, in the order the selector shows them. */
export const resources: readonly ResourceDefinition[] = [message];
