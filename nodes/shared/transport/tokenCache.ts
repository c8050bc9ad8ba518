/**
 * Bearer tokens shared by every item and execution in this process.
 *
 * - One entry per key (base URL, API group, client id, hash of the secret), so two credentials
 *   never share a token and a changed secret never reuses an old one.
 * - Concurrent callers that find no valid token wait on the same in-flight request: 1000
 *   parallel items cause one token request.
 * - `invalidate(key, token)` only drops the entry if it still holds that token, so many
 *   callers failing on the same expired token cause one refresh, not one each.
 */

export interface Token {
	readonly value: string;
	/** Epoch ms after which the token is not used any more (a margin before its real expiry). */
	readonly expiresAt: number;
}

/** Tokens are dropped this long (or a tenth of their life, if shorter) before they expire. */
const EXPIRY_MARGIN_MS = 30_000;
/**
 * A stated lifetime shorter than this is not believed: an `expires_at` in the past (a server
 * clock behind ours, or a wrong unit) would otherwise make every call fetch a new token. An
 * answer that says the token is already expired falls back to the credential's lifetime; a
 * token that really expired is renewed once on its auth failure anyway.
 */
const MIN_TOKEN_LIFETIME_MS = 10_000;
/** Tokens dropped from the cache that are still redacted if a later answer echoes them: how many, how long. */
const RETIRED_KEPT = 64;
const RETIRED_KEPT_MS = 60 * 60_000;
/** Credentials (and API groups) whose token is kept at once; the least recently used goes first. */
const MAX_TOKENS = 256;

interface Retired {
	value: string;
	key: string;
	at: number;
}

export class TokenCache {
	/** In order of last use: the first entry is the least recently used. */
	private readonly tokens = new Map<string, Token>();
	private readonly inFlight = new Map<string, Promise<Token>>();
	/** The last tokens replaced, invalidated, expired or evicted (bounded by count and age), so that an echo of one is still redacted. */
	private readonly retired: Retired[] = [];
	/** Token requests made through this cache (for tests and benchmarks). */
	fetches = 0;
	/**
	 * Counts every token added to what `values()` returns (cached or retired): while it stands
	 * still, the set of values can only have shrunk, so a redactor made for it still covers them.
	 */
	generation = 0;

	constructor(private readonly now: () => number = Date.now) {}

	async get(key: string, fetchToken: () => Promise<Token>): Promise<Token> {
		const cached = this.tokens.get(key);
		if (cached && cached.expiresAt > this.now()) {
			this.tokens.delete(key);
			this.tokens.set(key, cached);
			return cached;
		}

		const pending = this.inFlight.get(key);
		if (pending) return await pending;

		this.fetches++;
		const request = fetchToken()
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
		return await request;
	}

	/** Forgets `token` for `key` if it is still the cached one (see the class comment). */
	invalidate(key: string, token?: Token): void {
		const cached = this.tokens.get(key);
		if (cached && (!token || cached.value === token.value)) {
			this.tokens.delete(key);
			this.retire(key, cached.value);
		}
		if (token) this.retire(key, token.value);
	}

	/**
	 * The token values known (for redaction): the cached ones and the ones recently retired; only
	 * those of keys starting with `scope` (one credential's) when it is given.
	 */
	values(scope?: string): string[] {
		this.prune();
		const inScope = (key: string) => scope === undefined || key.startsWith(scope);
		return [
			...[...this.tokens].filter(([key]) => inScope(key)).map(([, token]) => token.value),
			...this.retired.filter((entry) => inScope(entry.key)).map((entry) => entry.value),
		];
	}

	/** How many tokens are held (for tests): cached and retired. */
	size(): { cached: number; retired: number } {
		return { cached: this.tokens.size, retired: this.retired.length };
	}

	clear(): void {
		this.tokens.clear();
		this.inFlight.clear();
		this.retired.length = 0;
		this.fetches = 0;
		this.generation++;
	}

	/** Expired tokens and the least recently used beyond MAX_TOKENS retire; old retired ones are forgotten. */
	private prune(): void {
		const now = this.now();
		for (const [key, token] of this.tokens) {
			if (token.expiresAt <= now || this.tokens.size > MAX_TOKENS) {
				this.tokens.delete(key);
				this.retire(key, token.value);
			}
		}
		while (this.retired.length > 0 && now - this.retired[0].at > RETIRED_KEPT_MS)
			this.retired.shift();
	}

	private retire(key: string, value: string): void {
		if (this.retired.some((entry) => entry.value === value)) return;
		this.retired.push({ value, key, at: this.now() });
		this.generation++;
		if (this.retired.length > RETIRED_KEPT) this.retired.shift();
	}
}

/**
 * Lifetime from a token answer when it states one (`expires_in` seconds, or `expires_at` /
 * `exp` as epoch seconds or ISO date), else `fallbackMs` (the credential's setting: the real
 * service states none).
 */
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
	if (typeof at === 'number' && at > 0) return at > 1e12 ? at : at * 1000;
	if (typeof at === 'string') {
		const numeric = Number(at);
		if (Number.isFinite(numeric) && numeric > 0) return numeric > 1e12 ? numeric : numeric * 1000;
		const parsed = Date.parse(at);
		if (Number.isFinite(parsed)) return parsed;
	}
	return undefined;
}
