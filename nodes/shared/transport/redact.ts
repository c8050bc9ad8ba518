/**
 * Keeping secrets (the client secret, tokens) out of everything the package hands to n8n:
 * output items, error messages, logs. Every path goes through here:
 *
 * - by value, in the forms a server stack writes a string back in, and only those: as is;
 *   JSON-escaped (each character as is where JSON allows it, as its short escape such as `\/`,
 *   or as `\uXXXX` in either case); URL-encoded (each character as is but `%`, or as `%XX` of
 *   its UTF-8 bytes in either case, a space also as `+`); base64 and base64url, alone or inside
 *   a longer base64 text at any of its three alignments; hex in either case. Not HTML entities,
 *   not other escapes, not one form inside another;
 * - by key: a field named like a credential (`access_token`, `client_secret`, `password`, …) is
 *   blanked whatever its value, so a secret the package never saw (a refresh token) is too;
 * - short secrets (under 4 characters, which would blank ordinary words inside texts) only where
 *   they are a whole value, or a whole quoted JSON string in a text.
 */

export const REDACTED = '[redacted]';

/** Shorter secrets are only redacted as whole values (see the module comment). */
const MIN_INSIDE_TEXT = 4;

/**
 * Longer secrets (tokens) are JSON-escaped and URL-encoded as JSON.stringify and
 * encodeURIComponent write them: a pattern spelling each of their characters would not compile.
 */
const MAX_SPELLED = 256;

/** Depth below which values are checked; deeper ones are dropped rather than passed unchecked. */
const MAX_DEPTH = 100;

/** Fewer bytes of base64 inside a longer text would match ordinary words by chance. */
const MIN_BASE64_CORE = 6;

/** Field names whose value is a credential whatever it holds (compared without case, `_`, `-`). */
const SECRET_KEY = /(?:token|secret|password|passwd|apikey|authorization|cookie|sessionid)$/;

function isSecretKey(key: string): boolean {
	let secret = judgedKeys.get(key);
	if (secret === undefined) {
		secret = SECRET_KEY.test(key.toLowerCase().replace(/[^a-z0-9]/g, ''));
		// Answers of one shape repeat their keys for every item: each is judged once per process
		// (bounded, and only short keys: a hostile answer's million keys are judged, not kept).
		if (judgedKeys.size < 4096 && key.length <= 64) judgedKeys.set(key, secret);
	}
	return secret;
}

const judgedKeys = new Map<string, boolean>();

const hex = (value: number, digits: number) => value.toString(16).padStart(digits, '0');

/** A pattern matching `text` exactly: each UTF-16 unit as `\uXXXX`, so nothing needs escaping. */
const exactly = (text: string) =>
	Array.from({ length: text.length }, (_, i) => `\\u${hex(text.charCodeAt(i), 4)}`).join('');

/** A pattern matching these hex digits in either case. */
const eitherCase = (digits: string) =>
	digits.replace(/[a-f]/g, (digit) => `[${digit}${digit.toUpperCase()}]`);

/**
 * A pattern for the secret with each character written any of the ways `waysOf` gives. No two
 * ways of a character start alike, so a failed match never retries: a search stays linear.
 */
const spelled = (secret: string, waysOf: (char: string) => string[]) =>
	[...secret].map((char) => `(?:${waysOf(char).join('|')})`).join('');

/** As JSON.stringify writes it (`/` also as `\/`), or as `\uXXXX` per UTF-16 unit, either case. */
function jsonWays(char: string): string[] {
	const written = JSON.stringify(char).slice(1, -1);
	const units = char.split('').map((unit) => `\\\\u${eitherCase(hex(unit.charCodeAt(0), 4))}`);
	return [
		units.join(''),
		...(written.startsWith('\\u') ? [] : [exactly(written)]),
		...(char === '/' ? ['\\\\/'] : []),
	];
}

/** As is (but `%`), or as `%XX` per UTF-8 byte in either case; a space also as `+`. */
const urlWays = (char: string) => [
	[...Buffer.from(char, 'utf8')].map((byte) => `%${eitherCase(hex(byte, 2))}`).join(''),
	...(char === ' ' ? ['\\+'] : []),
	...(char === '%' ? [] : [exactly(char)]),
];

/**
 * Base64 and base64url of the secret alone, then of its whole 3-byte groups as they read inside a
 * longer base64 text (`Basic base64(id:secret)`): one run for each alignment the secret can have.
 * In this order a form comes before the shorter ones it starts with, which would leave its end.
 */
function base64Forms(bytes: Buffer): string[] {
	const padded = bytes.toString('base64');
	const unpadded = bytes.toString('base64url');
	const forms = [padded, padded.slice(0, unpadded.length), unpadded];
	for (const skip of [0, 1, 2]) {
		const core = bytes.subarray(skip, skip + Math.floor((bytes.length - skip) / 3) * 3);
		if (core.length >= MIN_BASE64_CORE)
			forms.push(core.toString('base64'), core.toString('base64url'));
	}
	return forms;
}

/** The forms that are one text: base64, hex and the secret as is. */
function textForms(secret: string): string[] {
	const bytes = Buffer.from(secret, 'utf8');
	const hexForm = bytes.toString('hex');
	return [...new Set([...base64Forms(bytes), hexForm, hexForm.toUpperCase(), secret])];
}

/** Every form of the list, as patterns. */
const spelledForms = (secret: string) => [
	...textForms(secret).map(exactly),
	spelled(secret, jsonWays),
	spelled(secret, urlWays),
];

/** Every form of a secret too long to spell, as texts. */
const unspelledForms = (secret: string) => [
	...textForms(secret),
	JSON.stringify(secret).slice(1, -1),
	// A lone surrogate as UTF-8 encoders write it: encodeURIComponent would throw.
	encodeURIComponent(secret.replace(/[\ud800-\udfff]/gu, '\ufffd')),
];

/**
 * The secrets of one call, with their forms built once. Build it where the secrets are known and
 * pass it down; `text` and `value` are linear in the text for a fixed set.
 */
export class Redactor {
	/** Every form of the secrets up to MAX_SPELLED; a short one only as a whole or quoted text. */
	private readonly pattern: RegExp | undefined;
	/** Every form of the longer secrets, replaced in turn. */
	private readonly texts: string[];

	constructor(secrets: Iterable<string | undefined>) {
		// Longer secrets first: where two start at one place, the longer one is replaced.
		const all = [...new Set(secrets)]
			.filter((secret): secret is string => typeof secret === 'string' && secret !== '')
			.sort((a, b) => b.length - a.length);
		const patterns = all
			.filter((secret) => secret.length <= MAX_SPELLED)
			.map((secret) => {
				const forms = spelledForms(secret).join('|');
				// A short secret stands alone: the whole text, or between the quotes of a JSON string.
				return secret.length < MIN_INSIDE_TEXT ? `(?:^|(?<="))(?:${forms})(?=$|")` : forms;
			});
		this.pattern = patterns.length ? new RegExp(patterns.join('|'), 'g') : undefined;
		this.texts = all.filter((s) => s.length > MAX_SPELLED).flatMap(unspelledForms);
	}

	/** A text with every form of every secret replaced. */
	text(text: string): string {
		for (const form of this.texts) text = text.replaceAll(form, REDACTED);
		return this.pattern ? text.replace(this.pattern, REDACTED) : text;
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
