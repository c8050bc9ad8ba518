/**
 * Keeping secrets (the client secret, tokens) out of everything the package hands to n8n:
 * output items, error messages, logs. One module, used by every path:
 *
 * - by value, in every form a server or a library may echo it in: as is, JSON-escaped,
 *   HTML-escaped, URL-encoded, base64 (standard, unpadded, URL-safe, and inside a longer base64
 *   text at any byte offset) and hex;
 * - by key: a field named like a credential (`token`, `access_token`, `refresh_token`,
 *   `client_secret`, `password`, `api_key`, `authorization`, `cookie`, …) is blanked whatever
 *   its value, so a secret the package has never seen (a refresh token) does not pass either;
 * - short secrets (under 4 characters, which would blank ordinary words inside texts) are
 *   still redacted where they are a whole value, or a whole quoted JSON string in a text.
 */

export const REDACTED = '[redacted]';

/** Shorter secrets are only redacted as whole values (see the module comment). */
const MIN_INSIDE_TEXT = 4;

/** Depth below which values are checked; deeper ones are dropped rather than passed unchecked. */
const MAX_DEPTH = 100;

/** Field names whose value is a credential whatever it holds (compared without case, `_`, `-`). */
const SECRET_KEY_ENDINGS = [
	'token',
	'secret',
	'password',
	'passwd',
	'apikey',
	'authorization',
	'cookie',
	'sessionid',
];

function isSecretKey(key: string): boolean {
	const plain = key.toLowerCase().replace(/[^a-z0-9]/g, '');
	return SECRET_KEY_ENDINGS.some((ending) => plain.endsWith(ending));
}

/** Every form of a secret to look for in a text, longest first (a longer form may contain a shorter one). */
function secretForms(secret: string): string[] {
	const bytes = Buffer.from(secret, 'utf8');
	const base64 = bytes.toString('base64');
	const forms = [
		secret,
		JSON.stringify(secret).slice(1, -1),
		htmlEscaped(secret, '&quot;', '&#39;'),
		htmlEscaped(secret, '&#34;', '&#x27;'),
		htmlEscaped(secret, '&quot;', '&#x27;'),
		encodeURIComponent(secret),
		encodeURIComponent(secret).replace(/%20/g, '+'),
		// application/x-www-form-urlencoded, as URLSearchParams writes a query (also encodes ' ( ) ! ~).
		new URLSearchParams({ s: secret }).toString().slice(2),
		encodeURI(secret),
		base64,
		bytes.toString('base64url'),
		bytes.toString('hex'),
		...base64Cores(bytes),
	];
	return [...new Set(forms.filter((form) => form.length >= MIN_INSIDE_TEXT))].sort(
		(a, b) => b.length - a.length,
	);
}

function htmlEscaped(text: string, quote: string, apostrophe: string): string {
	return text
		.replace(/&/g, '&amp;')
		.replace(/</g, '&lt;')
		.replace(/>/g, '&gt;')
		.replace(/"/g, quote)
		.replace(/'/g, apostrophe);
}

/**
 * The part of the secret's base64 that is the same wherever it sits in a longer base64 text
 * (e.g. `Basic base64(id:secret)`): base64 works in groups of 3 bytes, so for each of the 3
 * offsets the groups fully inside the secret encode the same characters. Only cores of at least
 * 8 characters are used (shorter ones would match by chance).
 */
function base64Cores(bytes: Buffer): string[] {
	const cores: string[] = [];
	for (const offset of [1, 2]) {
		const skip = 3 - offset; // bytes of the secret that share a group with what comes before
		const whole = Math.floor((bytes.length - skip) / 3) * 3;
		if (whole < 6) continue;
		const core = bytes.subarray(skip, skip + whole);
		for (const alphabet of ['base64', 'base64url'] as const) cores.push(core.toString(alphabet));
	}
	const whole = Math.floor(bytes.length / 3) * 3;
	if (whole >= 6)
		cores.push(
			bytes.subarray(0, whole).toString('base64'),
			bytes.subarray(0, whole).toString('base64url'),
		);
	return cores;
}

/**
 * The secrets of one call, with their forms computed once. Build it where the secrets are known
 * and pass it down; `redactText` and `redactValue` are linear in the text for a fixed set.
 */
export class Redactor {
	private readonly forms: string[];
	private readonly whole: Set<string>;
	private readonly quotedShort: string[];

	constructor(secrets: Iterable<string | undefined>) {
		const all = [
			...new Set([...secrets].filter((s): s is string => typeof s === 'string' && s !== '')),
		];
		this.forms = [
			...new Set(
				all.flatMap((secret) => (secret.length >= MIN_INSIDE_TEXT ? secretForms(secret) : [])),
			),
		].sort((a, b) => b.length - a.length);
		this.whole = new Set(all.flatMap((secret) => [secret, ...secretForms(secret)]));
		this.quotedShort = all
			.filter((secret) => secret.length < MIN_INSIDE_TEXT)
			.map((secret) => JSON.stringify(secret));
	}

	/** A text with every form of every secret replaced (short secrets only as quoted JSON strings). */
	text(text: string): string {
		if (this.whole.has(text)) return REDACTED;
		let out = text;
		for (const form of this.forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
		for (const quoted of this.quotedShort)
			if (out.includes(quoted)) out = out.split(quoted).join(`"${REDACTED}"`);
		return out;
	}

	/** A JSON value with secrets redacted by value everywhere and by key (see `isSecretKey`). */
	value<T>(value: T): T {
		return this.walk(value, 0) as T;
	}

	private walk(value: unknown, depth: number): unknown {
		if (typeof value === 'string') return this.text(value);
		if (value === null || typeof value !== 'object') return value;
		// No answer of this API nests this deep; what lies below could not be checked, so it is not passed on.
		if (depth > MAX_DEPTH) return '[nested too deep]';
		if (Array.isArray(value)) return value.map((v) => this.walk(v, depth + 1));
		const out: Record<string, unknown> = {};
		for (const [key, v] of Object.entries(value)) {
			out[key] =
				isSecretKey(key) && v !== null && v !== undefined && typeof v !== 'boolean' && v !== ''
					? REDACTED
					: this.walk(v, depth + 1);
		}
		return out;
	}
}

/** Replaces every form of the given secrets in a text. */
export function redact(text: string, secrets: Iterable<string | undefined>): string {
	return new Redactor(secrets).text(text);
}
