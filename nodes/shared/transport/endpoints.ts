// The transport sends exactly the listed params; a bearer token only where `bearer`.

export type ApiGroup = 'wa' | 'rate';

const CREDENTIAL_PARAMS = ['client_id', 'client_secret'] as const;

export interface Endpoint {
	readonly label: string;
	readonly group: ApiGroup;
	readonly httpMethod: 'GET' | 'POST';
	readonly path: string;
	readonly bearer: boolean;
	readonly params: readonly string[];
	readonly fixed?: Readonly<Record<string, string>>;
	// How the answer says "not done" while HTTP and JSON-RPC say success: sends answer
	// `message.sent: false`, getkurs answers `success: false`.
	readonly rejection?: 'sentFalse' | 'successFalse';
}

const WA = '/api/wa';
const RATE = '/api/rate/1.0';

export const endpoints = {
	waAuthenticate: {
		label: 'Authenticate (messaging)',
		group: 'wa',
		httpMethod: 'GET',
		path: `${WA}/authentication`,
		bearer: false,
		params: ['client_id', 'client_secret'],
	},
	waProtected: {
		label: 'Check Token',
		group: 'wa',
		httpMethod: 'GET',
		path: `${WA}/protected`,
		bearer: true,
		params: ['client_secret'],
	},
	limit: {
		label: 'Get Usage Limit',
		group: 'wa',
		httpMethod: 'GET',
		path: `${WA}/2.0/limit`,
		bearer: false,
		params: ['client_secret'],
	},
	qr: {
		label: 'Get QR Code',
		group: 'wa',
		httpMethod: 'GET',
		path: `${WA}/2.0/qr`,
		bearer: false,
		params: ['client_secret'],
	},
	checkNumber: {
		label: 'Check Number',
		group: 'wa',
		httpMethod: 'GET',
		path: `${WA}/2.0/check`,
		bearer: false,
		params: ['phone'],
	},
	login: {
		label: 'Login',
		group: 'wa',
		httpMethod: 'GET',
		path: `${WA}/2.0/get`,
		bearer: false,
		params: ['method', 'client_secret'],
		fixed: { method: 'login' },
	},
	status: {
		label: 'Get Status',
		group: 'wa',
		httpMethod: 'GET',
		path: `${WA}/2.0/get`,
		bearer: true,
		params: ['method', 'client_secret'],
		fixed: { method: 'status' },
	},
	checkAccount: {
		label: 'Check Account',
		group: 'wa',
		httpMethod: 'POST',
		path: `${WA}/2.0/post`,
		bearer: true,
		params: ['method', 'client_secret', 'version', 'whatsapp_number', 'whatsapp_webhook'],
		fixed: { method: 'check' },
	},
	updateAccount: {
		label: 'Update Account',
		group: 'wa',
		httpMethod: 'POST',
		path: `${WA}/2.0/post`,
		bearer: false,
		params: ['method', 'client_secret', 'version', 'whatsapp_number', 'whatsapp_webhook'],
		fixed: { method: 'update' },
	},
	sendMessage: {
		label: 'Send Message',
		group: 'wa',
		httpMethod: 'POST',
		path: `${WA}/2.0/post`,
		bearer: true,
		params: ['method', 'client_secret', 'version', 'phone', 'body'],
		fixed: { method: 'sendMessage' },
		rejection: 'sentFalse',
	},
	sendFile: {
		label: 'Send File',
		group: 'wa',
		httpMethod: 'POST',
		path: `${WA}/2.0/post`,
		bearer: true,
		params: ['method', 'client_secret', 'version', 'phone', 'body', 'filename', 'caption'],
		fixed: { method: 'sendFile' },
		rejection: 'sentFalse',
	},
	rateAuthenticate: {
		label: 'Authenticate (rates)',
		group: 'rate',
		httpMethod: 'GET',
		path: `${RATE}/authentication`,
		bearer: false,
		params: ['client_id', 'client_secret'],
	},
	getKurs: {
		label: 'Get Rates',
		group: 'rate',
		httpMethod: 'GET',
		path: `${RATE}/get`,
		bearer: true,
		params: ['version', 'client_id', 'client_secret', 'function', 'currency_id_provider'],
		fixed: { function: 'getkurs' },
		rejection: 'successFalse',
	},
} as const satisfies Record<string, Endpoint>;

export const tokenEndpoint: Record<ApiGroup, Endpoint> = {
	wa: endpoints.waAuthenticate,
	rate: endpoints.rateAuthenticate,
};

export function callerParams(endpoint: Endpoint): string[] {
	return endpoint.params.filter(
		(name) =>
			!(CREDENTIAL_PARAMS as readonly string[]).includes(name) &&
			!(endpoint.fixed && name in endpoint.fixed),
	);
}

export function describeEndpoint(endpoint: Endpoint): string {
	const selector = endpoint.fixed
		? ` ${Object.entries(endpoint.fixed)
				.map(([k, v]) => `${k}=${v}`)
				.join(' ')}`
		: '';
	return `${endpoint.label} (${endpoint.httpMethod} ${endpoint.path}${selector})`;
}
