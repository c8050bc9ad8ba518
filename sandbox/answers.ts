/**
 * What the sandbox writes on the wire: JSON-RPC envelopes, the error kinds the real
 * Odoo-style service produces, and the HTML pages a proxy or werkzeug would send.
 */

/** One complete HTTP answer, built first and written later (so faults can delay or drop it). */
export interface Answer {
	status: number;
	headers: Record<string, string>;
	body: string;
}

/**
 * An error that becomes an Odoo-style JSON-RPC error envelope. `httpStatus` is usually 200,
 * because the real service reports most failures inside a 200 answer.
 */
export class ApiError extends Error {
	constructor(
		readonly httpStatus: number,
		readonly code: number | string,
		readonly rpcMessage: string,
		readonly dataName: string,
		message: string,
		readonly headers: Record<string, string> = {},
	) {
		super(message);
	}
}

const SERVER_ERROR = 'Odoo Server Error';

export function badRequest(message: string): ApiError {
	return new ApiError(200, 200, SERVER_ERROR, 'werkzeug.exceptions.BadRequest', message);
}

export function serverError(dataName: string, message: string): ApiError {
	return new ApiError(200, 200, SERVER_ERROR, dataName, message);
}

export function accessDenied(): ApiError {
	return new ApiError(200, 200, SERVER_ERROR, 'odoo.exceptions.AccessDenied', 'Access Denied');
}

export function unauthorized(message: string): ApiError {
	return new ApiError(401, 401, 'Unauthorized', 'werkzeug.exceptions.Unauthorized', message);
}

export function sessionExpired(): ApiError {
	return new ApiError(
		200,
		100,
		'Odoo Session Expired',
		'odoo.http.SessionExpiredException',
		'Session expired: token is no longer valid',
	);
}

export function isJsonContentType(contentType: string | undefined): boolean {
	return (contentType ?? '').split(';')[0].trim().toLowerCase() === 'application/json';
}

export function unsupportedMediaType(contentType: string | undefined): ApiError {
	return new ApiError(
		415,
		415,
		'Unsupported Media Type',
		'werkzeug.exceptions.UnsupportedMediaType',
		`Content-Type must be application/json (got ${contentType ?? 'none'})`,
	);
}

export function malformedBody(): ApiError {
	return new ApiError(
		400,
		400,
		'Bad Request',
		'werkzeug.exceptions.BadRequest',
		'Request body must be JSON of the form {"params": {...}}',
	);
}

export function methodNotAllowed(allowed: string[]): ApiError {
	return new ApiError(
		405,
		405,
		'Method Not Allowed',
		'werkzeug.exceptions.MethodNotAllowed',
		`The method is not allowed for the requested URL (allowed: ${allowed.join(', ')})`,
		{ Allow: allowed.join(', ') },
	);
}

/** Retry-After in seconds, or as the HTTP date that many seconds from now (RFC 9110 allows both). */
export function retryAfter(seconds: number, asDate = false): string {
	return asDate ? new Date(Date.now() + seconds * 1000).toUTCString() : String(seconds);
}

export function tooManyRequests(retryAfterValue: string): ApiError {
	return new ApiError(
		429,
		429,
		'Too Many Requests',
		'werkzeug.exceptions.TooManyRequests',
		'Too many requests: retry later',
		{ 'Retry-After': retryAfterValue },
	);
}

function resultEnvelope(result: unknown) {
	return { jsonrpc: '2.0', id: null, result };
}

function errorEnvelope(error: ApiError) {
	return {
		jsonrpc: '2.0',
		id: null,
		error: {
			code: error.code,
			message: error.rpcMessage,
			data: { name: error.dataName, message: error.message, debug: '' },
		},
	};
}

const JSON_TYPE = 'application/json';

export function jsonAnswer(
	status: number,
	payload: unknown,
	headers: Record<string, string> = {},
): Answer {
	return {
		status,
		headers: { 'Content-Type': JSON_TYPE, ...headers },
		body: JSON.stringify(payload),
	};
}

export function resultAnswer(result: unknown): Answer {
	return jsonAnswer(200, resultEnvelope(result));
}

export function errorAnswer(error: ApiError): Answer {
	return jsonAnswer(error.httpStatus, errorEnvelope(error), error.headers);
}

/** Raw body with a JSON content type: used by the malformed/empty-body faults. */
export function rawJsonAnswer(body: string): Answer {
	return { status: 200, headers: { 'Content-Type': JSON_TYPE }, body };
}

const PROXY_STATUS_TEXT: Record<number, string> = {
	502: 'Bad Gateway',
	503: 'Service Temporarily Unavailable',
	504: 'Gateway Time-out',
};

/** The page nginx answers when the backend is down or slow. */
export function proxyErrorPage(status: 502 | 503 | 504, retryAfterValue?: string): Answer {
	const title = `${status} ${PROXY_STATUS_TEXT[status]}`;
	const headers: Record<string, string> = { 'Content-Type': 'text/html', 'Server': 'nginx' };
	if (retryAfterValue !== undefined) headers['Retry-After'] = retryAfterValue;
	return {
		status,
		headers,
		body: `<html><head><title>${title}</title></head><body><center><h1>${title}</h1></center><hr><center>nginx</center></body></html>`,
	};
}

/** The page werkzeug (and so Odoo) answers for an unknown route. */
export function notFoundPage(): Answer {
	return {
		status: 404,
		headers: { 'Content-Type': 'text/html; charset=utf-8' },
		body:
			'<!doctype html>\n<html lang=en>\n<title>404 Not Found</title>\n<h1>Not Found</h1>\n' +
			'<p>The requested URL was not found on the server. If you entered the URL manually please ' +
			'check your spelling and try again.</p>\n',
	};
}
