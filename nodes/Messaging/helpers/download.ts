import type { Dispatcher } from 'undici';

import { cleanFileName } from '../../shared/fileName';
import { clock } from '../../shared/clock';
import { onFirstUse } from '../../shared/onFirstUse';
import { undici } from '../../shared/transport';
import { EGRESS_REFUSED, egressProblem, poolFor, type EgressPolicy } from './egress';

/** The Content-Disposition reader: loaded by the first download. */
const contentDisposition = onFirstUse(
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use (onFirstUse.ts)
	() => require('content-disposition') as typeof import('content-disposition'),
);

export { closeDownloadConnections } from './egress';

/**
 * A file downloaded from a URL and streamed on, never held whole in memory: Send File with
 * File Source "URL". `openUrlFile` follows redirects (a bounded number, http and https only),
 * reads the answer's headers (status, length, type, file name) and hands back the body as a
 * stream that stops at the size cap and checks the announced length. Every failure is a
 * `UrlFileError` that names the URL (credentials in it redacted) and, for an HTTP failure, the
 * status.
 *
 * Where it may connect (n8n's egress policy, "Block Private Addresses", proxies) and the pools it
 * uses: `egress.ts`. Every request of a download, redirects included, is checked before it is made.
 *
 * Deadlines: Download Timeout bounds the wait for the answer and for each piece of it; the whole
 * download, from the first request to the last byte, gets `deadlineMs` (a server that sends one
 * byte every few hundred milliseconds is cut off there).
 */

export interface UrlFileOptions {
	/** The most bytes the file may have; more fails the download (and the send). */
	readonly maxBytes: number;
	/** Longest wait for the answer's headers, and between two pieces of its body. */
	readonly timeoutMs: number;
	/** The whole download, from its first request to its last byte. */
	readonly deadlineMs: number;
	/** Redirects followed before giving up. */
	readonly maxRedirects: number;
	/** What it may connect to: n8n's egress filter, Block Private Addresses. */
	readonly egress: EgressPolicy;
	/** Show the URL's query values and fragment in outputs and errors (they often hold credentials). */
	readonly showFullUrl?: boolean;
	readonly signal?: AbortSignal;
}

export interface UrlFile {
	/** The URL the file came from after redirects, credentials redacted (for outputs and errors). */
	readonly url: string;
	/** `type/subtype` from the answer's Content-Type, unless absent or generic (octet-stream). */
	readonly mimeType?: string;
	/** From Content-Disposition, else the last segment of the (redirected) URL's path. */
	readonly fileName?: string;
	/** From Content-Length, when the server sent one. */
	readonly byteLength?: number;
	/** The content, piece by piece; throws `UrlFileError` past the cap or on a length mismatch. */
	readonly body: AsyncIterable<Buffer>;
	/** Stops the download (when the body will not be read). */
	discard(): void;
}

/** A failed download. `sourceFailure` tells the transport that a request it was streaming stopped before its end. */
export class UrlFileError extends Error {
	override readonly name = 'UrlFileError';
	readonly sourceFailure = true;
	constructor(
		readonly url: string,
		readonly reason: string,
		readonly httpStatus?: number,
	) {
		super(`Could not download the file from ${url}: ${reason}`);
	}
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** A Content-Disposition longer than this is ignored (the path gives the name). */
const MAX_DISPOSITION_LENGTH = 2048;
const MAX_SHOWN_URL = 300;
const GENERIC_TYPES = new Set([
	'application/octet-stream',
	'binary/octet-stream',
	'application/binary',
	'application/unknown',
	'application/x-download',
	'application/force-download',
]);

/**
 * The URL as errors and outputs show it: no user:password, and (unless `showFullUrl`) no query
 * values and no fragment: signed links and OAuth redirects carry credentials there under any name
 * (`X-Amz-Signature`, `jwt`, `code`, `#access_token`). The names stay, so the link is recognisable.
 */
export function redactUrl(url: URL | string, showFullUrl = false): string {
	let shown: URL;
	try {
		shown = new URL(url.toString());
	} catch {
		return '(an invalid URL)';
	}
	if (shown.username || shown.password) {
		shown.username = '***';
		shown.password = '';
	}
	if (!showFullUrl) {
		const names = [...shown.searchParams.keys()];
		if (names.length)
			shown.search = names.map((name) => `${encodeURIComponent(name)}=***`).join('&');
		else if (shown.search) shown.search = '***';
		if (shown.hash) shown.hash = '***';
	}
	const text = shown.toString();
	return text.length > MAX_SHOWN_URL ? `${text.slice(0, MAX_SHOWN_URL)}…` : text;
}

/**
 * What a URL points at, for a message's idempotency key: without user:password and without the
 * values of secret-looking query keys (a signed link whose signature changes still names the same
 * file). Never shown: the key is a hash of it.
 */
export function urlIdentity(url: string): string {
	// Only the values of credential-looking keys are dropped: `?id=1` and `?id=2` stay two files.
	const SECRET_QUERY_KEY =
		/token|key|secret|sig|signature|password|passwd|pass|auth|credential|session|^jwt$|^code$/i;
	let parsed: URL;
	try {
		parsed = new URL(url);
	} catch {
		return url;
	}
	parsed.username = '';
	parsed.password = '';
	for (const key of [...new Set(parsed.searchParams.keys())])
		if (SECRET_QUERY_KEY.test(key)) parsed.searchParams.set(key, '');
	return parsed.toString();
}

/** Why a text is not a URL this can download from, or undefined when it is one. */
export function urlProblem(text: string): string | undefined {
	let url: URL;
	try {
		url = new URL(text);
	} catch {
		return 'is not a URL';
	}
	if (url.protocol !== 'http:' && url.protocol !== 'https:')
		return `uses ${url.protocol.replace(/:$/, '')}: only http and https URLs can be downloaded`;
	if (!url.hostname) return 'has no host';
	return undefined;
}

/** Follows redirects to the file and returns its headers and a stream of its body. */
export async function openUrlFile(text: string, options: UrlFileOptions): Promise<UrlFile> {
	const shownUrl = (url: URL | string) => redactUrl(url, options.showFullUrl);
	const problem = urlProblem(text);
	if (problem) throw new UrlFileError(shownUrl(text), `the URL ${problem}`);
	// The whole download's deadline, and the execution's cancel, stop whichever request is running.
	const deadline = new Deadline(options);
	let opened = false;
	try {
		const file = await follow(new URL(text), options, deadline, shownUrl);
		opened = true;
		return {
			...file,
			body: cappedBody(file.response.body, file.url, file.byteLength, options, deadline),
			discard: () => {
				discardBody(file.response.body);
				deadline.end();
			},
		};
	} finally {
		// On success the body's reader or discard() ends it.
		if (!opened) deadline.end();
	}
}

/** The answer that holds the file, after redirects, its headers read. */
async function follow(
	start: URL,
	options: UrlFileOptions,
	deadline: Deadline,
	shownUrl: (url: URL | string) => string,
): Promise<Omit<UrlFile, 'body' | 'discard'> & { response: Dispatcher.ResponseData }> {
	let url = start;
	// user:password in the URL becomes HTTP Basic authorization, for that origin only.
	const credentialOrigin = url.username || url.password ? url.origin : undefined;
	const basic = credentialOrigin
		? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
		: undefined;

	for (let redirects = 0; ; redirects++) {
		const shown = shownUrl(url);
		const refused = await egressProblem(url, options.egress, redirects > 0);
		if (refused) throw new UrlFileError(shown, refused);
		const target = new URL(url.toString());
		target.username = '';
		target.password = '';
		const headers: Record<string, string> = {
			'accept': '*/*',
			'user-agent': 'n8n-nodes-messaging-rate',
		};
		if (basic && url.origin === credentialOrigin) headers.authorization = basic;

		// UrlFileError: the download knows no n8n node; runItems converts it (toNodeError).
		const response: Dispatcher.ResponseData = await undici()
			.request(target, {
				method: 'GET',
				headers,
				dispatcher: poolFor(options.egress),
				headersTimeout: options.timeoutMs,
				bodyTimeout: options.timeoutMs,
				signal: deadline.signal,
			})
			.catch((cause: unknown) => {
				throw new UrlFileError(shown, connectionReason(cause, options, deadline));
			});

		const { statusCode: status } = response;
		if (REDIRECT_STATUSES.has(status)) {
			const location = header(response.headers.location);
			discardBody(response.body);
			if (!location)
				throw new UrlFileError(
					shown,
					`the server answered HTTP ${status} (a redirect) without a Location`,
					status,
				);
			if (redirects >= options.maxRedirects) {
				throw new UrlFileError(
					shown,
					`more than ${options.maxRedirects} redirects (raise "Max Redirects" if the server really needs more)`,
					status,
				);
			}
			if (!URL.canParse(location, url.href))
				throw new UrlFileError(shown, `the server redirected to an invalid URL`, status);
			const next = new URL(location, url);
			const nextProblem = urlProblem(next.toString());
			if (nextProblem)
				throw new UrlFileError(
					shown,
					`the server redirected to ${shownUrl(next)}, which ${nextProblem}`,
					status,
				);
			url = next;
			continue;
		}
		if (status < 200 || status >= 300) {
			discardBody(response.body);
			throw new UrlFileError(
				shown,
				`the server answered HTTP ${status}${statusText(status)}`,
				status,
			);
		}

		const declared = contentLength(response.headers['content-length']);
		if (declared !== undefined && declared > options.maxBytes) {
			discardBody(response.body);
			throw new UrlFileError(
				shown,
				`the file has ${sizeInWords(declared)}, over the limit of ${sizeInWords(options.maxBytes)} (raise "Max File Size" to send it)`,
			);
		}
		if (declared === 0) {
			discardBody(response.body);
			throw new UrlFileError(shown, 'the file is empty (0 bytes)');
		}
		return {
			url: shown,
			mimeType: mimeTypeOf(header(response.headers['content-type'])),
			fileName:
				dispositionFileName(header(response.headers['content-disposition'])) ?? pathFileName(url),
			byteLength: declared,
			response,
		};
	}
}

/**
 * The whole download's deadline, joined with the execution's cancel signal: one signal for
 * every request and the body. `end()` when the download is over (read, failed or discarded).
 */
class Deadline {
	private readonly controller = new AbortController();
	private readonly limit: AbortSignal;
	private readonly cancel = () => this.controller.abort();
	private readonly expire = () => {
		this.expired = true;
		this.controller.abort();
	};
	private expired = false;

	constructor(private readonly options: UrlFileOptions) {
		this.limit = clock.deadline(options.deadlineMs);
		this.limit.addEventListener('abort', this.expire, { once: true });
		options.signal?.addEventListener('abort', this.cancel, { once: true });
		if (options.signal?.aborted) this.controller.abort();
	}

	get signal(): AbortSignal {
		return this.controller.signal;
	}

	/** Whether the deadline (not a cancel) stopped the download. */
	get passed(): boolean {
		return this.expired;
	}

	end(): void {
		this.limit.removeEventListener('abort', this.expire);
		this.options.signal?.removeEventListener('abort', this.cancel);
	}
}

async function* cappedBody(
	body: Dispatcher.ResponseData['body'],
	shown: string,
	declared: number | undefined,
	options: UrlFileOptions,
	deadline: Deadline,
): AsyncGenerator<Buffer> {
	let received = 0;
	let complete = false;
	const brokeOff = (error: unknown) =>
		new UrlFileError(
			shown,
			`the download broke off after ${received} bytes (${connectionReason(error, options, deadline)})`,
		);
	try {
		for await (const chunk of convertedErrors(body, brokeOff)) {
			const piece = chunk as Buffer;
			received += piece.length;
			if (received > options.maxBytes) {
				throw new UrlFileError(
					shown,
					`the file is larger than the limit of ${sizeInWords(options.maxBytes)} (raise "Max File Size" to send it)`,
				);
			}
			if (declared !== undefined && received > declared) {
				throw new UrlFileError(
					shown,
					`the server sent more than the ${declared} bytes it announced`,
				);
			}
			yield piece;
		}
		complete = true;
	} finally {
		// A failure (a limit passed, the connection broken) or a reader that stopped: free the connection.
		if (!complete) discardBody(body);
		deadline.end();
	}
	if (declared !== undefined && received !== declared) {
		throw new UrlFileError(
			shown,
			`the download ended after ${received} of the ${declared} bytes the server announced`,
		);
	}
	if (received === 0) throw new UrlFileError(shown, 'the file is empty (0 bytes)');
}

/** Stops reading an answer; the abort this causes is expected, not an error to report. */
function discardBody(body: Dispatcher.ResponseData['body']): void {
	body.on('error', () => undefined);
	body.destroy();
}

function connectionReason(cause: unknown, options: UrlFileOptions, deadline: Deadline): string {
	if (cause instanceof UrlFileError) return cause.reason;
	const error = cause as {
		code?: string;
		name?: string;
		message?: string;
		cause?: { code?: string; message?: string };
	};
	const code = error?.code ?? error?.cause?.code;
	if (deadline.passed)
		return `the download took longer than ${seconds(options.deadlineMs)} s in all (Download Timeout plus 1 s per MB of Max File Size)`;
	if (options.signal?.aborted || error?.name === 'AbortError') return 'the execution was cancelled';
	if (
		code === 'UND_ERR_HEADERS_TIMEOUT' ||
		code === 'UND_ERR_BODY_TIMEOUT' ||
		code === 'UND_ERR_CONNECT_TIMEOUT'
	) {
		return `no data for ${seconds(options.timeoutMs)} s (raise "Download Timeout" if the server is slow)`;
	}
	if (code === EGRESS_REFUSED) return error.message ?? error.cause?.message ?? 'a private address';
	return `the connection failed (${code ?? error?.name ?? 'unknown error'})`;
}

function seconds(ms: number): number {
	return Number((ms / 1000).toFixed(1));
}

const STATUS_TEXTS: Record<number, string> = {
	401: 'Unauthorized',
	403: 'Forbidden',
	404: 'Not Found',
	410: 'Gone',
	429: 'Too Many Requests',
	500: 'Internal Server Error',
	502: 'Bad Gateway',
	503: 'Service Unavailable',
	504: 'Gateway Timeout',
};

function statusText(status: number): string {
	return STATUS_TEXTS[status] ? ` ${STATUS_TEXTS[status]}` : '';
}

function header(value: string | string[] | undefined): string | undefined {
	return Array.isArray(value) ? value[0] : value;
}

function contentLength(value: string | string[] | undefined): number | undefined {
	const text = header(value);
	if (text === undefined || !/^\d{1,15}$/.test(text.trim())) return undefined;
	return Number(text.trim());
}

function mimeTypeOf(contentType: string | undefined): string | undefined {
	const type = contentType?.slice(0, 256).split(';')[0].trim().toLowerCase();
	if (!type || !/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+$/.test(type) || GENERIC_TYPES.has(type))
		return undefined;
	return type;
}

function dispositionFileName(value: string | undefined): string | undefined {
	if (!value || value.length > MAX_DISPOSITION_LENGTH) return undefined;
	try {
		const { parameters } = contentDisposition().parse(value);
		// The parser puts the decoded RFC 8187 `filename*` (when valid) under `filename`.
		return parameters.filename ? cleanFileName(parameters.filename) || undefined : undefined;
	} catch {
		return undefined;
	}
}

function pathFileName(url: URL): string | undefined {
	let segment: string;
	try {
		segment = decodeURIComponent(url.pathname.split('/').pop() ?? '');
	} catch {
		segment = url.pathname.split('/').pop() ?? '';
	}
	return cleanFileName(segment) || undefined;
}

function sizeInWords(bytes: number): string {
	if (bytes < 1024 * 1024) return `${bytes} bytes`;
	const mb = bytes / (1024 * 1024);
	return `${mb >= 10 ? Math.round(mb) : mb.toFixed(1)} MB`;
}

/** The chunks of `source`, its failures turned into `convert(error)` (the stream's own errors name no file). */
async function* convertedErrors<T>(
	source: AsyncIterable<T>,
	convert: (error: unknown) => Error,
): AsyncGenerator<T> {
	const chunks = source[Symbol.asyncIterator]();
	for (;;) {
		const step = await chunks.next().catch((error: unknown) => {
			throw convert(error);
		});
		if (step.done) return;
		yield step.value;
	}
}
