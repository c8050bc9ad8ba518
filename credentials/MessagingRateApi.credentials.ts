import type { ICredentialType, INodeProperties, Icon } from 'n8n-workflow';

// Tested by `messagingRateApiTest` on the Messaging node: the API needs GET requests with a JSON
// body, which a declarative credential test cannot send.
export class MessagingRateApi implements ICredentialType {
	name = 'messagingRateApi';

	displayName = 'Messaging & Rate API';

	icon: Icon = { light: 'file:../icons/messaging.svg', dark: 'file:../icons/messaging.dark.svg' };

	documentationUrl =
		'https://github.com/n8n-nodes-messaging-rate/n8n-nodes-messaging-rate/blob/main/docs/credential.md#fields';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			placeholder: 'https://gateway.example.com',
			required: true,
			hint: 'Only the address, without /api/… (for the local sandbox: http://127.0.0.1:8069)',
			description:
				'Address of the service, http:// or https://, without /api/... (a trailing slash is fine). For the local sandbox: http://127.0.0.1:8069.',
		},
		{
			displayName: 'Client ID',
			name: 'clientId',
			type: 'string',
			default: '',
			required: true,
			description: 'The client key of your account',
		},
		{
			displayName: 'Client Secret',
			name: 'clientSecret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				'The client secret of your account. It is sent inside request bodies, never logged or shown.',
		},
		// Not named *token*: n8n's lint takes such a field for a secret.
		{
			displayName: 'Token Lifetime (Minutes)',
			name: 'bearerLifetimeMinutes',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: 60,
			description:
				'How long a token is reused when the service does not say when it expires. An expired token is renewed automatically either way.',
		},
		{
			displayName: 'Request Timeout (Seconds)',
			name: 'timeoutSeconds',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: 2147483 },
			default: 30,
			description:
				'How long one request may take as a whole, from connecting to the last byte of the answer, before it fails (a file upload gets 1 more second per MB)',
		},
		{
			displayName: 'Max Response Size (MB)',
			name: 'maxResponseMegabytes',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: 16,
			description:
				'Answers larger than this are not read and fail the item. The service answers a few KB; the limit protects n8n from a faulty or hostile server.',
		},
		// Not named *cert*, for the same reason.
		{
			displayName: 'Ignore SSL Issues (Insecure)',
			name: 'ignoreSSLIssues',
			type: 'boolean',
			default: false,
			description:
				'Whether to connect even if the SSL certificate cannot be verified (self-signed test servers only)',
		},
	];
}
