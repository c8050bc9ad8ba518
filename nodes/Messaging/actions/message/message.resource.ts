import { SEND_AND_WAIT_OPERATION } from 'n8n-workflow';

import type { ResourceDefinition } from '../../../shared/execution/router';
import type { MessagingRun } from '../../run';
import * as sendAndWait from './sendAndWait.operation';
import * as sendFile from './sendFile.operation';
import * as sendText from './sendText.operation';
import * as waitForSendWindow from './waitForSendWindow.operation';

export const message: ResourceDefinition<MessagingRun> = {
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
		{
			name: 'Send File',
			value: 'sendFile',
			action: 'Send a file',
			description: 'Send a document, image or other file with an optional caption',
			module: sendFile,
		},
		{
			name: 'Send and Wait for Response',
			value: SEND_AND_WAIT_OPERATION,
			action: 'Send a message and wait for response',
			description:
				'Send a question and wait until the person answers, by a link or by replying in the chat',
			module: sendAndWait,
		},
		{
			name: 'Wait for Send Window',
			value: 'waitForSendWindow',
			action: 'Wait for the send window',
			description:
				'Hold the items until the hours in which messages may go out (no worker held while waiting), then pass them on',
			module: waitForSendWindow,
		},
	],
};
