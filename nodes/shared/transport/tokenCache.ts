// Keyed by base URL, API group, client id and a hash of the secret, so a changed secret never
// reuses a token. Concurrent callers share one request, and `invalidate` drops only the token that
// failed: many callers failing on one expired token cause one refresh.

export interface Token {
	readonly value: string;
	readonly expiresAt: number;
}

const EXPIRY_MARGIN_MS = 30_000;
// An `expires_at` in the past (a server clock behind ours, a wrong unit) would otherwise make every
// call fetch a new token.
const MIN_TOKEN_LIFETIME_MS = 10_000;
/** Dropped tokens are still redacted if a later answer echoes them. */
const RETIRED_KEPT = 64;
const RETIRED_KEPT_MS = 60 * 60_000;
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
	private readonly retired: Retired[] = [];
	fetches = 0;
	// While it stands still, the set of values can only have shrunk, so a redactor made for it still
	// covers them.
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

	invalidate(key: string, token?: Token): void {
		const cached = this.tokens.get(key);
		if (cached && (!token || cached.value === token.value)) {
			this.tokens.delete(key);
			this.retire(key, cached.value);
		}
		if (token) this.retire(key, token.value);
	}

	values(scope?: string): string[] {
		this.prune();
		const inScope = (key: string) => scope === undefined || key.startsWith(scope);
		return [
			...[...this.tokens].filter(([key]) => inScope(key)).map(([, token]) => token.value),
			...this.retired.filter((entry) => inScope(entry.key)).map((entry) => entry.value),
		];
	}

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
	if (typeof at === 'number' && at > 0) return at > 1e12 ? at : at * 1000;
	if (typeof at === 'string') {
		const numeric = Number(at);
		if (Number.isFinite(numeric) && numeric > 0) return numeric > 1e12 ? numeric : numeric * 1000;
		const parsed = Date.parse(at);
		if (Number.isFinite(parsed)) return parsed;
	}
	return undefined;
}
