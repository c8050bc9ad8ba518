import { parse as parseContentDisposition } from 'content-disposition';
import { lookup as dnsLookup, type LookupAddress } from 'dns';
import { BlockList, isIP, type LookupFunction } from 'net';
import { basename } from 'path';
import { Agent, request, type Dispatcher } from 'undici';

/**
 * A file downloaded from a URL and streamed on, never held whole in memory: Send File with
 * File Source "URL". `openUrlFile` follows redirects (a bounded number, http and https only),
 * reads the answer's headers (status, length, type, file name) and hands back the body as a
 * stream that stops at the size cap and checks the announced length. Every failure is a
 * `UrlFileError` that names the URL (credentials in it redacted) and, for an HTTP failure, the
 * status.
 *
 * Server-side request forgery: like n8n's own HTTP Request node, this downloads any URL the
 * workflow gives it, including addresses inside the n8n host's network. `blockPrivateAddresses`
 * refuses loopback, private, link-local and other non-public addresses, checked on the address
 * actually connected to (after DNS), on every redirect.
 */

export interface UrlFileOptions {
	/** The most bytes the file may have; more fails the download (and the send). */
	readonly maxBytes: number;
	/** Longest wait for the answer's headers, and between two pieces of its body. */
	readonly timeoutMs: number;
	/** Redirects followed before giving up. */
	readonly maxRedirects: number;
	/** Refuse loopback, private and link-local addresses (see above). */
	readonly blockPrivateAddresses?: boolean;
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
/** Query parameters whose values are credentials (signed links, API keys). */
const SECRET_QUERY_KEY =
	/token|key|secret|sig|signature|password|passwd|pass|auth|credential|session/i;
const GENERIC_TYPES = new Set([
	'application/octet-stream',
	'binary/octet-stream',
	'application/binary',
	'application/unknown',
	'application/x-download',
	'application/force-download',
]);

/** The URL as errors and outputs may show it: no user:password, no values of secret-looking query keys. */
export function redactUrl(url: URL | string): string {
	let parsed: URL;
	try {
		parsed = new URL(url.toString());
	} catch {
		return '(an invalid URL)';
	}
	const shown = new URL(parsed.toString());
	if (shown.username || shown.password) {
		shown.username = '***';
		shown.password = '';
	}
	for (const key of [...new Set(shown.searchParams.keys())]) {
		if (SECRET_QUERY_KEY.test(key)) shown.searchParams.set(key, '***');
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
	const problem = urlProblem(text);
	if (problem) throw new UrlFileError(redactUrl(text), `the URL ${problem}`);
	let url = new URL(text);
	// user:password in the URL becomes HTTP Basic authorization, for that origin only.
	const credentialOrigin = url.username || url.password ? url.origin : undefined;
	const basic = credentialOrigin
		? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
		: undefined;

	for (let redirects = 0; ; redirects++) {
		const shown = redactUrl(url);
		if (options.blockPrivateAddresses) assertPublicLiteral(url, shown);
		const target = new URL(url.toString());
		target.username = '';
		target.password = '';
		const headers: Record<string, string> = {
			'accept': '*/*',
			'user-agent': 'n8n-nodes-messaging-rate',
		};
		if (basic && url.origin === credentialOrigin) headers.authorization = basic;

		let response: Dispatcher.ResponseData;
		try {
			response = await request(target, {
				method: 'GET',
				headers,
				dispatcher: agentFor(options),
				headersTimeout: options.timeoutMs,
				bodyTimeout: options.timeoutMs,
				signal: options.signal,
			});
		} catch (cause) {
			// eslint-disable-next-line @n8n/community-nodes/require-node-api-error -- the download knows no n8n node: runItems converts UrlFileError (toNodeError)
			throw new UrlFileError(shown, connectionReason(cause, options));
		}

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
			let next: URL;
			try {
				next = new URL(location, url);
			} catch {
				// eslint-disable-next-line @n8n/community-nodes/require-node-api-error -- the download knows no n8n node: runItems converts UrlFileError (toNodeError)
				throw new UrlFileError(shown, `the server redirected to an invalid URL`, status);
			}
			const nextProblem = urlProblem(next.toString());
			if (nextProblem)
				throw new UrlFileError(
					shown,
					`the server redirected to ${redactUrl(next)}, which ${nextProblem}`,
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
			body: cappedBody(response.body, shown, declared, options),
			discard: () => discardBody(response.body),
		};
	}
}

async function* cappedBody(
	body: Dispatcher.ResponseData['body'],
	shown: string,
	declared: number | undefined,
	options: UrlFileOptions,
): AsyncGenerator<Buffer> {
	let received = 0;
	try {
		for await (const chunk of body) {
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
	} catch (error) {
		discardBody(body);
		// eslint-disable-next-line @n8n/community-nodes/require-node-api-error -- the download knows no n8n node: runItems converts UrlFileError (toNodeError)
		if (error instanceof UrlFileError) throw error;
		// eslint-disable-next-line @n8n/community-nodes/require-node-api-error -- the download knows no n8n node: runItems converts UrlFileError (toNodeError)
		throw new UrlFileError(
			shown,
			`the download broke off after ${received} bytes (${connectionReason(error, options)})`,
		);
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

function connectionReason(cause: unknown, options: UrlFileOptions): string {
	if (cause instanceof UrlFileError) return cause.reason;
	const error = cause as {
		code?: string;
		name?: string;
		message?: string;
		cause?: { code?: string; message?: string };
	};
	const code = error?.code ?? error?.cause?.code;
	if (options.signal?.aborted || error?.name === 'AbortError') return 'the execution was cancelled';
	if (
		code === 'UND_ERR_HEADERS_TIMEOUT' ||
		code === 'UND_ERR_BODY_TIMEOUT' ||
		code === 'UND_ERR_CONNECT_TIMEOUT'
	) {
		return `no data for ${Number((options.timeoutMs / 1000).toFixed(1))} s (raise "Download Timeout" if the server is slow)`;
	}
	if (code === PRIVATE_ADDRESS_CODE)
		return error.message ?? error.cause?.message ?? 'a private address';
	return `the connection failed (${code ?? error?.name ?? 'unknown error'})`;
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
		const { parameters } = parseContentDisposition(value);
		// The parser puts the decoded RFC 8187 `filename*` (when valid) under `filename`.
		return safeFileName(parameters.filename);
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
	return safeFileName(segment);
}

/** A name without folders or control characters, or undefined when nothing usable is left. */
function safeFileName(name: string | undefined): string | undefined {
	if (!name) return undefined;
	const cleaned = basename(name.replace(/\\/g, '/'))
		.replace(/[\u0000-\u001f\u007f]/g, '')
		.trim()
		.slice(0, 255);
	return cleaned && cleaned !== '.' && cleaned !== '..' ? cleaned : undefined;
}

function sizeInWords(bytes: number): string {
	if (bytes < 1024 * 1024) return `${bytes} bytes`;
	const mb = bytes / (1024 * 1024);
	return `${mb >= 10 ? Math.round(mb) : mb.toFixed(1)} MB`;
}

// ---------------------------------------------------------------------------------------------
// Connections, and the optional refusal of non-public addresses

const PRIVATE_ADDRESS_CODE = 'ERR_PRIVATE_ADDRESS';

/** Addresses a download must not reach when "Block Private Addresses" is on. */
const nonPublic = (() => {
	const list = new BlockList();
	for (const [net, prefix] of [
		['0.0.0.0', 8],
		['10.0.0.0', 8],
		['100.64.0.0', 10],
		['127.0.0.0', 8],
		['169.254.0.0', 16],
		['172.16.0.0', 12],
		['192.0.0.0', 24],
		['192.168.0.0', 16],
		['198.18.0.0', 15],
		['224.0.0.0', 4],
		['240.0.0.0', 4],
	] as const) {
		list.addSubnet(net, prefix, 'ipv4');
	}
	for (const [net, prefix] of [
		['::', 128],
		['::1', 128],
		['fc00::', 7],
		['fe80::', 10],
		['ff00::', 8],
	] as const) {
		list.addSubnet(net, prefix, 'ipv6');
	}
	return list;
})();

export function isPublicAddress(address: string): boolean {
	const family = isIP(address);
	if (family === 0) return false;
	if (family === 6) {
		const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
		if (mapped) return !nonPublic.check(mapped[1], 'ipv4');
		return !nonPublic.check(address, 'ipv6');
	}
	return !nonPublic.check(address, 'ipv4');
}

function assertPublicLiteral(url: URL, shown: string): void {
	const host = url.hostname.replace(/^\[|\]$/g, '');
	if (isIP(host) && !isPublicAddress(host)) {
		throw new UrlFileError(
			shown,
			`${host} is a private or local address, and "Block Private Addresses" is on`,
		);
	}
}

/** DNS lookup that fails for non-public addresses: the check applies to the address connected to. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
	dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
		if (error) return callback(error, '', 0);
		const list = addresses as unknown as LookupAddress[];
		const refused = list.find((entry) => !isPublicAddress(entry.address));
		if (refused) {
			const blocked = Object.assign(
				new Error(
					`${hostname} resolves to ${refused.address}, a private or local address, and "Block Private Addresses" is on`,
				),
				{
					code: PRIVATE_ADDRESS_CODE,
				},
			);
			return callback(blocked, '', 0);
		}
		if ((options as { all?: boolean }).all)
			return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
		return callback(null, list[0].address, list[0].family);
	});
};

const agents = new Map<string, Agent>();

function agentFor(options: UrlFileOptions): Dispatcher {
	const key = `${options.blockPrivateAddresses === true}:${options.timeoutMs}`;
	let agent = agents.get(key);
	if (!agent) {
		agent = new Agent({
			keepAliveTimeout: 4_000,
			connect: {
				timeout: Math.min(options.timeoutMs, 30_000),
				...(options.blockPrivateAddresses ? { lookup: publicOnlyLookup } : {}),
			},
		});
		agents.set(key, agent);
	}
	return agent;
}

/** Closes the pooled download connections (tests; n8n never needs to). */
export async function closeDownloadConnections(): Promise<void> {
	const closing = [...agents.values()].map(async (agent) => await agent.close());
	agents.clear();
	await Promise.all(closing);
}
