import type { ResourceDefinition } from '../../../shared/execution/router';
import type { MessagingRun } from '../../run';
import { endpoints } from '../../../shared/transport';
import { sessionOperation } from '../../helpers/sessionAnswer';

export const session: ResourceDefinition<MessagingRun> = {
	option: { name: 'Session', value: 'session' },
	defaultOperation: 'getStatus',
	operations: [
		{
			name: 'Get QR Code',
			value: 'getQrCode',
			action: 'Get the login QR code',
			description:
				'Get the QR code to scan with the phone, as an image, while the account is not connected',
			module: sessionOperation('getQrCode', endpoints.qr),
		},
		{
			name: 'Get Status',
			value: 'getStatus',
			action: 'Get the connection status',
			description: 'Read whether the WhatsApp account is connected to the gateway',
			module: sessionOperation('getStatus', endpoints.status),
		},
		{
			name: 'Login',
			value: 'login',
			action: 'Start a login',
			description:
				'Start connecting the WhatsApp account; answers the QR code to scan, or the status when connected',
			module: sessionOperation('login', endpoints.login),
		},
	],
};
