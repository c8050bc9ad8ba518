import type { ResourceDefinition } from '../../shared/execution/operation';
import type { MessagingRun } from '../parameters';
import { account } from './account/account.resource';
import { auth } from './auth/auth.resource';
import { message } from './message/message.resource';
import { number } from './number/number.resource';
import { session } from './session/session.resource';

/** Every resource of the Messaging node, in the order the selector shows them. */
export const resources: ReadonlyArray<ResourceDefinition<MessagingRun>> = [message, number, account, session, auth];
