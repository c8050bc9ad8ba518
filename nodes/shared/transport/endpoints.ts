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

// A file as a data URI param, never held twice in memory: `base64` is written in slices as it is,
// `open` gives raw bytes encoded on the fly (a function, so that a retry can read them again).
export interface DataUriParam {
	readonly kind: 'dataUri';
	readonly mimeType: string;
	readonly base64?: string;
	readonly open?: () => Promise<AsyncIterable<Buffer | string>> | AsyncIterable<Buffer | string>;
	readonly byteLength?: number;
	readonly maxByteLength?: number;
}

export type ParamValue = string | DataUriParam;

export interface RequestBody {
	/** The whole body, when it holds no file. */
	readonly buffer?: Buffer;
	/** A function, so every attempt reads the body afresh. */
	chunks(): AsyncIterable<Buffer | string>;
	/** Unknown for a file of unknown size; then `maxLength` bounds it, if anything does. */
	readonly length?: number;
	readonly maxLength?: number;
}

// An error of a file's own stream: the body was cut off before its end, so the server cannot have
// processed the request. Passed on as it is, not as a lost connection.
export function isSourceFailure(error: unknown): boolean {
	return (error as { sourceFailure?: unknown } | undefined)?.sourceFailure === true;
}

const isDataUri = (value: ParamValue): value is DataUriParam => typeof value !== 'string';

// Strings, which the socket writes without making a Buffer, small enough for V8's young generation:
// Buffers count as external memory, which V8 collects late, so a large file would pile up garbage.
const PIECE = 64 * 1024;
/** A multiple of 3, so each piece encodes on its own. */
const BYTES_PER_PIECE = (PIECE / 4) * 3;

const base64Length = (bytes: number | undefined) =>
	bytes === undefined ? undefined : Math.ceil(bytes / 3) * 4;

/** `{"params": …}` as JSON, with each file written as a data URI as it is read. */
export function buildBody(params: Record<string, ParamValue>): RequestBody {
	const entries = Object.entries(params);
	if (!entries.some(([, value]) => isDataUri(value))) {
		const buffer = Buffer.from(JSON.stringify({ params }));
		return {
			buffer,
			chunks: async function* () {
				yield buffer;
			},
			length: buffer.length,
		};
	}
	const parts: ParamValue[] = [];
	let text = '{"params":{';
	entries.forEach(([key, value], index) => {
		text += `${index ? ',' : ''}${JSON.stringify(key)}:`;
		if (!isDataUri(value)) text += JSON.stringify(value);
		else {
			parts.push(`${text}"data:${JSON.stringify(value.mimeType).slice(1, -1)};base64,`, value);
			text = '"';
		}
	});
	parts.push(`${text}}}`);
	const sum = (size: (part: DataUriParam) => number | undefined) =>
		parts.reduce<number | undefined>((total, part) => {
			const add = isDataUri(part) ? size(part) : Buffer.byteLength(part);
			return total === undefined || add === undefined ? undefined : total + add;
		}, 0);
	const exact = (part: DataUriParam) => part.base64?.length ?? base64Length(part.byteLength);
	const length = sum(exact);
	return {
		chunks: () => streamParts(parts),
		length,
		maxLength: length ?? sum((part) => exact(part) ?? base64Length(part.maxByteLength)),
	};
}

async function* streamParts(parts: ParamValue[]): AsyncGenerator<string> {
	for (const part of parts) {
		if (!isDataUri(part)) yield part;
		// Base64 needs no JSON escaping.
		else if (part.base64 !== undefined)
			for (let i = 0; i < part.base64.length; i += PIECE) yield part.base64.slice(i, i + PIECE);
		else if (part.open) yield* base64Stream(await part.open());
		else throw new Error('A data URI param needs base64 content or a stream');
	}
}

async function* base64Stream(source: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
	let carry: Buffer | undefined;
	for await (const chunk of source) {
		let bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
		if (carry) bytes = Buffer.concat([carry, bytes]);
		const whole = bytes.length - (bytes.length % 3);
		for (let i = 0; i < whole; i += BYTES_PER_PIECE)
			yield bytes.toString('base64', i, Math.min(i + BYTES_PER_PIECE, whole));
		// At most 2 bytes: copied, so the chunk itself can be freed.
		carry = whole < bytes.length ? Buffer.from(bytes.subarray(whole)) : undefined;
	}
	if (carry) yield carry.toString('base64');
}
