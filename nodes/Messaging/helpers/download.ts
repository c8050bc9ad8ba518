import type { IDisplayOptions, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { fileIdentity, isMimeType } from '../../shared/dataUri';
import { causeInWords, cutShort } from '../../shared/errors';
import { cleanFileName, decoded } from '../../shared/fileName';
import { clock, timerDelay } from '../../shared/clock';
import { statusText, type DataUriParam } from '../../shared/transport';
import { privateAddressProblem } from './privateAddresses';
import { numberValue, type RunContext } from '../../shared/execution/operationRun';

const contentDisposition = () =>
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use: start-up (CONTRIBUTING)
	require('content-disposition') as typeof import('content-disposition');

/**
 * Send File with File Source "URL": its parameters, checked before any request, and the download
 * with n8n's own HTTP helper (so n8n's proxy settings and outbound policy apply), streamed into the
 * send, never whole in memory. Redirects are followed here, one request per hop, so that Block
 * Private Addresses checks each hop and user:password goes to its own origin only. A failure names
 * the URL, credentials hidden.
 */

type HttpRequest = IExecuteFunctions['helpers']['httpRequest'];

/** The item's download settings, and n8n's cancel signal of the execution (Stop). */
type UrlFileOptions = ReturnType<typeof readUrlSource>['options'] & { signal?: AbortSignal };

/** `sourceFailure`: the transport's request stopped before its end, so the gateway got nothing. */
class UrlFileError extends Error {
	override readonly name = 'UrlFileError';
	readonly sourceFailure = true;
	constructor(url: string, reason: string) {
		super(`Could not download the file from ${url}: ${reason}`);
	}
}

/**
 * Opens the download (headers only) and returns the file as the send's param: the mime type and
 * the file name go into the request before the content. A retry of the send (only when the
 * gateway cannot have received it) downloads the file again.
 */
export async function downloadToSend(
	http: HttpRequest,
	url: string,
	options: UrlFileOptions,
	given: { fileName?: string; mimeType?: string },
) {
	let unread: OpenedFile | undefined = await openFile(http, url, options);
	const first = unread;
	const identity = fileIdentity(given, first);
	let streamed = 0;
	return {
		// No byteLength: n8n's helper inflates what a server encoded (Content-Encoding: gzip …)
		// though none was asked for, so a Content-Length does not count the bytes sent on.
		body: {
			kind: 'dataUri',
			mimeType: identity.mimeType,
			maxByteLength: options.maxBytes,
			open: async function* () {
				const file = unread ?? (await openFile(http, url, options));
				unread = undefined;
				if (file.byteLength !== first.byteLength) {
					file.discard();
					throw new UrlFileError(file.url, 'the file changed between two attempts');
				}
				streamed = 0;
				for await (const piece of file.body) {
					streamed += piece.length;
					yield piece;
				}
			},
		} satisfies DataUriParam,
		fileName: identity.fileName,
		get byteLength() {
			return streamed || undefined;
		},
		url: first.url,
		discard: () => {
			unread?.discard();
			unread = undefined;
		},
	};
}

type Body = AsyncIterable<Buffer> & {
	destroy(): void;
	on(event: 'error', listener: () => void): void;
};
type OpenedFile = Awaited<ReturnType<typeof openFile>>;

/** Follows redirects to the file and returns its headers and its body, capped. */
async function openFile(http: HttpRequest, text: string, options: UrlFileOptions) {
	let url = new URL(text);
	const refuse = (reason: string) => new UrlFileError(redactUrl(url, options.showFullUrl), reason);
	// user:password in the URL goes as HTTP Basic authorization, to its own origin only.
	const basic = `Basic ${Buffer.from(`${decoded(url.username)}:${decoded(url.password)}`).toString('base64')}`;
	const origin = url.username || url.password ? url.origin : undefined;
	const credentials = (to: URL) => (to.origin === origin ? { authorization: basic } : {});
	const stopper = stopperFor(options);
	let release = () => {};
	let opened = false;
	try {
		for (let redirects = 0; ; redirects++) {
			const refused = options.blockPrivateAddresses && (await privateAddressProblem(url));
			if (refused) throw refuse(refused);
			const target = new URL(url);
			target.username = '';
			target.password = '';
			const hop = new AbortController();
			stopper.waiting(true);
			const answer = (await http({
				url: target.href,
				method: 'GET',
				// Identity asked for; what a server encodes anyway arrives inflated, capped as it comes.
				headers: { 'accept': '*/*', 'accept-encoding': 'identity', ...credentials(url) },
				encoding: 'stream',
				returnFullResponse: true,
				ignoreHttpStatusErrors: true,
				disableFollowRedirect: true,
				abortSignal: AbortSignal.any([stopper.signal, hop.signal]),
			}).catch((cause: unknown) => {
				throw refuse(failure(cause, stopper));
			})) as { statusCode: number; headers: Record<string, string | string[]>; body: Body };
			stopper.waiting(false);
			const { statusCode: status, headers, body } = answer;
			// A stop is seen by the body's reader; until there is one, its error has a listener here.
			body.on('error', () => undefined);
			// Destroying a body may leave its connection open: aborting the request closes it.
			release = () => {
				hop.abort();
				body.destroy();
			};
			const header = (name: string) => [headers[name]].flat()[0];
			const location = header('location');
			if (status >= 300 && status < 400 && location) {
				release();
				if (redirects >= options.maxRedirects)
					throw refuse(
						`more than ${options.maxRedirects} redirects (raise "Max Redirects" if the server really needs more)`,
					);
				const next = URL.canParse(location, url.href) ? new URL(location, url) : undefined;
				const problem = next ? urlProblem(next.href) : 'is not a URL';
				if (problem)
					throw refuse(
						`the server redirected to ${next ? redactUrl(next, options.showFullUrl) : 'an address'}, which ${problem}`,
					);
				url = next as URL;
				continue;
			}
			if (status < 200 || status >= 300)
				throw refuse(`the server answered HTTP ${status}${statusText(status)}`);
			const length = header('content-length')?.trim();
			const declared = length && /^\d{1,15}$/.test(length) ? Number(length) : undefined;
			if (declared !== undefined && declared > options.maxBytes)
				throw refuse(
					`the file has ${inWords(declared)}, over the limit of ${inWords(options.maxBytes)} (raise "Max File Size" to send it)`,
				);
			if (declared === 0) throw refuse('the file is empty (0 bytes)');
			opened = true;
			return {
				url: redactUrl(url, options.showFullUrl),
				mimeType: mimeTypeOf(header('content-type')),
				fileName: dispositionFileName(header('content-disposition')) ?? pathFileName(url),
				byteLength: declared,
				body: cappedBody(body, release, refuse, options.maxBytes, stopper),
				discard: () => {
					release();
					stopper.end();
				},
			};
		}
	} finally {
		// Once opened, the body's reader or discard() ends it.
		if (!opened) {
			release();
			stopper.end();
		}
	}
}

/**
 * One signal for a download's requests and body, and why it stopped: the whole download's
 * deadline, n8n's cancel, or a wait for data longer than Download Timeout (`waiting(true)`).
 */
function stopperFor(options: UrlFileOptions) {
	const controller = new AbortController();
	const state = { signal: controller.signal, reason: undefined as string | undefined };
	const stop = (reason: string) => {
		state.reason ??= reason;
		controller.abort();
	};
	const { deadlineMs, timeoutMs, signal } = options;
	const endDeadline = clock.limit(deadlineMs, () =>
		stop(
			`the download took longer than ${seconds(deadlineMs)} s in all (Download Timeout plus 1 s per MB of Max File Size)`,
		),
	);
	const stall = `no data for ${seconds(timeoutMs)} s (raise "Download Timeout" if the server is slow)`;
	let endWait = () => {};
	const cancel = () => stop('the execution was cancelled');
	signal?.addEventListener('abort', cancel, { once: true });
	if (signal?.aborted) cancel();
	return Object.assign(state, {
		waiting(on: boolean) {
			endWait();
			endWait = on ? clock.limit(timeoutMs, () => stop(stall)) : () => {};
		},
		end() {
			endWait();
			endDeadline();
			signal?.removeEventListener('abort', cancel);
		},
	});
}
type Stopper = ReturnType<typeof stopperFor>;

// Counted as it arrives, inflated: the cap bounds what is inflated. A body shorter than its
// Content-Length fails as a broken connection (Node's HTTP parser checks it).
async function* cappedBody(
	body: Body,
	release: () => void,
	refuse: (reason: string) => UrlFileError,
	maxBytes: number,
	stopper: Stopper,
): AsyncGenerator<Buffer> {
	let received = 0;
	const pieces = body[Symbol.asyncIterator]();
	try {
		for (;;) {
			stopper.waiting(true);
			const next = await pieces.next().catch((error: unknown) => {
				throw refuse(`the download broke off after ${received} bytes (${failure(error, stopper)})`);
			});
			stopper.waiting(false);
			if (next.done) break;
			received += next.value.length;
			if (received > maxBytes)
				throw refuse(
					`the file is larger than the limit of ${inWords(maxBytes)} (raise "Max File Size" to send it)`,
				);
			yield next.value;
		}
	} finally {
		release();
		stopper.end();
	}
	if (received === 0) throw refuse('the file is empty (0 bytes)');
}

/** Why a request or body failed; system error codes in words (n8n replaces a message holding one). */
function failure(cause: unknown, stopper: Stopper): string {
	if (stopper.reason) return stopper.reason;
	const { code, message } = (cause ?? {}) as { code?: unknown; message?: unknown };
	if (typeof code === 'string' && /^E[A-Z]+$/.test(code))
		return `the connection failed (${causeInWords(code)})`;
	return `the request failed (${causeInWords(String(message ?? cause).slice(0, 300))})`;
}

/**
 * The URL as errors and outputs show it: no user:password, and (unless `showFullUrl`) no query
 * values and no fragment: signed links and OAuth redirects carry credentials there under any name
 * (`X-Amz-Signature`, `jwt`, `code`, `#access_token`). The names stay, so the link is recognisable.
 */
function redactUrl(text: URL | string, showFullUrl = false): string {
	const url = new URL(text);
	if (url.username || url.password) [url.username, url.password] = ['***', ''];
	if (!showFullUrl) {
		const names = [...url.searchParams.keys()].map((name) => `${encodeURIComponent(name)}=***`);
		url.search = names.length ? names.join('&') : url.search && '***';
		if (url.hash) url.hash = '***';
	}
	const shown = url.toString();
	return shown.length > 300 ? `${shown.slice(0, 300)}…` : shown;
}

/**
 * What redactUrl hides, found by the characters of a text the URL parser refuses (a typo in the
 * port) or reads without user info (`admin:pw@host`, "admin:" taken for a scheme).
 */
function redactText(text: string): string {
	const scheme = /^[a-z][\w+.-]*:[/\\]*/i.exec(text)?.[0] ?? '';
	let rest = text.slice(scheme.length);
	const at = rest.lastIndexOf('@', rest.search(/[/\\?#]|$/));
	if (at !== -1) rest = `***${rest.slice(at)}`;
	const hash = rest.indexOf('#');
	const [path, query] = (hash === -1 ? rest : rest.slice(0, hash)).split(/\?(.*)/s);
	const names = query?.split('&').map((pair) => `${pair.split('=', 1)[0]}=***`);
	return `${scheme}${path}${names ? `?${names.join('&')}` : ''}${hash === -1 ? '' : '#***'}`;
}

/**
 * Query parameters (lower case) whose values sign a link or carry its credentials: they change
 * when the same file's link is signed again. Any other parameter tells files apart.
 */
const SIGNING_PARAMETERS = new Set(
	[
		'x-amz-credential x-amz-date x-amz-expires x-amz-security-token x-amz-signature', // Amazon S3
		'awsaccesskeyid signature expires policy key-pair-id', // older S3 signatures, CloudFront
		'x-goog-credential x-goog-date x-goog-expires x-goog-signature googleaccessid', // Google Cloud
		'sig se st sp sv', // Azure shared access signatures
		'token access_token jwt',
	].flatMap((names) => names.split(' ')),
);
/** The part of a query `urlIdentity` reads; parameters past it are kept as they are. */
const MAX_IDENTITY_QUERY = 16 * 1024;

/**
 * What a URL points at, for a message's idempotency key (a hash of it, never shown): without
 * user:password, the fragment (never sent) and the values of SIGNING_PARAMETERS, in one pass.
 */
export function urlIdentity(text: string): string {
	if (!URL.canParse(text)) return text;
	const url = new URL(text);
	[url.username, url.password, url.hash] = ['', '', ''];
	const query = url.search.slice(1);
	const cut =
		query.length > MAX_IDENTITY_QUERY
			? Math.max(query.lastIndexOf('&', MAX_IDENTITY_QUERY), 0)
			: query.length;
	const read = query.slice(0, cut).split('&');
	const blanked = read.map((pair) => {
		const name = pair.split('=', 1)[0];
		return SIGNING_PARAMETERS.has(name.toLowerCase()) ? `${name}=` : pair;
	});
	url.search = blanked.join('&') + query.slice(cut);
	return url.toString();
}

/** Why a text is not a URL this can download from, or undefined when it is one. */
export function urlProblem(text: string): string | undefined {
	if (!URL.canParse(text)) return 'is not a URL';
	const { protocol, hostname } = new URL(text);
	if (protocol !== 'http:' && protocol !== 'https:')
		return `uses ${protocol.slice(0, -1)}: only http and https URLs can be downloaded`;
	return hostname ? undefined : 'has no host';
}

function seconds(ms: number): number {
	return Number((ms / 1000).toFixed(1));
}

function inWords(bytes: number): string {
	const mb = bytes / (1024 * 1024);
	if (mb < 1) return `${bytes} bytes`;
	return `${mb >= 10 ? Math.round(mb) : mb.toFixed(1)} MB`;
}

/** `type/subtype` of a Content-Type, unless absent or generic (octet-stream). */
function mimeTypeOf(contentType: string | undefined): string | undefined {
	const type = contentType?.slice(0, 256).split(';')[0].trim().toLowerCase();
	const generic =
		/^(application\/(octet-stream|binary|unknown|x-download|force-download)|binary\/octet-stream)$/;
	return type && isMimeType(type) && !generic.test(type) ? type : undefined;
}

/** The name a Content-Disposition gives (RFC 8187 `filename*` first), cleaned; a long one is ignored. */
function dispositionFileName(value: string | undefined): string | undefined {
	if (!value || value.length > 2048) return undefined;
	try {
		// The parser puts a valid `filename*`, decoded, under `filename`.
		const name = contentDisposition().parse(value).parameters.filename;
		return name ? cleanFileName(name) || undefined : undefined;
	} catch {
		return undefined;
	}
}

function pathFileName(url: URL): string | undefined {
	return cleanFileName(decoded(url.pathname.split('/').pop() ?? '')) || undefined;
}

const DEFAULT_MAX_FILE_SIZE_MB = 50;
const DEFAULT_DOWNLOAD_TIMEOUT_SECONDS = 60;
const DEFAULT_MAX_REDIRECTS = 5;

/** The URL field and the download's settings, shown when File Source is "URL". */
export function urlSourceProperties(show: IDisplayOptions): INodeProperties[] {
	return [
		{
			displayName: 'File URL',
			name: 'fileUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'https://example.com/files/invoice.pdf',
			description:
				'An http or https address the file is downloaded from while it is sent; user:password@ in it is sent as Basic authorization',
			displayOptions: show,
		},
		{
			displayName: 'Download Options',
			name: 'downloadOptions',
			type: 'collection',
			placeholder: 'Add option',
			default: {},
			displayOptions: show,
			options: [
				{
					displayName: 'Block Private Addresses',
					name: 'blockPrivateAddresses',
					type: 'boolean',
					default: false,
					description:
						"Whether to refuse URLs whose host, or a redirect's, is or resolves to a loopback, private or link-local address, e.g. when the URL comes from outside the workflow. n8n's own outbound policy, when the instance sets one, applies either way.",
				},
				{
					displayName: 'Download Timeout (Seconds)',
					name: 'timeoutSeconds',
					type: 'number',
					typeOptions: { minValue: 1 },
					default: DEFAULT_DOWNLOAD_TIMEOUT_SECONDS,
					description:
						'Longest wait for the file server to answer, and between two pieces of the file. The whole download may take this plus 1 second per MB of Max File Size.',
				},
				{
					displayName: 'Max File Size (MB)',
					name: 'maxSizeMb',
					type: 'number',
					typeOptions: { minValue: 0.001 },
					default: DEFAULT_MAX_FILE_SIZE_MB,
					description: 'A larger file is not sent: the item fails with an error naming the URL',
				},
				{
					displayName: 'Max Redirects',
					name: 'maxRedirects',
					type: 'number',
					typeOptions: { minValue: 0, maxValue: 20 },
					default: DEFAULT_MAX_REDIRECTS,
					description: 'How many redirects are followed (http and https only)',
				},
				{
					displayName: 'Show Full URL',
					name: 'showFullUrl',
					type: 'boolean',
					default: false,
					description:
						"Whether the output and errors show the URL's query values and fragment. They often hold credentials (signed links, tokens), so by default they are replaced by ***.",
				},
			],
		},
	];
}

const MIB = 1024 * 1024;
/** A download may take Download Timeout plus this much per MiB of Max File Size in all. */
const DEADLINE_MS_PER_MIB = 1000;

/** The item's URL and download settings, checked; no request is made. */
export function readUrlSource(run: RunContext<unknown>, itemIndex: number) {
	const fail = (field: string, problem: string, fix: string) =>
		run.fail(itemIndex, field, problem, fix);
	const value = run.parameter('fileUrl', itemIndex, '');
	const url = typeof value === 'string' ? value.trim() : '';
	if (!url) {
		const fix = 'Enter the http(s) address of the file, or map a field that holds it.';
		throw fail('File URL', 'is empty', fix);
	}
	const problem = urlProblem(url);
	// Shown without credentials, query values and fragment: hidden before the cut, parsed or not.
	if (problem) {
		const quoted = cutShort(redactText(URL.canParse(url) ? redactUrl(url) : url), 200);
		const fix = 'Write the full address, starting with https:// (or http://).';
		throw fail('File URL', `${problem}: "${quoted}"`, fix);
	}
	const raw = (run.parameter('downloadOptions', itemIndex, {}) ?? {}) as Record<string, unknown>;
	const number = (name: string, field: string, fallback: number, min: number) =>
		numberValue(raw[name], fallback, { field: `Download Options → ${field}`, min }, fail);
	const maxBytes = Math.floor(
		number('maxSizeMb', 'Max File Size (MB)', DEFAULT_MAX_FILE_SIZE_MB, 0.001) * MIB,
	);
	const timeoutSeconds = number(
		'timeoutSeconds',
		'Download Timeout (Seconds)',
		DEFAULT_DOWNLOAD_TIMEOUT_SECONDS,
		1,
	);
	const timeoutMs = timerDelay(Math.round(timeoutSeconds * 1000));
	const said = (value: unknown, word: string) =>
		typeof value === 'string' && value.trim().toLowerCase() === word;
	const block = raw.blockPrivateAddresses;
	const blockUnset = block === undefined || block === null || block === false || block === '';
	return {
		url,
		options: {
			maxBytes,
			// Longest wait for the answer's headers, and between two pieces of its body.
			timeoutMs,
			// The whole download, from its first request to its last byte.
			deadlineMs: timerDelay(timeoutMs + Math.ceil((maxBytes / MIB) * DEADLINE_MS_PER_MIB)),
			maxRedirects: Math.floor(number('maxRedirects', 'Max Redirects', DEFAULT_MAX_REDIRECTS, 0)),
			// A guard fails closed: only false, "false" or no value turn it off.
			blockPrivateAddresses: !(blockUnset || said(block, 'false')),
			// The URL's query values and fragment in outputs and errors (they often hold credentials);
			// a switch that shows more is on only for true and "true".
			showFullUrl: raw.showFullUrl === true || said(raw.showFullUrl, 'true'),
		},
	};
}
