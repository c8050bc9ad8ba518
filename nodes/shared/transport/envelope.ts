import type { Endpoint } from './endpoints';
import { ApiError, type ApiErrorDetails } from './errors';
import type { Redactor } from './redact';

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
const asFields = (value: unknown): Fields | undefined =>
	value !== null && typeof value === 'object' ? (value as Fields) : undefined;
const numeric = (value: unknown) => (typeof value === 'number' ? value : undefined);

/** The result of a JSON-RPC answer, or an ApiError with the server's words, redacted. */
export function parseEnvelope(endpoint: Endpoint, answer: Answer, redactor: Redactor): unknown {
	const { status, text } = answer;
	const json = parseJson(text);
	const object = asFields(json);
	const isWrite = endpoint.httpMethod === 'POST';
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
	const fail = (kind: ApiErrorDetails['kind'], reason: string, more?: Partial<ApiErrorDetails>) =>
		new ApiError(endpoint, { kind, reason, httpStatus: status, ...more });

	if (status >= 300 && status < 400) {
		// Never followed (a redirect could carry the secret elsewhere), whatever the body says.
		const to = answer.location ? ` to ${clean(answer.location)}` : '';
		throw fail(
			'http',
			`HTTP ${status}: the server redirects${to}, and redirects are not followed. Check the Base URL (http:// vs https://, the host name, no path after it)`,
		);
	}
	const error = object?.error ?? undefined;
	const rpc: RpcError | undefined =
		error === undefined ? undefined : (asFields(error) ?? { message: error });
	if (status >= 400) {
		throw fail('http', `HTTP ${status}${statusText(status)}`, {
			serverMessage: rpc ? clean(rpcText(rpc)) : json === undefined ? cleanPage() : cleanJson(json),
			rpcCode: numeric(rpc?.code),
			authFailure: status === 401 || status === 403,
			retryAfterSeconds: answer.retryAfterSeconds,
			// A proxy's "bad gateway" or "gateway timeout" after a write reached it: the gateway
			// behind it may have done it.
			deliveryUnknown: isWrite && (status === 502 || status === 504),
		});
	}
	// A write answered with success but no readable words: it may well have been done.
	if (text.trim() === '')
		throw fail('invalid-response', `HTTP ${status} with an empty body`, {
			deliveryUnknown: isWrite,
		});
	if (!object) {
		throw fail('invalid-response', `HTTP ${status} with a body that is not JSON`, {
			serverMessage: cleanPage(),
			deliveryUnknown: isWrite,
		});
	}
	if (rpc) {
		const message = rpcText(rpc);
		const code = numeric(rpc.code);
		// Odoo answers every server-side failure with code 200, which tells the user nothing.
		throw fail(
			'rpc',
			`the server answered an error${code !== undefined && code !== 200 ? ` (code ${code})` : ''}`,
			{
				serverMessage: clean(message),
				rpcCode: code,
				authFailure: isAuthFailure(rpc, message),
			},
		);
	}
	// Some routes answer a bare object; accept it as the result rather than fail.
	const result = 'result' in object ? object.result : object;
	const fields = asFields(result) ?? {};
	if (endpoint.rejection === 'successFalse' && fields.success === false) {
		const said = fields.message ?? fields.error;
		throw fail('rejected', 'the server refused the request', {
			serverMessage: clean(typeof said === 'string' && said ? said : 'success: false'),
		});
	}
	if (endpoint.rejection === 'sentFalse') {
		const verdict = sendVerdict(fields);
		if (verdict === 'refused') {
			const said = sendWords(fields);
			throw fail('rejected', 'the message was not sent', {
				serverMessage: said !== undefined ? clean(said) : cleanJson(fields),
			});
		}
		if (verdict === 'unclear') {
			throw fail('unexpected-answer', 'the answer does not say the message was sent', {
				serverMessage: cleanJson(fields),
				deliveryUnknown: true,
			});
		}
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

// Odoo answers an expired session with code 100. Wrong credentials (`AccessDenied`) are left out:
// a new token would not help.
function isAuthFailure(rpc: RpcError, message: string): boolean {
	if (rpc.code === 100 || rpc.code === 401 || rpc.code === 403) return true;
	const name = typeof rpc.data?.name === 'string' ? rpc.data.name.slice(0, 200) : '';
	if (/SessionExpired/i.test(name)) return true;
	// Sentence by sentence, each test a plain word search: linear, where one pattern with
	// `[^.]*` between two words backtracks quadratically on a long sentence.
	return message
		.slice(0, 2048)
		.split('.')
		.some(
			(sentence) =>
				/unauthori[sz]ed/i.test(sentence) ||
				(/\b(?:session|token)\b/i.test(sentence) &&
					/\b(?:expired|invalid|not valid|no longer valid)\b/i.test(sentence)),
		);
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
