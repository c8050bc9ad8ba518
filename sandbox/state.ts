/**
 * Everything the sandbox remembers between requests: accounts, tokens, sessions, the ledger of
 * sends and the request log. Kept apart from HTTP so `reset()` is one obvious place.
 */
import { randomBytes } from 'crypto';
import type { RateMoves } from './rates';
import type {
	AccountStatus,
	ApiGroup,
	InboxEntry,
	LedgerEntry,
	RequestLogEntry,
	SandboxAccount,
	SandboxStats,
} from './types';

export interface AccountState {
	clientId: string;
	clientSecret: string;
	status: AccountStatus;
	whatsappNumber?: string;
	whatsappWebhook?: string;
	/** The QR payload shown until the account is scanned; stable so clients can poll it. */
	qrPayload?: string;
}

export interface TokenRecord {
	group: ApiGroup;
	clientId: string;
	expiresAt: number;
	/** Set by `expireTokens()` or the `expireToken` fault. */
	revoked: boolean;
}

/** The usage counter of an account as the Limit endpoint reports it. */
export interface UsageCount {
	limit: number;
	used: number;
	remaining: number;
}

/** Settings of the usage counter (control API); `reset()` clears them. */
export interface UsageSettings {
	/** Messages allowed; replaces the `blockLimit` option until the next reset. */
	limit?: number;
	/** Messages counted as already sent, added to the ledger's sends of each account. */
	used?: number;
}

export const DEFAULT_ACCOUNTS: SandboxAccount[] = [
	{ clientId: 'demo-client', clientSecret: 'demo-secret', status: 'authenticated' },
];

/**
 * The accounts of `npm run sandbox` and `npm run n8n`: one connected, so that sends work at once,
 * and one logged out, so that Get QR Code shows a QR image (scan it at /__sandbox/phone). Each
 * holds a WhatsApp number (the README names them), so that Account → Check shows one and the
 * Messaging Trigger's Account Number may stay empty.
 */
export const PLAYGROUND_ACCOUNTS: SandboxAccount[] = [
	{ ...DEFAULT_ACCOUNTS[0], whatsappNumber: '6281100000001' },
	{
		clientId: 'qr-client',
		clientSecret: 'qr-secret',
		status: 'init',
		whatsappNumber: '6281100000002',
	},
];

function randomToken(bytes = 24): string {
	return randomBytes(bytes).toString('base64url');
}

export class SandboxState {
	accounts: AccountState[] = [];
	ledger: LedgerEntry[] = [];
	inbox: InboxEntry[] = [];
	requestLog: RequestLogEntry[] = [];
	tokensIssued: Record<ApiGroup, number> = { wa: 0, rate: 0 };
	requestsByPath: Record<string, number> = {};
	/** Rates moved through the control API (forgotten on reset). */
	rateMoves: RateMoves = new Map();
	private tokens = new Map<string, TokenRecord>();
	/** Session ids handed out in `Set-Cookie`; a request carrying one is not given another. */
	private sessions = new Set<string>();
	private nextSeq = 1;
	private usage: UsageSettings = {};
	/** Sends per account, kept with the ledger so a send's usage check costs the same on the 100,000th send as on the first. */
	private sentByClient = new Map<string, number>();

	constructor(
		private readonly initialAccounts: SandboxAccount[],
		private readonly tokenTtlMs: number,
		/** The clock of the ledger's times (SandboxOptions.now). */
		readonly now: () => number = Date.now,
	) {
		this.reset();
	}

	reset(): void {
		this.accounts = this.initialAccounts.map((account) => ({
			clientId: account.clientId,
			clientSecret: account.clientSecret,
			status: account.status ?? 'init',
			whatsappNumber: account.whatsappNumber,
			whatsappWebhook: account.whatsappWebhook,
		}));
		this.ledger = [];
		this.inbox = [];
		this.sentByClient.clear();
		this.requestLog = [];
		this.tokensIssued = { wa: 0, rate: 0 };
		this.requestsByPath = {};
		this.rateMoves.clear();
		this.tokens.clear();
		this.nextSeq = 1;
		this.usage = {};
	}

	setUsage(settings: UsageSettings): void {
		for (const key of ['limit', 'used'] as const) {
			const value = settings[key];
			if (value !== undefined && !(Number.isInteger(value) && value >= 0))
				throw new Error(`usage ${key} must be a whole number >= 0`);
		}
		this.usage = { ...this.usage, ...settings };
	}

	/** The account's usage counter: sends in the ledger plus the `used` set by the control API. */
	usageOf(clientId: string, defaultLimit: number): UsageCount {
		const limit = this.usage.limit ?? defaultLimit;
		const used = this.messagesSentBy(clientId) + (this.usage.used ?? 0);
		return { limit, used, remaining: Math.max(0, limit - used) };
	}

	findAccountBySecret(clientSecret: string): AccountState | undefined {
		return this.accounts.find((account) => account.clientSecret === clientSecret);
	}

	findAccountById(clientId: string): AccountState | undefined {
		return this.accounts.find((account) => account.clientId === clientId);
	}

	/** The named account, or the first one when no id is given. */
	accountOrFirst(clientId?: string): AccountState {
		const account = clientId === undefined ? this.accounts[0] : this.findAccountById(clientId);
		if (!account) throw new Error(`No sandbox account ${clientId ?? '(none configured)'}`);
		return account;
	}

	issueToken(group: ApiGroup, clientId: string): string {
		const token = randomToken();
		this.tokens.set(token, {
			group,
			clientId,
			expiresAt: Date.now() + this.tokenTtlMs,
			revoked: false,
		});
		this.tokensIssued[group] += 1;
		return token;
	}

	findToken(token: string): TokenRecord | undefined {
		return this.tokens.get(token);
	}

	isExpired(record: TokenRecord): boolean {
		return record.revoked || Date.now() >= record.expiresAt;
	}

	revokeToken(token: string): void {
		const record = this.tokens.get(token);
		if (record) record.revoked = true;
	}

	revokeAllTokens(): void {
		for (const record of this.tokens.values()) record.revoked = true;
	}

	/** True when the request carried a session id this sandbox handed out (no new cookie needed). */
	isKnownSession(sessionId: string | undefined): boolean {
		return sessionId !== undefined && this.sessions.has(sessionId);
	}

	newSession(): string {
		const sessionId = randomBytes(20).toString('hex');
		this.sessions.add(sessionId);
		return sessionId;
	}

	takeSeq(): number {
		return this.nextSeq++;
	}

	countRequest(path: string): void {
		this.requestsByPath[path] = (this.requestsByPath[path] ?? 0) + 1;
	}

	/** Adds a send to the ledger (the only way sends get there, so the per-account counts stay right). */
	recordSend(entry: LedgerEntry): void {
		this.ledger.push(entry);
		this.sentByClient.set(entry.clientId, (this.sentByClient.get(entry.clientId) ?? 0) + 1);
	}

	messagesSentBy(clientId: string): number {
		return this.sentByClient.get(clientId) ?? 0;
	}

	stats(): Omit<SandboxStats, 'peakConnections' | 'peakRequests'> {
		return { tokensIssued: { ...this.tokensIssued }, requestsByPath: { ...this.requestsByPath } };
	}

	publicAccounts(): SandboxAccount[] {
		return this.accounts.map((account) => ({
			clientId: account.clientId,
			clientSecret: account.clientSecret,
			status: account.status,
			whatsappNumber: account.whatsappNumber,
			whatsappWebhook: account.whatsappWebhook,
			qrPayload: account.qrPayload,
		}));
	}
}
