// The spec as a table: the transport sends exactly the listed params, the credential's and the
// fixed ones filled in, and a bearer token only where `bearer`.

export type ApiGroup = 'wa' | 'rate';

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

const BEARER = true;
const CREDENTIAL_PARAMS = ['client_id', 'client_secret'];
const ACCOUNT = ['method', 'client_secret', 'version', 'whatsapp_number', 'whatsapp_webhook'];
const SEND = ['method', 'client_secret', 'version', 'phone', 'body'];

/** Its group is the API its path belongs to. */
function row(
	label: string,
	route: `${'GET' | 'POST'} /api/${string}`,
	bearer: boolean,
	params: string[],
	more: Pick<Endpoint, 'fixed' | 'rejection'> = {},
): Endpoint {
	const [httpMethod, path] = route.split(' ') as ['GET' | 'POST', string];
	const group = path.startsWith('/api/rate/') ? 'rate' : 'wa';
	return { label, group, httpMethod, path, bearer, params, ...more };
}

// prettier-ignore
export const endpoints = {
	waAuthenticate: row('Authenticate (messaging)', 'GET /api/wa/authentication', !BEARER, CREDENTIAL_PARAMS),
	waProtected: row('Check Token', 'GET /api/wa/protected', BEARER, ['client_secret']),
	limit: row('Get Usage Limit', 'GET /api/wa/2.0/limit', !BEARER, ['client_secret']),
	qr: row('Get QR Code', 'GET /api/wa/2.0/qr', !BEARER, ['client_secret']),
	checkNumber: row('Check Number', 'GET /api/wa/2.0/check', !BEARER, ['phone']),
	login: row('Login', 'GET /api/wa/2.0/get', !BEARER, ['method', 'client_secret'], { fixed: { method: 'login' } }),
	status: row('Get Status', 'GET /api/wa/2.0/get', BEARER, ['method', 'client_secret'], { fixed: { method: 'status' } }),
	checkAccount: row('Check Account', 'POST /api/wa/2.0/post', BEARER, ACCOUNT, { fixed: { method: 'check' } }),
	updateAccount: row('Update Account', 'POST /api/wa/2.0/post', !BEARER, ACCOUNT, { fixed: { method: 'update' } }),
	sendMessage: row('Send Message', 'POST /api/wa/2.0/post', BEARER, SEND, { fixed: { method: 'sendMessage' }, rejection: 'sentFalse' }),
	sendFile: row('Send File', 'POST /api/wa/2.0/post', BEARER, [...SEND, 'filename', 'caption'], { fixed: { method: 'sendFile' }, rejection: 'sentFalse' }),
	rateAuthenticate: row('Authenticate (rates)', 'GET /api/rate/1.0/authentication', !BEARER, CREDENTIAL_PARAMS),
	getKurs: row('Get Rates', 'GET /api/rate/1.0/get', BEARER, ['version', ...CREDENTIAL_PARAMS, 'function', 'currency_id_provider'], { fixed: { function: 'getkurs' }, rejection: 'successFalse' }),
} satisfies Record<string, Endpoint>;

export const tokenEndpoint: Record<ApiGroup, Endpoint> = {
	wa: endpoints.waAuthenticate,
	rate: endpoints.rateAuthenticate,
};

/** The params an operation passes: all but the credential's and the fixed ones. */
export function callerParams(endpoint: Endpoint): string[] {
	return endpoint.params.filter(
		(name) => !CREDENTIAL_PARAMS.includes(name) && !(endpoint.fixed && name in endpoint.fixed),
	);
}

export function describeEndpoint(endpoint: Endpoint): string {
	const fixed = Object.entries(endpoint.fixed ?? {}).map(([name, value]) => ` ${name}=${value}`);
	return `${endpoint.label} (${endpoint.httpMethod} ${endpoint.path}${fixed.join('')})`;
}
