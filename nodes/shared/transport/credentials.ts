import { MAX_TIMER_MS } from '../clock';

/** The credential as the transport uses it, checked. */
export type ApiCredentials = Readonly<ReturnType<typeof parseCredentials>>;

export interface StoredCredentials {
	baseUrl?: unknown;
	clientId?: unknown;
	clientSecret?: unknown;
	bearerLifetimeMinutes?: unknown;
	timeoutSeconds?: unknown;
	ignoreSSLIssues?: unknown;
	maxResponseMegabytes?: unknown;
}

const MAX_BASE_URL = 2048;
/** A longer one would not fit a timer and would fire at once. */
const MAX_TIMEOUT_SECONDS = Math.floor(MAX_TIMER_MS / 1000);
const USE_ADDRESS = "Use the service's address, e.g. https://gateway.example.com";

export class CredentialError extends Error {
	override readonly name = 'CredentialError';
}

export function parseCredentials(stored: StoredCredentials) {
	const baseUrl = String(stored.baseUrl ?? '').trim();
	const refuse = (problem: string) => {
		throw new CredentialError(`Credential field ${problem}`);
	};
	if (baseUrl.length > MAX_BASE_URL)
		refuse(`"Base URL" is too long (${baseUrl.length} characters). ${USE_ADDRESS}`);
	if (!URL.canParse(baseUrl)) {
		// Quoted only when it cannot hold a password (user:pass@host) and is short enough to read.
		const quoted = baseUrl.includes('@') || baseUrl.length > 200 ? '' : ` ("${baseUrl}")`;
		refuse(`"Base URL" is not a valid URL${quoted}. ${USE_ADDRESS}`);
	}
	const url = new URL(baseUrl);
	if (url.username || url.password)
		refuse(
			'"Base URL" must not contain a user name or password (user:pass@…): the service does not use them, and they would not be kept secret there. Remove them; the Client ID and Client Secret go in their own fields.',
		);
	if (url.protocol !== 'http:' && url.protocol !== 'https:')
		refuse(`"Base URL" must start with http:// or https:// (got "${url.protocol}")`);
	if (url.search || url.hash) refuse('"Base URL" must not contain a query or fragment (?… or #…)');
	const clientId = String(stored.clientId ?? '').trim();
	const clientSecret = String(stored.clientSecret ?? '');
	if (!clientId) refuse('"Client ID" is empty. Enter the client key of your account.');
	if (!clientSecret) refuse('"Client Secret" is empty. Enter the client secret of your account.');

	const positive = (value: unknown, fallback: number, field: string, max = Infinity): number => {
		if (value === undefined || value === null || value === '') return fallback;
		const number = Number(value);
		const got = `got "${String(value).slice(0, 40)}"`;
		if (!Number.isFinite(number) || number <= 0)
			refuse(`"${field}" must be a number above 0 (${got})`);
		if (number > max)
			refuse(`"${field}" must be at most ${max} (about ${Math.floor(max / 86_400)} days; ${got})`);
		return number;
	};
	let end = url.pathname.length; // without trailing slashes (a loop: `/\/+$/` is quadratic)
	while (end > 0 && url.pathname[end - 1] === '/') end--;
	return {
		baseUrl: `${url.origin}${url.pathname.slice(0, end)}`,
		clientId,
		clientSecret,
		// Used when a token answer states no expiry (the real service states none).
		tokenLifetimeMinutes: positive(stored.bearerLifetimeMinutes, 60, 'Token Lifetime (Minutes)'),
		timeoutSeconds: positive(
			stored.timeoutSeconds,
			30,
			'Request Timeout (Seconds)',
			MAX_TIMEOUT_SECONDS,
		),
		allowUnauthorizedCerts: stored.ignoreSSLIssues === true,
		maxResponseMegabytes: positive(stored.maxResponseMegabytes, 16, 'Max Response Size (MB)'),
	};
}

export type Token = { readonly value: string; readonly expiresAt: number };

const EXPIRY_MARGIN_MS = 30_000;
// An `expires_at` in the past (a server clock behind ours, a wrong unit) would otherwise make every
// call fetch a new token.
const MIN_TOKEN_LIFETIME_MS = 10_000;
/** Dropped tokens are still redacted if a later answer echoes them, for a while. */
const RETIRED_KEPT = 64;
const RETIRED_KEPT_MS = 60 * 60_000;
const MAX_TOKENS = 256;

// Keyed by base URL, API group, client id and a hash of the secret, so a changed secret never
// reuses a token. Concurrent callers share one request, and `invalidate` drops only the token that
// failed: many callers failing on one expired token cause one refresh.
export class TokenCache {
	/** In order of last use: the first entry is the least recently used. */
	private readonly tokens = new Map<string, Token>();
	private readonly inFlight = new Map<string, Promise<Token>>();
	private retired: Array<{ value: string; key: string; at: number }> = [];
	/** Changes whenever the set of values does: a redactor made for one generation stays valid. */
	generation = 0;

	constructor(private readonly now: () => number = Date.now) {}

	async get(key: string, fetchToken: () => Promise<Token>): Promise<Token> {
		const cached = this.tokens.get(key);
		if (cached && cached.expiresAt > this.now()) {
			this.tokens.delete(key);
			this.tokens.set(key, cached);
			return cached;
		}
		let request = this.inFlight.get(key);
		if (!request) {
			request = fetchToken()
				.then((token) => {
					const replaced = this.tokens.get(key);
					if (replaced && replaced.value !== token.value) this.retire(key, replaced.value);
					this.tokens.delete(key);
					this.tokens.set(key, token);
					this.generation++;
					this.prune();
					return token;
				})
				.finally(() => this.inFlight.delete(key));
			this.inFlight.set(key, request);
		}
		return await request;
	}

	invalidate(key: string, token?: Token): void {
		const cached = this.tokens.get(key);
		if (cached && (!token || cached.value === token.value)) {
			this.tokens.delete(key);
			this.retire(key, cached.value);
		}
		if (token) this.retire(key, token.value);
	}

	/** The tokens of keys starting with `scope`, cached and retired. */
	values(scope = ''): string[] {
		this.prune();
		return [
			...[...this.tokens].filter(([key]) => key.startsWith(scope)).map(([, token]) => token.value),
			...this.retired.filter((entry) => entry.key.startsWith(scope)).map((entry) => entry.value),
		];
	}

	clear(): void {
		this.tokens.clear();
		this.inFlight.clear();
		this.retired = [];
		this.generation++;
	}

	private prune(): void {
		const now = this.now();
		for (const [key, token] of this.tokens) {
			if (token.expiresAt <= now || this.tokens.size > MAX_TOKENS) {
				this.tokens.delete(key);
				this.retire(key, token.value);
			}
		}
		this.retired = this.retired.filter((entry) => now - entry.at <= RETIRED_KEPT_MS);
	}

	private retire(key: string, value: string): void {
		if (this.retired.some((entry) => entry.value === value)) return;
		this.retired.push({ value, key, at: this.now() });
		if (this.retired.length > RETIRED_KEPT) this.retired.shift();
		this.generation++;
	}
}

/** The real service states no expiry: then the credential's lifetime. */
export function tokenExpiry(
	answer: Record<string, unknown>,
	now: number,
	fallbackMs: number,
): number {
	const stated = statedExpiry(answer, now);
	const expiry =
		stated === undefined || stated <= now
			? now + fallbackMs
			: Math.max(stated, now + Math.min(MIN_TOKEN_LIFETIME_MS, fallbackMs));
	// Stop using a token shortly before it expires, so a request never races the expiry.
	return expiry - Math.min(EXPIRY_MARGIN_MS, Math.max(0, expiry - now) / 10);
}

function statedExpiry(answer: Record<string, unknown>, now: number): number | undefined {
	const expiresIn = Number(answer.expires_in ?? answer.expiresIn);
	if (Number.isFinite(expiresIn) && expiresIn > 0) return now + expiresIn * 1000;
	const at = answer.expires_at ?? answer.expiresAt ?? answer.exp;
	const numeric = typeof at === 'number' || typeof at === 'string' ? Number(at) : NaN;
	// Seconds or milliseconds since the epoch, or a date.
	if (Number.isFinite(numeric) && numeric > 0) return numeric > 1e12 ? numeric : numeric * 1000;
	const parsed = typeof at === 'string' ? Date.parse(at) : NaN;
	return Number.isFinite(parsed) ? parsed : undefined;
}
