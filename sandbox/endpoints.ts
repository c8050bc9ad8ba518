/**
 * The API as data: one row per operation (path, HTTP method, params.method selector, auth,
 * exact params, handler), plus the strict validation every row goes through before its handler.
 */
import { createHash, randomBytes } from 'crypto';
import QRCode from 'qrcode';
import {
	ApiError,
	accessDenied,
	badRequest,
	methodNotAllowed,
	serverError,
	sessionExpired,
	unauthorized,
} from './answers';
import type { FiredFault } from './faults';
import { isRegisteredNumber, type ResolvedOptions } from './options';
import { ratesFor } from './rates';
import type { AccountState, SandboxState, TokenRecord } from './state';
import type { ApiGroup, FaultKind, LedgerEntry } from './types';

interface OperationContext {
	params: Record<string, string>;
	/** The account named by the request's credentials (every operation with client_secret has one). */
	account?: AccountState;
	state: SandboxState;
	options: ResolvedOptions;
	fault?: FiredFault;
}

type Handler = (ctx: OperationContext) => unknown | Promise<unknown>;

export interface Operation {
	name: string;
	httpMethod: 'GET' | 'POST';
	path: string;
	/** params.method value that selects this operation on a shared path. */
	selector?: string;
	auth: 'none' | 'bearer';
	group: ApiGroup;
	/** Exactly these params, all strings; anything missing or extra is rejected. */
	params: readonly string[];
	/** A send that answers `message.sent` (faults of kind sentFalse apply to it). */
	sends?: true;
	handle: Handler;
}

// ---------------------------------------------------------------------------------------------
// Handlers

function requireAccount(ctx: OperationContext): AccountState {
	if (!ctx.account) throw new Error(`Operation needs an account but has no client_secret param`);
	return ctx.account;
}

function tokenLifetime(ctx: OperationContext): { expires_in?: number } {
	return ctx.options.tokenExpiresInField
		? { expires_in: Math.floor(ctx.options.tokenTtlMs / 1000) }
		: {};
}

function authenticateWa(ctx: OperationContext) {
	const token = ctx.state.issueToken('wa', requireAccount(ctx).clientId);
	return { connection: 'ok', token, ...tokenLifetime(ctx), ...ctx.options.tokenAnswerExtra };
}

function authenticateRate(ctx: OperationContext) {
	const token = ctx.state.issueToken('rate', requireAccount(ctx).clientId);
	return { status: 'success', token, ...tokenLifetime(ctx), ...ctx.options.tokenAnswerExtra };
}

function protectedCheck() {
	return { valid: true, message: 'Token is valid' };
}

function limit(ctx: OperationContext) {
	const usage = ctx.state.usageOf(requireAccount(ctx).clientId, ctx.options.blockLimit);
	return { block: usage.remaining === 0, block_limit: usage.limit, limit_qty: usage.used };
}

/** A payload shaped like WhatsApp Web's login QR: `2@<ref>,<key>==,<key>==`. */
export function newQrPayload(): string {
	return `2@${randomBytes(45).toString('base64')},${randomBytes(16).toString('base64')},${randomBytes(16).toString('base64')}`;
}

/** Moves a not-yet-authenticated account to `got qr code` and returns the QR to show. */
async function showQr(ctx: OperationContext, account: AccountState): Promise<string> {
	account.status = 'got qr code';
	account.qrPayload ??= newQrPayload();
	return ctx.options.qrAsDataUri ? QRCode.toDataURL(account.qrPayload) : account.qrPayload;
}

async function getQr(ctx: OperationContext) {
	const account = requireAccount(ctx);
	if (account.status === 'authenticated')
		return { device_status: 'connected', accountStatus: 'authenticated' };
	return { qrCode: await showQr(ctx, account) };
}

async function login(ctx: OperationContext) {
	const account = requireAccount(ctx);
	if (account.status === 'authenticated')
		return { accountStatus: 'authenticated', device_status: 'connected' };
	const qrCode = await showQr(ctx, account);
	return { accountStatus: account.status, qrCode };
}

async function status(ctx: OperationContext) {
	const account = requireAccount(ctx);
	if (account.status !== 'got qr code') return { accountStatus: account.status };
	return { accountStatus: account.status, qrCode: await showQr(ctx, account) };
}

const DIGITS = /^\d+$/;
const SENDABLE_PHONE = /^\d{8,15}$/;

function checkNumber(ctx: OperationContext) {
	const phone = ctx.params.phone;
	if (!DIGITS.test(phone))
		throw serverError('odoo.exceptions.ValidationError', 'Invalid phone number');
	return { result: isRegisteredNumber(ctx.options, phone) ? 'exists' : 'not exists' };
}

function checkAccount(ctx: OperationContext) {
	const account = requireAccount(ctx);
	return {
		message: {
			whatsapp_number: account.whatsappNumber ?? null,
			whatsapp_webhook: account.whatsappWebhook ?? null,
			accountStatus: account.status,
			registered:
				account.whatsappNumber !== undefined &&
				account.whatsappNumber === ctx.params.whatsapp_number,
		},
	};
}

function updateAccount(ctx: OperationContext) {
	const account = requireAccount(ctx);
	// An empty string means "remove"; the real form clears a field the same way.
	account.whatsappNumber = ctx.params.whatsapp_number || undefined;
	account.whatsappWebhook = ctx.params.whatsapp_webhook || undefined;
	return {
		message: {
			updated: true,
			whatsapp_number: account.whatsappNumber ?? null,
			whatsapp_webhook: account.whatsappWebhook ?? null,
		},
	};
}

function notSent(message: string) {
	return { message: { sent: false, message } };
}

/** Why a send must be refused, checked in the order the real gateway would hit them. */
function sendRefusal(ctx: OperationContext, account: AccountState): string | undefined {
	if (account.status !== 'authenticated')
		return 'WhatsApp is not connected: scan the QR code first';
	if (!SENDABLE_PHONE.test(ctx.params.phone)) return 'Invalid phone number';
	if (ctx.state.usageOf(account.clientId, ctx.options.blockLimit).remaining === 0)
		return 'Message limit reached';
	return undefined;
}

function faultRefusal(ctx: OperationContext): string | undefined {
	if (ctx.fault?.kind !== 'sentFalse') return undefined;
	return ctx.fault.rule.message ?? 'Failed to send message';
}

/**
 * Message ids as the gateway writes them (`true_<phone>@c.us_<20 hex digits>`), unique in the
 * process: a random start and a counter. Not `randomBytes` per send: its system call was the
 * largest part of a send's cost here (17 µs), and benchmarks measure the node, not the sandbox.
 */
let nextMessageNumber = randomBytes(8).readBigUInt64BE() >> 1n;
function messageId(phone: string): string {
	nextMessageNumber += 1n;
	return `true_${phone}@c.us_${nextMessageNumber.toString(16).toUpperCase().padStart(20, '0')}`;
}

function recordSend(
	ctx: OperationContext,
	entry: Omit<LedgerEntry, 'id' | 'clientId' | 'version' | 'at' | 'phone'>,
) {
	const account = requireAccount(ctx);
	const id = messageId(ctx.params.phone);
	ctx.state.recordSend({
		id,
		clientId: account.clientId,
		phone: ctx.params.phone,
		version: ctx.params.version,
		at: new Date(ctx.state.now()).toISOString(),
		...entry,
		...(ctx.fault ? { fault: ctx.fault.kind } : {}),
	});
	return { message: { sent: true, message: 'Message sent', id } };
}

function sendMessage(ctx: OperationContext) {
	const refusal = sendRefusal(ctx, requireAccount(ctx)) ?? faultRefusal(ctx);
	if (refusal) return notSent(refusal);
	return recordSend(ctx, { kind: 'text', text: ctx.params.body });
}

interface DecodedFile {
	mimeType: string;
	content: Buffer;
}

// Type/subtype, optionally with ;key=value parameters, then ;base64, (checked on the head only,
// so a 67 MB body is never scanned by a complex pattern).
const DATA_URI_HEAD = /^data:([\w!#$&^.+-]+\/[\w!#$&^.+-]+)((?:;[\w.+-]+=[^;,]*)*);base64,/;
// A single character class loop: linear time even on huge strings.
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

/** Parses a strict base64 data URI; returns a refusal text when the body is not one. */
function decodeDataUri(body: string): DecodedFile | string {
	const head = DATA_URI_HEAD.exec(body.slice(0, 512));
	if (!head) return 'Invalid file: body must be a base64 data URI';
	const base64 = body.slice(head[0].length);
	if (base64.length === 0) return 'Invalid file: empty';
	if (base64.length % 4 !== 0 || !BASE64_CHARS.test(base64)) {
		return 'Invalid file: body must be a base64 data URI';
	}
	return { mimeType: head[1].toLowerCase(), content: Buffer.from(base64, 'base64') };
}

function sendFile(ctx: OperationContext) {
	const refusal = sendRefusal(ctx, requireAccount(ctx));
	if (refusal) return notSent(refusal);
	const file = decodeDataUri(ctx.params.body);
	if (typeof file === 'string') return notSent(file);
	const faulted = faultRefusal(ctx);
	if (faulted) return notSent(faulted);
	return recordSend(ctx, {
		kind: 'file',
		file: {
			mimeType: file.mimeType,
			filename: ctx.params.filename,
			size: file.content.length,
			sha256: createHash('sha256').update(file.content).digest('hex'),
		},
		caption: ctx.params.caption,
	});
}

function getKurs(ctx: OperationContext) {
	if (ctx.params.function !== 'getkurs')
		throw badRequest(`Unknown function: ${ctx.params.function}`);
	const provider = ctx.params.currency_id_provider;
	const rows = ratesFor(provider, ctx.state.rateMoves);
	if (!rows) return { success: false, message: `Unknown provider: ${provider}` };
	return { success: true, response: rows };
}

// ---------------------------------------------------------------------------------------------
// The table

const WA_GET = '/api/wa/2.0/get';
const WA_POST = '/api/wa/2.0/post';
const ACCOUNT_PARAMS = [
	'method',
	'client_secret',
	'version',
	'whatsapp_number',
	'whatsapp_webhook',
];

export const OPERATIONS: readonly Operation[] = [
	{
		name: 'wa auth',
		httpMethod: 'GET',
		path: '/api/wa/authentication',
		auth: 'none',
		group: 'wa',
		params: ['client_id', 'client_secret'],
		handle: authenticateWa,
	},
	{
		name: 'protected',
		httpMethod: 'GET',
		path: '/api/wa/protected',
		auth: 'bearer',
		group: 'wa',
		params: ['client_secret'],
		handle: protectedCheck,
	},
	{
		name: 'limit',
		httpMethod: 'GET',
		path: '/api/wa/2.0/limit',
		auth: 'none',
		group: 'wa',
		params: ['client_secret'],
		handle: limit,
	},
	{
		name: 'qr',
		httpMethod: 'GET',
		path: '/api/wa/2.0/qr',
		auth: 'none',
		group: 'wa',
		params: ['client_secret'],
		handle: getQr,
	},
	{
		name: 'check number',
		httpMethod: 'GET',
		path: '/api/wa/2.0/check',
		auth: 'none',
		group: 'wa',
		params: ['phone'],
		handle: checkNumber,
	},
	{
		name: 'login',
		httpMethod: 'GET',
		path: WA_GET,
		selector: 'login',
		auth: 'none',
		group: 'wa',
		params: ['method', 'client_secret'],
		handle: login,
	},
	{
		name: 'status',
		httpMethod: 'GET',
		path: WA_GET,
		selector: 'status',
		auth: 'bearer',
		group: 'wa',
		params: ['method', 'client_secret'],
		handle: status,
	},
	{
		name: 'check account',
		httpMethod: 'POST',
		path: WA_POST,
		selector: 'check',
		auth: 'bearer',
		group: 'wa',
		params: ACCOUNT_PARAMS,
		handle: checkAccount,
	},
	{
		name: 'update account',
		httpMethod: 'POST',
		path: WA_POST,
		selector: 'update',
		auth: 'none',
		group: 'wa',
		params: ACCOUNT_PARAMS,
		handle: updateAccount,
	},
	{
		name: 'send message',
		httpMethod: 'POST',
		path: WA_POST,
		selector: 'sendMessage',
		auth: 'bearer',
		group: 'wa',
		params: ['method', 'client_secret', 'version', 'phone', 'body'],
		sends: true,
		handle: sendMessage,
	},
	{
		name: 'send file',
		httpMethod: 'POST',
		path: WA_POST,
		selector: 'sendFile',
		auth: 'bearer',
		group: 'wa',
		params: ['method', 'client_secret', 'version', 'phone', 'body', 'filename', 'caption'],
		sends: true,
		handle: sendFile,
	},
	{
		name: 'rate auth',
		httpMethod: 'GET',
		path: '/api/rate/1.0/authentication',
		auth: 'none',
		group: 'rate',
		params: ['client_id', 'client_secret'],
		handle: authenticateRate,
	},
	{
		name: 'getkurs',
		httpMethod: 'GET',
		path: '/api/rate/1.0/get',
		auth: 'bearer',
		group: 'rate',
		params: ['version', 'client_id', 'client_secret', 'function', 'currency_id_provider'],
		handle: getKurs,
	},
];

// ---------------------------------------------------------------------------------------------
// Routing and validation

export type Route =
	| { kind: 'notFound' }
	| { kind: 'wrongMethod'; error: ApiError }
	| { kind: 'found'; candidates: Operation[] };

export function resolveRoute(path: string, httpMethod: string): Route {
	const onPath = OPERATIONS.filter((op) => op.path === path);
	if (onPath.length === 0) return { kind: 'notFound' };
	const candidates = onPath.filter((op) => op.httpMethod === httpMethod);
	if (candidates.length === 0) {
		return {
			kind: 'wrongMethod',
			error: methodNotAllowed([...new Set(onPath.map((op) => op.httpMethod))]),
		};
	}
	return { kind: 'found', candidates };
}

/** On shared paths params.method picks the operation. */
export function selectOperation(
	candidates: Operation[],
	params: Record<string, unknown>,
): Operation {
	if (candidates.length === 1 && candidates[0].selector === undefined) return candidates[0];
	const method = params.method;
	if (method === undefined) throw badRequest('Missing parameter: method');
	if (typeof method !== 'string') throw badRequest('Parameter method must be a string');
	const operation = candidates.find((op) => op.selector === method);
	if (!operation) throw badRequest(`Unknown method: ${method}`);
	return operation;
}

function checkParams(
	expected: readonly string[],
	params: Record<string, unknown>,
): Record<string, string> {
	for (const name of expected) {
		if (!(name in params)) throw badRequest(`Missing parameter: ${name}`);
	}
	for (const name of Object.keys(params)) {
		if (!expected.includes(name)) throw badRequest(`Unexpected parameter: ${name}`);
		if (typeof params[name] !== 'string') throw badRequest(`Parameter ${name} must be a string`);
	}
	return params as Record<string, string>;
}

export function bearerTokenOf(authorization: string | undefined): string | undefined {
	return /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
}

function checkBearer(state: SandboxState, group: ApiGroup, token: string | undefined): TokenRecord {
	if (!token) throw unauthorized('Missing bearer token');
	const record = state.findToken(token);
	if (!record || record.group !== group) throw unauthorized('Invalid token');
	if (state.isExpired(record)) throw sessionExpired();
	return record;
}

/** client_id + client_secret must be a pair; client_secret alone names the account. */
function checkCredentials(
	op: Operation,
	state: SandboxState,
	params: Record<string, string>,
): AccountState | undefined {
	if (!op.params.includes('client_secret')) return undefined;
	const account = op.params.includes('client_id')
		? state.findAccountById(params.client_id)
		: state.findAccountBySecret(params.client_secret);
	if (!account || account.clientSecret !== params.client_secret) throw accessDenied();
	return account;
}

/** Faults that answer an error once the request was done: its HTTP status, its error's name. */
const ERROR_AFTER_PROCESSING: Partial<Record<FaultKind, [number, string]>> = {
	http500AfterProcessing: [500, 'werkzeug.exceptions.InternalServerError'],
	http503AfterProcessing: [503, 'werkzeug.exceptions.ServiceUnavailable'],
	rpcErrorAfterProcessing: [200, 'odoo.exceptions.UserError'],
};

export interface OperationRequest {
	params: Record<string, unknown>;
	bearerToken?: string;
	fault?: FiredFault;
}

/** Validates in wire order (params, bearer, credentials). */
function checkRequest(op: Operation, request: OperationRequest, state: SandboxState) {
	const params = checkParams(op.params, request.params);
	const token =
		op.auth === 'bearer' ? checkBearer(state, op.group, request.bearerToken) : undefined;
	const account = checkCredentials(op, state, params);
	// Tokens belong to one client: another client's token is as good as none.
	if (token && token.clientId !== account?.clientId) throw unauthorized('Invalid token');
	return { params, account };
}

/** Validates, then runs the handler. */
export async function runOperation(
	op: Operation,
	request: OperationRequest,
	state: SandboxState,
	options: ResolvedOptions,
): Promise<unknown> {
	let checked: ReturnType<typeof checkRequest>;
	try {
		checked = checkRequest(op, request, state);
	} catch (error) {
		if (request.fault && ERROR_AFTER_PROCESSING[request.fault.kind])
			request.fault.refusedFirst = true;
		throw error;
	}
	const { params, account } = checked;
	const result = await op.handle({ params, account, state, options, fault: request.fault });
	const after = request.fault && ERROR_AFTER_PROCESSING[request.fault.kind];
	if (!after) return result;
	const message = request.fault?.rule.message ?? 'Odoo Server Error';
	throw new ApiError(after[0], 200, message, after[1], message);
}
