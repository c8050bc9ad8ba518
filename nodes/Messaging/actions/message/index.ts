import type { ResourceDefinition } from '../../../shared/operation';
import * as sendText from './sendText';

export const message: ResourceDefinition = {
	option: { name: 'Message', value: 'message' },
	defaultOperation: 'sendText',
	operations: [
		{
			name: 'Send Text',
			value: 'sendText',
			action: 'Send a text message',
			description: 'Send a text message to a phone number',
			module: sendText,
		},
	],
};
