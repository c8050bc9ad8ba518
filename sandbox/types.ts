/**
 * The sandbox's public contract: what tests, benchmarks and the demo may rely on.
 * The server in `server.ts` implements it; the control API over HTTP (under `/__sandbox/`)
 * exposes the same operations to other processes (real n8n end-to-end tests).
 */

import type { FileRequestLogEntry } from './files';
import type { RateMove, RateRow } from './rates';
import type { UsageCount, UsageSettings } from './state';

export type { RateMove } from './rates';
export type { UsageSettings } from './state';

export type ApiGroup = 'wa' | 'rate';

export type AccountStatus = 'init' | 'loading' | 'got qr code' | 'authenticated';

export interface SandboxAccount {
	clientId: string;
	clientSecret: string;
	/** Starting status; the default demo account starts `authenticated` so sends work at once. */
	status?: AccountStatus;
	/** Number registered by Update Account (digits). */
	whatsappNumber?: string;
	/** Webhook registered by Update Account. */
	whatsappWebhook?: string;
	/** The QR payload the gateway shows while it waits for a scan (read-only: set by Get QR Code, Login, Get Status). */
	qrPayload?: string;
}

export interface SandboxOptions {
	/** 0 picks a free port. Default 0. */
	port?: number;
	/** Default 127.0.0.1. */
	host?: string;
	/** Host names requests may name besides loopback and `host` (a DNS-rebinding page names its own). */
	allowedHosts?: string[];
	/** Default: one account `demo-client` / `demo-secret`, status `authenticated`. */
	accounts?: SandboxAccount[];
	/** Lifetime of issued tokens in ms. Default 3_600_000. */
	tokenTtlMs?: number;
	/** When true, token answers carry `expires_in` (seconds); the real service sends none. Default false. */
	tokenExpiresInField?: boolean;
	/** When true, Get QR / status answer the older `data:image/png;base64,...` form. Default false. */
	qrAsDataUri?: boolean;
	/** When true, incoming webhook posts use a flat JSON object instead of `{"params": {...}}`. */
	flatWebhookPayload?: boolean;
	/** Phone numbers (digits) that Check Number reports as `not exists`. Default: any ending in `0000`. */
	unregisteredNumbers?: string[];
	/** `block_limit` reported by Limit; sends beyond it answer `sent: false`. Default 10_000. */
	blockLimit?: number;
	/** Fields added to every token answer (e.g. `refresh_token`, an `expires_at` in the past): odd servers. */
	tokenAnswerExtra?: Record<string, unknown>;
	/** Keep request-log entries (params of large bodies are summarised). Default true. */
	logRequests?: boolean;
	/**
	 * The clock the ledger's `at` is read from (ms since the epoch). Default `Date.now`; engine
	 * tests that move the nodes' clock pass the same one, so the ledger proves pacing and caps.
	 */
	now?: () => number;
}

export type FaultKind =
	| 'http429' // 429 + Retry-After (retryAfterSeconds, default 1), JSON error body; request NOT processed
	| 'html502' // 502 HTML page from a "proxy"; NOT processed
	| 'html503' // 503 HTML page (with Retry-After when retryAfterSeconds is set); NOT processed
	| 'html504' // 504 HTML page; NOT processed
	| 'dropBeforeProcessing' // body read, socket destroyed, NOT processed
	| 'dropAfterProcessing' // processed (ledger records a send), then socket destroyed with no answer
	| 'slow' // processed, then the answer waits delayMs (default 5000) before being written
	| 'expireToken' // the bearer token used is invalidated; answered as an expired session; NOT processed
	| 'sentFalse' // sends answer `{"message": {"sent": false, ...}}`; NOT recorded
	| 'malformedJson' // 200 with a truncated JSON body; NOT processed
	| 'emptyBody' // 200 with an empty body; NOT processed
	| 'rpcError' // 200 with a JSON-RPC error envelope (message); NOT processed
	| 'trickle' // processed, then the answer is written one byte every delayMs (default 250)
	| 'hugeBody' // 200 with a JSON body of `bytes` bytes (default 100 MB), streamed; NOT processed
	| 'redirect' // 302 to `location` with a JSON-RPC success envelope as its body; NOT processed
	| 'answer' // 200 with the JSON-RPC envelope around the rule's `result` (an odd answer); NOT processed
	| 'raw' // the rule's `body` as it is, with HTTP `status` (default 200) and a JSON content type; NOT processed
	// Processed (the ledger records a send), then an error: the client cannot tell it was done.
	| 'http500AfterProcessing' // HTTP 500 with a JSON-RPC error envelope (message)
	| 'http503AfterProcessing' // HTTP 503, an error envelope: a router gave up, the app went on
	| 'rpcErrorAfterProcessing'; // HTTP 200 with a JSON-RPC error envelope (message)

interface FaultMatch {
	/** Exact path, e.g. `/api/wa/2.0/post`. */
	path?: string;
	/** `GET` or `POST`. */
	method?: string;
	/** params.method (login, status, check, update, sendMessage, sendFile) or params.function (getkurs). */
	rpcMethod?: string;
}

export interface FaultRule {
	/** One kind, or several to pick from at random (seeded) each time the rule fires. */
	kind?: FaultKind;
	kinds?: FaultKind[];
	match?: FaultMatch;
	/** Fire on the next N matching requests (default 1 when probability is not set). */
	times?: number;
	/** Let this many matching requests through untouched before the rule fires (default 0). */
	skip?: number;
	/** Fire on each matching request with this probability (0..1); unlimited unless `times` is set. */
	probability?: number;
	/** Seed for the rule's random choices (probability and kind); default 1. */
	seed?: number;
	retryAfterSeconds?: number;
	/** Write Retry-After as the HTTP date retryAfterSeconds from now, not as seconds. */
	retryAfterDate?: boolean;
	delayMs?: number;
	/**
	 * rpcError's text; `{name}` is replaced by the request's param `name` (e.g. `{whatsapp_webhook}`).
	 * Also the text of the *AfterProcessing errors.
	 */
	message?: string;
	/** rpcError's JSON-RPC error code (default 200, as Odoo answers every error) and `data.name`. */
	code?: number | string;
	name?: string;
	/** Size of a `hugeBody` answer in bytes. */
	bytes?: number;
	/** A `hugeBody` answer without Content-Length (chunked): a client learns its size only by reading it. */
	chunked?: boolean;
	/** Where a `redirect` points (default: the same path on another port). */
	location?: string;
	/** Fault `answer`: the `result` to answer, e.g. `{"message": {"sent": "false"}}`. */
	result?: unknown;
	/** Fault `raw`: the body and its HTTP status. */
	body?: string;
	status?: number;
}

export interface LedgerEntry {
	/** Message id as answered to the client, e.g. `true_6281288776713@c.us_3EB0...`. */
	id: string;
	clientId: string;
	kind: 'text' | 'file';
	phone: string;
	/** Text body (kind text). */
	text?: string;
	/** File facts (kind file); the content itself is not kept. */
	file?: { mimeType: string; filename: string; size: number; sha256: string };
	caption?: string;
	version: string;
	at: string;
	/** The fault that was applied to this request, if any (e.g. `dropAfterProcessing`). */
	fault?: FaultKind;
}

export interface RequestLogEntry {
	seq: number;
	/** When the request arrived (ms since the epoch): lets a test tell which run of a node made it. */
	receivedAt: number;
	method: string;
	path: string;
	contentType?: string;
	/** The Content-Length header, if any: the gateway's server reads no body without it. */
	contentLength?: number;
	/** Value of the Authorization header, if any (tests assert presence/absence). */
	authorization?: string;
	/** session_id cookie value sent, if any. */
	sessionCookie?: string;
	/** Parsed params; strings over 1 KiB replaced by `<N chars>`. Undefined when the body was not JSON. */
	params?: Record<string, unknown>;
	/** Raw body length in bytes. */
	bodyBytes: number;
	/** HTTP status answered (0 when the socket was dropped). */
	status: number;
	/** Fault applied, if any. */
	fault?: FaultKind;
	/** True when the request was rejected by validation (missing params, missing bearer, ...). */
	rejected?: boolean;
	rejectReason?: string;
}

export interface SandboxStats {
	/** Token requests answered with a token, per group. */
	tokensIssued: Record<ApiGroup, number>;
	/** All requests received per path. */
	requestsByPath: Record<string, number>;
	/** Most client connections open at the same time since the start or the last reset. */
	peakConnections: number;
	/** Most API requests being handled at the same time since the start or the last reset. */
	peakRequests: number;
}

export interface IncomingMessage {
	/** Account whose registered webhook receives the message. Default: the first account. */
	clientId?: string;
	type?: 'text' | 'image' | 'document' | 'audio' | 'video' | string;
	sender?: string;
	/** For a group message (sender `…@g.us`): the member who wrote, posted as `author`. */
	author?: string;
	/** The message's `uuid` (default: a new one); the same uuid again is a redelivery. */
	uuid?: string;
	senderName?: string;
	message?: string;
	/** For media: raw file content as base64 (the sandbox builds the data URI) plus its mime type. */
	fileBase64?: string;
	mimeType?: string;
	filename?: string;
	/** Extra headers or query to send (e.g. a shared secret). */
	headers?: Record<string, string>;
	/**
	 * Post to the registered webhook's path and query on this origin instead (`http://127.0.0.1:5679`):
	 * a load balancer handing the delivery to another n8n process serving the same webhooks.
	 */
	origin?: string;
	query?: Record<string, string>;
	/** Override the posted payload entirely (raw string body), e.g. malformed JSON. */
	rawBody?: string;
	/** The charset the body is encoded in and declared as (`content-type: application/json; charset=…`); default UTF-8. */
	charset?: 'latin1' | 'utf-16le';
	/** Include `x-api-key` in the payload (default: the account's client secret is NOT sent; set this explicitly). */
	apiKey?: string;
}

/** A message a person sent to an account (through the control API or the phone page), as the sandbox delivered it. */
export interface InboxEntry {
	clientId: string;
	sender: string;
	text: string;
	at: string;
	/** The webhook's answer status, or undefined when there was no webhook to post to. */
	status?: number;
	/** Why it reached no workflow (no webhook registered, the webhook refused or unreachable). */
	problem?: string;
	/** Why the workflow ignored it, as its answer said (e.g. a repeated delivery). */
	ignored?: string;
	/** The event's uuid, for a text message: the phone page's Deliver again posts it again with it. */
	uuid?: string;
}

export interface IncomingResult {
	/** The URL the sandbox posted to. */
	url: string;
	status: number;
	body: string;
}

export interface Sandbox {
	/** Base URL, e.g. `http://127.0.0.1:40123` (no trailing slash). */
	url: string;
	port: number;
	options: Required<Pick<SandboxOptions, 'tokenTtlMs'>> & SandboxOptions;
	ledger(): LedgerEntry[];
	requests(): RequestLogEntry[];
	stats(): SandboxStats;
	accounts(): SandboxAccount[];
	addFaults(rules: FaultRule[]): void;
	clearFaults(): void;
	/** Marks every issued token as expired. */
	expireTokens(): void;
	/** Simulates scanning the QR code: account → `authenticated`. */
	scan(clientId?: string): void;
	/**
	 * Simulates logging the phone out: account → `init`; the next QR request shows a new code.
	 * With `showQr` the gateway shows a new QR code at once (`got qr code`), as a gateway that
	 * restarts its session by itself does: Get Status then carries it.
	 */
	logout(clientId?: string, options?: { showQr?: boolean }): void;
	/** The gateway replaces the QR code of a logged-out account with a new one (`got qr code`). Returns the new payload. */
	newQr(clientId?: string): string;
	/** Sets (or with `undefined` clears) the webhook URL the account holds, as Update Account would. */
	setWebhook(clientId: string | undefined, url: string | undefined): void;
	/** The provider publishes new rates for one currency: set buy/sell/average, or move all three by `percent`. Returns the new row. */
	moveRate(move: RateMove): RateRow;
	/** Posts an incoming message to the account's registered webhook. */
	deliverIncoming(message: IncomingMessage): Promise<IncomingResult>;
	/** The messages people sent to the accounts, in the order they were sent. */
	inbox(): InboxEntry[];
	/** Requests for files under `/files/` (see `files.ts`), in the order they arrived. */
	fileRequests(): FileRequestLogEntry[];
	/** The usage counter the Limit endpoint reports for an account (default: the first). */
	usage(clientId?: string): UsageCount;
	/** Sets the usage counter (limit, messages already counted, reset date) until the next reset. */
	setUsage(settings: UsageSettings): void;
	/** Clears ledger, request log, stats, faults, tokens, file requests and usage settings; restores accounts to their initial state. */
	reset(): void;
	close(): Promise<void>;
}
