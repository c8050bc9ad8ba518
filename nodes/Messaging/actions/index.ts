import type { ResourceDefinition } from '../../shared/operation';
import { account } from './account';
import { auth } from './auth';
import { message } from './message';
import { number } from './number';
import { session } from './session';

/** Every resource of the Messaging node, in the order the selector shows them. */
export const resources: readonly ResourceDefinition[] = [message, number, account, session, auth];
