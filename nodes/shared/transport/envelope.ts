import { describeEndpoint, type Endpoint } from './endpoints';

// `rpc`: an error in the JSON-RPC envelope; `rejected`: answered but not done (`sent: false`);
// `unexpected-answer`: JSON that does not say what the call needs.
type ApiErrorKind =
	| 'http'
	| 'rpc'
	| 'rejected'
	| 'invalid-response'
	| 'unexpected-answer'
	| 'network'
	| 'timeout'
	| 'aborted'
	| 'invalid-request';

interface ApiErrorDetails {
	kind: ApiErrorKind;
	reason: string;
	httpStatus?: number;
	serverMessage?: string;
	/** Its row of WRITE_ANSWERS: a refused token; for a write, whether it may have been done. */
	answer?: WriteAnswer;
	causeCode?: string;
}

const RETRIED = 'retried';
const NEW_TOKEN = 'retried once, with a new token';
const NOT_SENT = 'certainly not sent';
const MAYBE = 'may have been delivered';

// What each answer to a write (a POST) shows the gateway did: only one showing it did not act
// retries the write or counts it as certainly not sent (the table in docs/delivery-and-scale.md).
export const WRITE_ANSWERS = {
	notWritten: ['A refused connection, or a request never handed to a connected socket', RETRIED],
	tooManyRequests: ['HTTP 429', RETRIED],
	tokenRefused: [
		'HTTP 401 or 403, or a JSON-RPC error saying the token expired or is invalid',
		NEW_TOKEN,
	],
	credentialsRefused: ['A JSON-RPC error "Access Denied": the Client Secret refused', NOT_SENT],
	refused: ['`sent: false`, or another clear "not sent" in the answer', NOT_SENT],
	redirect: ['HTTP 3xx: a redirect (never followed)', MAYBE],
	clientError: ['Any other HTTP 4xx', MAYBE],
	serverError: ['HTTP 5xx: 500, 502, 503, 504 or any other', MAYBE],
	rpcError: ['Any other JSON-RPC error, with HTTP 200', MAYBE],
	unclear: ['An empty answer, one that is not JSON, or JSON that does not say "sent"', MAYBE],
	tooLarge: ['An answer larger than Max Response Size', MAYBE],
	lost: ['No answer once the request left: a dropped connection, a timeout, a cancel', MAYBE],
} as const;

export type WriteAnswer = keyof typeof WRITE_ANSWERS;

export const writeRetried = (answer: WriteAnswer | undefined) =>
	answer !== undefined && WRITE_ANSWERS[answer][1] === RETRIED;

/** The row an HTTP status alone decides; a 2xx is read further. */
export function statusAnswer(status: number): WriteAnswer | undefined {
	if (status === 429) return 'tooManyRequests';
	if (status === 401 || status === 403) return 'tokenRefused';
	if (status >= 500) return 'serverError';
	if (status >= 400) return 'clientError';
	return status >= 300 ? 'redirect' : undefined;
}

/** In the message, not only the hint: it is what error items show and people alert on. */
function deliveryUnknownWarning(endpoint: Endpoint): string {
	return endpoint.rejection === 'sentFalse'
		? 'the message may have been delivered, so it was not sent again: check the recipient before sending it again'
		: 'the gateway may have done it, so it was not repeated: check the gateway before trying again';
}

/** Its message never holds a secret or token. */
export class ApiError extends Error {
	override readonly name = 'ApiError';
	readonly endpoint: string;
	declare readonly kind: ApiErrorKind;
	declare readonly httpStatus?: number;
	declare readonly serverMessage?: string;
	declare readonly answer?: WriteAnswer;
	declare readonly authFailure: boolean;
	declare readonly deliveryUnknown: boolean;
	declare readonly causeCode?: string;
	attempts = 1;

	constructor(endpoint: Endpoint, { reason, ...details }: ApiErrorDetails) {
		const outcome = details.answer && WRITE_ANSWERS[details.answer][1];
		const deliveryUnknown = endpoint.httpMethod === 'POST' && outcome === MAYBE;
		const server = details.serverMessage ? `: "${details.serverMessage}"` : '';
		const warning = deliveryUnknown ? `; ${deliveryUnknownWarning(endpoint)}` : '';
		super(`${describeEndpoint(endpoint)} failed: ${reason}${server}${warning}`);
		this.endpoint = describeEndpoint(endpoint);
		Object.assign(this, { ...details, authFailure: outcome === NEW_TOKEN, deliveryUnknown });
	}

	get hint(): string {
		if (this.deliveryUnknown)
			return 'The request reached the gateway, but its answer does not show that it was not done (a server error, a redirect, an answer lost, unreadable or unclear), so it may have been processed (for a send: the message may have been delivered). It was not retried, to never send it twice; check the recipient or the gateway before sending again.';
		if (this.kind === 'network')
			return 'The server could not be reached. Check the Base URL in the credential and that the service is up.';
		if (this.kind === 'timeout')
			return 'No answer within the credential\'s timeout. Raise "Request Timeout" in the credential if the service is slow.';
		if (this.authFailure)
			return 'Authentication failed even with a new token. Check the Client ID and Client Secret in the credential.';
		if (this.httpStatus === 429)
			return 'The service is rate-limiting this account. Lower "Parallel Requests" or add a delay between requests.';
		if (this.kind === 'unexpected-answer')
			return "The gateway answered, but not in a form this node can read (its words are in the error). If it persists, the gateway's API may have changed: check its documentation or ask its provider.";
		if (this.answer === 'tooLarge')
			return 'The answer was larger than the credential\'s "Max Response Size (MB)". Raise it if the service\'s answers are expected to be this large.';
		if (this.kind === 'invalid-response')
			return 'The server did not answer JSON. The Base URL may point at the wrong site, or a proxy in front of the service is failing.';
		return '';
	}
}

const MAX_SERVER_TEXT = 300;
/** Only this prefix is scanned, so a hostile large page costs no more than a small one. */
const SCANNED_TEXT = 64 * 1024;

interface RpcError {
	code?: unknown;
	message?: unknown;
	data?: { name?: unknown; message?: unknown };
}

export interface Answer {
	readonly status: number;
	readonly text: string;
	readonly retryAfterSeconds?: number;
	readonly location?: string;
}

type Fields = Record<string, unknown>;
const asFields = (value: unknown) =>
	value && typeof value === 'object' ? (value as Fields) : undefined;

/** The result of a JSON-RPC answer, or an ApiError with the server's words, redacted. */
export function parseEnvelope(endpoint: Endpoint, answer: Answer, redactor: Redactor): unknown {
	const { status, text } = answer;
	const json = parseJson(text);
	const object = asFields(json);
	// Shortened after redaction: cutting first could leave half a secret behind.
	const clean = (said: string) => {
		const safe = redactor.text(said.slice(0, SCANNED_TEXT));
		return safe.length > MAX_SERVER_TEXT ? `${safe.slice(0, MAX_SERVER_TEXT)}…` : safe;
	};
	// Redacted by key too (an `access_token` the package never saw), then by value.
	const cleanJson = (value: unknown) => clean(JSON.stringify(redactor.value(value)) ?? '');
	// Redacted before its tags are dropped and its spaces collapsed: either could break the form
	// of a secret apart (a secret holding `<s>` loses it as a "tag") and leave the rest readable.
	const cleanPage = () => clean(pageText(redactor.text(text.slice(0, SCANNED_TEXT))));
	const fail = (
		kind: ApiErrorDetails['kind'],
		reason: string,
		said: WriteAnswer,
		more?: Partial<ApiErrorDetails>,
	) => new ApiError(endpoint, { kind, reason, httpStatus: status, answer: said, ...more });

	const byStatus = statusAnswer(status);
	if (byStatus === 'redirect') {
		// Never followed (a redirect could carry the secret elsewhere), whatever the body says.
		const to = answer.location ? ` to ${clean(answer.location)}` : '';
		const reason = `HTTP ${status}: the server redirects${to}, and redirects are not followed. Check the Base URL (http:// vs https://, the host name, no path after it)`;
		throw fail('http', reason, byStatus);
	}
	const error = object?.error ?? undefined;
	const rpc: RpcError | undefined =
		error === undefined ? undefined : (asFields(error) ?? { message: error });
	if (byStatus)
		throw fail('http', `HTTP ${status}${statusText(status)}`, byStatus, {
			serverMessage: rpc ? clean(rpcText(rpc)) : json === undefined ? cleanPage() : cleanJson(json),
		});
	if (text.trim() === '')
		throw fail('invalid-response', `HTTP ${status} with an empty body`, 'unclear');
	if (!object)
		throw fail('invalid-response', `HTTP ${status} with a body that is not JSON`, 'unclear', {
			serverMessage: cleanPage(),
		});
	if (rpc) {
		const message = rpcText(rpc);
		// Odoo answers every server-side failure with code 200, which tells the user nothing.
		const code = typeof rpc.code === 'number' && rpc.code !== 200 ? ` (code ${rpc.code})` : '';
		throw fail('rpc', `the server answered an error${code}`, rpcAnswer(rpc, message), {
			serverMessage: clean(message),
		});
	}
	// Some routes answer a bare object; accept it as the result rather than fail.
	const result = 'result' in object ? object.result : object;
	const fields = asFields(result) ?? {};
	if (endpoint.rejection === 'successFalse' && fields.success === false) {
		const said = fields.message ?? fields.error;
		throw fail('rejected', 'the server refused the request', 'refused', {
			serverMessage: clean(typeof said === 'string' && said ? said : 'success: false'),
		});
	}
	if (endpoint.rejection === 'sentFalse') {
		const verdict = sendVerdict(fields);
		if (verdict === 'refused') {
			const said = sendWords(fields);
			throw fail('rejected', 'the message was not sent', 'refused', {
				serverMessage: said !== undefined ? clean(said) : cleanJson(fields),
			});
		}
		if (verdict === 'unclear')
			throw fail('unexpected-answer', 'the answer does not say the message was sent', 'unclear', {
				serverMessage: cleanJson(fields),
			});
	}
	return result;
}

function parseJson(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		return undefined;
	}
}

const YES = new Set(['true', '1', 'yes', 'ok', 'success', 'sent']);
const NO = new Set(['false', '0', 'no', 'error', 'failed', 'fail', 'failure', 'not sent']);
const word = (value: unknown) =>
	['string', 'number', 'boolean'].includes(typeof value)
		? String(value).trim().toLowerCase()
		: undefined;

// Sent only when the gateway says so; a clear "no" is a refusal. An answer that says neither is
// "may have been delivered": the gateway accepted the request and may have acted on it.
function sendVerdict(answer: Fields): 'sent' | 'refused' | 'unclear' {
	const message = asFields(answer.message) ?? {};
	const verdicts = [message.sent, answer.sent, message.status, answer.status];
	const said = [...verdicts, answer.success, message.success].map(word);
	if (said.some((verdict) => verdict !== undefined && NO.has(verdict))) return 'refused';
	if (answer.error !== undefined && answer.error !== null && answer.error !== false)
		return 'refused';
	return YES.has(word(message.sent ?? answer.sent) ?? '') ? 'sent' : 'unclear';
}

function sendWords(answer: Fields): string | undefined {
	const message = asFields(answer.message) ?? {};
	const texts = [message.message, answer.message, answer.error, message.error, answer.status];
	return [...texts, message.status].find(
		(v): v is string => typeof v === 'string' && v.trim() !== '',
	);
}

// Odoo answers an expired session with code 100. Wrong credentials (`AccessDenied`) are refused
// before anything is done too, but a new token would not help.
function rpcAnswer(rpc: RpcError, message: string): WriteAnswer {
	const name = typeof rpc.data?.name === 'string' ? rpc.data.name.slice(0, 200) : '';
	if (rpc.code === 100 || rpc.code === 401 || rpc.code === 403) return 'tokenRefused';
	if (/SessionExpired/i.test(name)) return 'tokenRefused';
	// Sentence by sentence, each test a plain word search: linear, where one pattern with
	// `[^.]*` between two words backtracks quadratically on a long sentence.
	const tokenRefused = message
		.slice(0, 2048)
		.split('.')
		.some(
			(sentence) =>
				/unauthori[sz]ed/i.test(sentence) ||
				(/\b(?:session|token)\b/i.test(sentence) &&
					/\b(?:expired|invalid|not valid|no longer valid)\b/i.test(sentence)),
		);
	if (tokenRefused) return 'tokenRefused';
	return /AccessDenied/.test(name) ? 'credentialsRefused' : 'rpcError';
}

function rpcText(rpc: RpcError): string {
	const detail = rpc.data?.message;
	const parts = [rpc.message, detail !== rpc.message ? detail : undefined];
	return parts.filter((p) => typeof p === 'string' && p).join(': ') || JSON.stringify(rpc);
}

/** The title, else the text without tags, scripts and styles. */
function pageText(page: string): string {
	const lower = page.toLowerCase();
	const titleAt = lower.indexOf('<title');
	const open = titleAt === -1 ? -1 : lower.indexOf('>', titleAt);
	const close = open === -1 ? -1 : lower.indexOf('</title', open);
	if (close !== -1) return collapse(page.slice(open + 1, close));
	// indexOf, not patterns such as `<[^>]+>`, which rescan to the end from every `<` (quadratic).
	let out = '';
	for (let at = 0; at < page.length;) {
		const tag = page.indexOf('<', at);
		out += `${page.slice(at, tag === -1 ? undefined : tag)} `;
		const end = tag === -1 ? -1 : page.indexOf('>', tag);
		if (end === -1) break; // no tag, or an unclosed one: nothing readable follows
		const skipped = /^<(script|style)/.exec(lower.slice(tag, tag + 7))?.[1];
		const closing = skipped ? lower.indexOf(`</${skipped}`, end) : end;
		at = closing === -1 ? page.length : lower.indexOf('>', closing) + 1 || page.length;
	}
	return collapse(out);
}

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

const STATUS_TEXT: Record<number, string> = {
	400: 'Bad Request',
	401: 'Unauthorized',
	403: 'Forbidden',
	404: 'Not Found',
	405: 'Method Not Allowed',
	410: 'Gone',
	413: 'Payload Too Large',
	415: 'Unsupported Media Type',
	429: 'Too Many Requests',
	500: 'Internal Server Error',
	502: 'Bad Gateway',
	503: 'Service Unavailable',
	504: 'Gateway Timeout',
};

/** ` Not Found` for 404: the words of a status, after a space, or nothing. */
export function statusText(status: number): string {
	return STATUS_TEXT[status] ? ` ${STATUS_TEXT[status]}` : '';
}

// Secrets are redacted by value, in the forms a server writes a string back in, and by key (a
// token the package never saw): docs/security.md.

export const REDACTED = '[redacted]';

const MIN_INSIDE_TEXT = 4;

// Longer secrets are matched as JSON.stringify and encodeURIComponent write them: a pattern
// spelling each of their characters would not compile.
const MAX_SPELLED = 256;

/** Deeper values are dropped rather than passed on unchecked. */
const MAX_DEPTH = 100;

/** Fewer bytes of base64 inside a longer text would match ordinary words by chance. */
const MIN_BASE64_CORE = 6;

const SECRET_KEY = /(?:token|secret|password|passwd|apikey|authorization|cookie|sessionid)$/;

function isSecretKey(key: string): boolean {
	let secret = judgedKeys.get(key);
	if (secret === undefined) {
		secret = SECRET_KEY.test(key.toLowerCase().replace(/[^a-z0-9]/g, ''));
		// Answers repeat their keys for every item, so each is judged once; bounded, so that a hostile
		// answer's million keys are judged but not kept.
		if (judgedKeys.size < 4096 && key.length <= 64) judgedKeys.set(key, secret);
	}
	return secret;
}

const judgedKeys = new Map<string, boolean>();

const hex = (value: number, digits: number) => value.toString(16).padStart(digits, '0');

const exactly = (text: string) =>
	Array.from({ length: text.length }, (_, i) => `\\u${hex(text.charCodeAt(i), 4)}`).join('');

const eitherCase = (digits: string) =>
	digits.replace(/[a-f]/g, (digit) => `[${digit}${digit.toUpperCase()}]`);

/** No two ways of a character start alike, so a failed match never retries: linear. */
const spelled = (secret: string, waysOf: (char: string) => string[]) =>
	[...secret].map((char) => `(?:${waysOf(char).join('|')})`).join('');

function jsonWays(char: string): string[] {
	const written = JSON.stringify(char).slice(1, -1);
	const units = char.split('').map((unit) => `\\\\u${eitherCase(hex(unit.charCodeAt(0), 4))}`);
	return [
		units.join(''),
		...(written.startsWith('\\u') ? [] : [exactly(written)]),
		...(char === '/' ? ['\\\\/'] : []),
	];
}

const urlWays = (char: string) => [
	[...Buffer.from(char, 'utf8')].map((byte) => `%${eitherCase(hex(byte, 2))}`).join(''),
	...(char === ' ' ? ['\\+'] : []),
	...(char === '%' ? [] : [exactly(char)]),
];

// One run for each alignment the secret can have inside a longer base64 text. A form comes before
// the shorter ones it starts with, which would leave its end behind.
function base64Forms(bytes: Buffer): string[] {
	const padded = bytes.toString('base64');
	const unpadded = bytes.toString('base64url');
	const forms = [padded, padded.slice(0, unpadded.length), unpadded];
	for (const skip of [0, 1, 2]) {
		const core = bytes.subarray(skip, skip + Math.floor((bytes.length - skip) / 3) * 3);
		if (core.length >= MIN_BASE64_CORE)
			forms.push(core.toString('base64'), core.toString('base64url'));
	}
	return forms;
}

function textForms(secret: string): string[] {
	const bytes = Buffer.from(secret, 'utf8');
	const hexForm = bytes.toString('hex');
	return [...new Set([...base64Forms(bytes), hexForm, hexForm.toUpperCase(), secret])];
}

const spelledForms = (secret: string) => [
	...textForms(secret).map(exactly),
	spelled(secret, jsonWays),
	spelled(secret, urlWays),
];

const unspelledForms = (secret: string) => {
	const json = JSON.stringify(secret).slice(1, -1);
	// A lone surrogate as UTF-8 encoders write it: encodeURIComponent would throw.
	const url = encodeURIComponent(secret.replace(/[\ud800-\udfff]/gu, '\ufffd'));
	// Also the variants stacks are known to write: PHP's `\/`, lower-case percent escapes.
	return [
		...textForms(secret),
		json,
		json.replaceAll('/', '\\/'),
		url,
		url.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
	];
};

export class Redactor {
	private readonly pattern: RegExp | undefined;
	private readonly texts: string[];

	constructor(secrets: Iterable<string | undefined>) {
		// Longer secrets first: where two start at one place, the longer one is replaced.
		const all = [...new Set(secrets)]
			.filter((secret): secret is string => typeof secret === 'string' && secret !== '')
			.sort((a, b) => b.length - a.length);
		const patterns = all
			.filter((secret) => secret.length <= MAX_SPELLED)
			.map((secret) => {
				const forms = spelledForms(secret).join('|');
				// A short secret stands alone: the whole text, or between the quotes of a JSON string.
				return secret.length < MIN_INSIDE_TEXT ? `(?:^|(?<="))(?:${forms})(?=$|")` : forms;
			});
		this.pattern = patterns.length ? new RegExp(patterns.join('|'), 'g') : undefined;
		this.texts = all.filter((s) => s.length > MAX_SPELLED).flatMap(unspelledForms);
	}

	text(text: string): string {
		for (const form of this.texts) text = text.replaceAll(form, REDACTED);
		return this.pattern ? text.replace(this.pattern, REDACTED) : text;
	}

	value<T>(value: T): T {
		return this.walk(value, 0) as T;
	}

	private walk(value: unknown, depth: number): unknown {
		if (typeof value === 'string') return this.text(value);
		if (value === null || typeof value !== 'object') return value;
		if (depth > MAX_DEPTH) return '[nested too deep]';
		if (Array.isArray(value)) return value.map((v) => this.walk(v, depth + 1));
		const out: Record<string, unknown> = {};
		for (const [key, v] of Object.entries(value)) {
			out[key] =
				isSecretKey(key) && v !== null && v !== undefined && typeof v !== 'boolean' && v !== ''
					? REDACTED
					: this.walk(v, depth + 1);
		}
		return out;
	}
}

export function redact(text: string, secrets: Iterable<string | undefined>): string {
	return new Redactor(secrets).text(text);
}

// The usage limit (Account → Get Usage Limit), seen as `{"block": <bool>, "block_limit": <int>}`
// and sometimes `limit_qty`, read as the count used. What is not given is null, never invented.
export interface UsageLimit {
	blocked: boolean;
	limit: number | null;
	used: number | null;
	/** null unless the gateway gives both counts. */
	remaining: number | null;
}

export function readUsageLimit(result: unknown): UsageLimit {
	const answer = asFields(result) ?? {};
	const source = asFields(answer.message) ?? answer;
	const limit = firstNumber(source, ['block_limit', 'limit', 'blockLimit', 'max', 'quota']);
	const used = firstNumber(source, ['limit_qty', 'used', 'sent', 'count', 'usage']);
	const stated = firstBoolean(source, ['block', 'blocked', 'is_blocked', 'isBlocked']);
	return {
		// No flag given: blocked when the count has reached the limit, else not.
		blocked: stated ?? (limit !== null && used !== null ? used >= limit : false),
		limit,
		used,
		remaining: limit !== null && used !== null ? Math.max(0, limit - used) : null,
	};
}

function firstNumber(source: Fields, keys: string[]): number | null {
	for (const key of keys) {
		const value = source[key];
		// Number('') and Number(' ') are 0: a blank text says no number.
		if (typeof value === 'string' ? value.trim() === '' : typeof value !== 'number') continue;
		if (Number.isFinite(Number(value))) return Number(value);
	}
	return null;
}

function firstBoolean(source: Fields, keys: string[]): boolean | undefined {
	for (const key of keys) {
		const value = source[key];
		if (typeof value === 'boolean') return value;
		if (value === 1 || value === 0) return value === 1;
		if (typeof value === 'string' && /^(true|false|yes|no|1|0)$/i.test(value.trim()))
			return /^(true|yes|1)$/i.test(value.trim());
	}
	return undefined;
}
