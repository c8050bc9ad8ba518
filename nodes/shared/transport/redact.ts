/**
 * Keeping secrets (the client secret, tokens) out of everything the package hands to n8n:
 * output items, error messages, logs. One module, used by every path:
 *
 * - by value, in every form a server stack may echo it in. Rather than a list of encodings
 *   (which always misses one: PHP's `\/`, .NET's `\u002B`, Go's `\u0026`, a lower-case `%2f`,
 *   `&#47;`, `&eacute;`), a text is read the way those escapes are read back, and the secret is
 *   looked for in what it says: backslash escapes of every JSON and string syntax (`\"`, `\/`,
 *   `\uXXXX` and `\u{…}` and `\UXXXXXXXX` in any case, `\xHH`, `\n`…), percent-encoding in any
 *   case (UTF-8 or Latin-1 bytes, `+` as a space), HTML and XML character references (decimal,
 *   hex, the named ones of ASCII and Latin-1), each mixed with plain characters and nested up to
 *   three deep (a URL-encoded value inside JSON inside HTML). In each reading (and the text as
 *   it is) the secret is looked for as is, as base64 (standard and URL-safe, padded or not, and
 *   inside a longer base64 text at any byte offset) and as hex in either case, and the stretch
 *   of the original text it came from is replaced;
 * - by key: a field named like a credential (`token`, `access_token`, `refresh_token`,
 *   `client_secret`, `password`, `api_key`, `authorization`, `cookie`, …) is blanked whatever
 *   its value, so a secret the package has never seen (a refresh token) does not pass either;
 * - short secrets (under 4 characters, which would blank ordinary words inside texts) are
 *   still redacted where they are a whole value, or a whole quoted JSON string in a text.
 *
 * Every reading is one linear pass; a text without `\`, `%`, `&` (or `+`) is read only as it is.
 */

export const REDACTED = '[redacted]';

/** Shorter secrets are only redacted as whole values (see the module comment). */
const MIN_INSIDE_TEXT = 4;

/** Depth below which values are checked; deeper ones are dropped rather than passed unchecked. */
const MAX_DEPTH = 100;

/** Escapes inside escapes that are read back: JSON in HTML holding a URL-encoded value is three. */
const MAX_READINGS = 3;

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
	const known = secretKeys.get(key);
	if (known !== undefined) return known;
	const plain = key.toLowerCase().replace(/[^a-z0-9]/g, '');
	const secret = SECRET_KEY_ENDINGS.some((ending) => plain.endsWith(ending));
	// Answers of one shape repeat their keys for every item: each is judged once per process
	// (bounded, and only short keys: a hostile answer's million keys are judged, not kept).
	if (secretKeys.size < MAX_JUDGED_KEYS && key.length <= MAX_JUDGED_KEY_LENGTH)
		secretKeys.set(key, secret);
	return secret;
}

const secretKeys = new Map<string, boolean>();
const MAX_JUDGED_KEYS = 4096;
const MAX_JUDGED_KEY_LENGTH = 64;

/** The characters an escape starts with (and `+`, a space in URL forms): a text without them is its only reading. */
const ESCAPE_STARTS = /[\\%&+]/;

/**
 * The forms of a secret that are not escapes of its characters (those are read back, see
 * `readEscapes`): itself, its base64 and its hex. Longest first.
 */
function secretForms(secret: string): string[] {
	const bytes = Buffer.from(secret, 'utf8');
	const hex = bytes.toString('hex');
	const forms = [
		secret,
		bytes.toString('base64'),
		// Unpadded (as long as base64url, which has no padding): also found inside a longer base64 text.
		bytes.toString('base64').slice(0, bytes.toString('base64url').length),
		bytes.toString('base64url'),
		hex,
		hex.toUpperCase(),
		...base64Cores(bytes),
	];
	return [...new Set(forms.filter((form) => form.length >= MIN_INSIDE_TEXT))].sort(
		(a, b) => b.length - a.length,
	);
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

// ---------------------------------------------------------------------------------------------
// Reading escapes back

/** Named character references servers write: HTML5's for ASCII punctuation, HTML 4's Latin-1 set (U+00A0…U+00FF, in order). */
const NAMED_REFERENCES: ReadonlyMap<string, string> = new Map([
	...Object.entries({
		quot: '"',
		amp: '&',
		lt: '<',
		gt: '>',
		apos: "'",
		sol: '/',
		bsol: '\\',
		excl: '!',
		num: '#',
		dollar: '$',
		percnt: '%',
		lpar: '(',
		rpar: ')',
		ast: '*',
		plus: '+',
		comma: ',',
		period: '.',
		colon: ':',
		semi: ';',
		equals: '=',
		quest: '?',
		commat: '@',
		lsqb: '[',
		lbrack: '[',
		rsqb: ']',
		rbrack: ']',
		Hat: '^',
		lowbar: '_',
		grave: '`',
		lcub: '{',
		lbrace: '{',
		rcub: '}',
		rbrace: '}',
		verbar: '|',
		vert: '|',
		Tab: '\t',
		NewLine: '\n',
		euro: '\u20ac',
	}),
	...'nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml'
		.split(' ')
		.map((name, index): [string, string] => [name, String.fromCharCode(0xa0 + index)]),
]);
const LONGEST_NAME = Math.max(...[...NAMED_REFERENCES.keys()].map((name) => name.length));

const SINGLE_ESCAPES: Readonly<Record<string, string>> = {
	n: '\n',
	r: '\r',
	t: '\t',
	b: '\b',
	f: '\f',
	v: '\v',
	0: '\0',
	e: '\x1b',
	a: '\x07',
};

/** One escape read back: the stretch `[from, to)` of the text says `says`. */
type OnEscape = (from: number, to: number, says: string) => void;

function hexValue(text: string, at: number, digits: number): number {
	if (at + digits > text.length) return -1;
	let value = 0;
	for (let i = at; i < at + digits; i++) {
		const digit = hexDigit(text.charCodeAt(i));
		if (digit < 0) return -1;
		value = value * 16 + digit;
	}
	return value;
}

function hexDigit(code: number): number {
	if (code >= 48 && code <= 57) return code - 48;
	if (code >= 65 && code <= 70) return code - 55;
	if (code >= 97 && code <= 102) return code - 87;
	return -1;
}

function isAlphanumeric(code: number): boolean {
	return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

function codePointText(codePoint: number): string | undefined {
	return codePoint >= 0 && codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : undefined;
}

/**
 * A run of byte escapes (`%C3%A9`, `\xc3\xa9`) starting at `at`, each `width` characters long
 * with the byte at `offset` within it: one UTF-8 character when the bytes make one, else the
 * first byte alone as a Latin-1 character (what PHP or Python write for `é` in Latin-1).
 */
function byteRun(
	text: string,
	at: number,
	prefix: string,
	offset: number,
): { says: string; length: number } | undefined {
	const width = offset + 2;
	const byteAt = (index: number) =>
		text.startsWith(prefix, at + index * width)
			? hexValue(text, at + index * width + offset, 2)
			: -1;
	const lead = byteAt(0);
	if (lead < 0) return undefined;
	const more =
		lead >= 0xf0 && lead <= 0xf4 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc2 && lead < 0xe0 ? 1 : 0;
	if (more > 0) {
		let codePoint = lead & (0x3f >> more);
		let complete = true;
		for (let index = 1; index <= more; index++) {
			const next = byteAt(index);
			if (next < 0x80 || next > 0xbf) {
				complete = false;
				break;
			}
			codePoint = (codePoint << 6) | (next & 0x3f);
		}
		const says = complete ? codePointText(codePoint) : undefined;
		if (says !== undefined) return { says, length: width * (more + 1) };
	}
	return { says: String.fromCharCode(lead), length: width };
}

/**
 * Which escapes a reading reads back, by the character they start with: `\` (backslash escapes),
 * `%` (percent-encoding), `&` (character references), `+` (a space in a form-encoded value).
 */
type Syntax = string;

/** The escape at `at` (its text starts with `\`, `%`, `&` or `+`), or undefined when it is none. */
function escapeAt(text: string, at: number): { says: string; length: number } | undefined {
	const char = text[at];
	if (char === '+') return { says: ' ', length: 1 };
	if (char === '%') return byteRun(text, at, '%', 1);
	if (char === '\\') {
		const next = text[at + 1];
		if (next === undefined) return undefined;
		if (next === 'u') {
			if (text[at + 2] === '{') {
				// Looked for within the 6 digits a code point can have: never a scan to the end.
				const close = text.slice(at + 3, at + 10).indexOf('}') + at + 3;
				if (close > at + 3) {
					const value = hexValue(text, at + 3, close - at - 3);
					const says = value >= 0 ? codePointText(value) : undefined;
					if (says !== undefined) return { says, length: close - at + 1 };
				}
				return undefined;
			}
			const unit = hexValue(text, at + 2, 4);
			return unit >= 0 ? { says: String.fromCharCode(unit), length: 6 } : undefined;
		}
		if (next === 'U') {
			const says = codePointText(hexValue(text, at + 2, 8));
			return says !== undefined ? { says, length: 10 } : undefined;
		}
		if (next === 'x') return byteRun(text, at, '\\x', 2);
		if (SINGLE_ESCAPES[next] !== undefined) return { says: SINGLE_ESCAPES[next], length: 2 };
		// `\"`, `\\`, `\/` (PHP), `\'`, `\#` (Ruby), `\<`: any other escaped punctuation is itself.
		return isAlphanumeric(next.charCodeAt(0)) ? undefined : { says: next, length: 2 };
	}
	if (char === '&') {
		if (text[at + 1] === '#') {
			const hex = text[at + 2] === 'x' || text[at + 2] === 'X';
			let end = at + (hex ? 3 : 2);
			let value = 0;
			// At most 8 digits (leading zeros allowed, as PHP's `&#039;`): a bounded look.
			while (end < text.length && end - at < 12) {
				const code = text.charCodeAt(end);
				const digit = hex ? hexDigit(code) : code >= 48 && code <= 57 ? code - 48 : -1;
				if (digit < 0) break;
				value = value * (hex ? 16 : 10) + digit;
				end++;
			}
			if (end === at + (hex ? 3 : 2)) return undefined;
			const says = codePointText(value);
			if (says === undefined) return undefined;
			return { says, length: end - at + (text[end] === ';' ? 1 : 0) };
		}
		// Looked for within the longest name only: never a scan to the end.
		const semicolon = text.slice(at + 1, at + 2 + LONGEST_NAME).indexOf(';') + at + 1;
		if (semicolon <= at + 1) return undefined;
		const says = NAMED_REFERENCES.get(text.slice(at + 1, semicolon));
		return says !== undefined ? { says, length: semicolon - at + 1 } : undefined;
	}
	return undefined;
}

/**
 * The text with every escape of `syntax` read back once (one linear pass), calling `onEscape` for
 * each; the text itself when it holds none.
 */
function readEscapes(text: string, syntax: Syntax, onEscape?: OnEscape): string {
	if (![...syntax].some((start) => text.includes(start))) return text;
	const parts: string[] = [];
	let copied = 0;
	for (let at = 0; at < text.length; at++) {
		if (!syntax.includes(text[at])) continue;
		const escape = escapeAt(text, at);
		if (!escape) continue;
		if (at > copied) parts.push(text.slice(copied, at));
		parts.push(escape.says);
		onEscape?.(at, at + escape.length, escape.says);
		copied = at + escape.length;
		at = copied - 1;
	}
	if (copied === 0) return text;
	if (copied < text.length) parts.push(text.slice(copied));
	return parts.join('');
}

/**
 * Maps stretches of a reading back to the text it was read from: `[start, end)` in the reading
 * becomes the stretch of the source whose characters and escapes say those characters (one
 * linear pass over the source).
 */
function toSource(
	source: string,
	syntax: Syntax,
	spans: Array<[number, number]>,
): Array<[number, number]> {
	// Boundary 2i is span i's start, 2i + 1 its end; in reading order, an end before a start at the same place.
	const boundaries = spans.flatMap(([start, end]) => [start, end]);
	const order = boundaries
		.map((_, index) => index)
		.sort((a, b) => boundaries[a] - boundaries[b] || (b % 2) - (a % 2));
	const mapped = new Array<number>(boundaries.length);
	let next = 0;
	let readAt = 0;
	let sourceAt = 0;
	/**
	 * The reading's `[readAt, readTo)` came from the source's `[sourceFrom, sourceTo)`, character
	 * for character (`literal`) or as one escape: the starts inside it and the ends after its first
	 * character are settled.
	 */
	const settle = (readTo: number, sourceFrom: number, sourceTo: number, literal: boolean) => {
		while (next < order.length) {
			const index = order[next];
			const position = boundaries[index];
			const isStart = index % 2 === 0;
			if (position > readTo || (isStart && position === readTo)) break;
			mapped[index] = literal ? sourceFrom + (position - readAt) : isStart ? sourceFrom : sourceTo;
			next++;
		}
		readAt = readTo;
	};
	readEscapes(source, syntax, (from, to, says) => {
		if (from > sourceAt) settle(readAt + (from - sourceAt), sourceAt, from, true);
		settle(readAt + says.length, from, to, false);
		sourceAt = to;
	});
	settle(Number.MAX_SAFE_INTEGER, sourceAt, source.length, true);
	return spans.map((_, index) => [mapped[2 * index], mapped[2 * index + 1]]);
}

/** A reading of the text: its characters, and how to map a stretch of it back to the original. */
interface Reading {
	text: string;
	toOriginal(spans: Array<[number, number]>): Array<[number, number]>;
}

/** Every escape at once; and `+` as a space too, for the texts of a secret that holds a space. */
const ALL = '\\%&';
const ALL_AND_PLUS = '\\%&+';
/** One kind at a time: a secret may itself look like another kind's escape (`…/&#x2F;` written as `…\/&#x2F;`). */
const ONE_KIND: Syntax[] = ['\\', '%', '&'];

/**
 * The text as it is, and its readings: every escape read back, nested up to MAX_READINGS deep;
 * each kind of escape alone, once.
 */
function readingsOf(text: string, plusIsSpace: boolean): Reading[] {
	const original: Reading = { text, toOriginal: (spans) => spans };
	const readings = [original];
	const seen = new Set([text]);
	const chains: Array<[Syntax, number]> = [[ALL, MAX_READINGS]];
	if (plusIsSpace && text.includes('+')) chains.push([ALL_AND_PLUS, MAX_READINGS]);
	for (const kind of ONE_KIND) if (text.includes(kind)) chains.push([kind, 1]);
	for (const [syntax, depth] of chains) {
		let previous = original;
		for (let level = 0; level < depth; level++) {
			const read = readEscapes(previous.text, syntax);
			if (read === previous.text) break;
			const parent = previous;
			previous = {
				text: read,
				toOriginal: (spans) => parent.toOriginal(toSource(parent.text, syntax, spans)),
			};
			if (!seen.has(read)) {
				seen.add(read);
				readings.push(previous);
			}
		}
	}
	return readings;
}

/**
 * The secrets of one call, with their forms computed once. Build it where the secrets are known
 * and pass it down; `text` and `value` are linear in the text for a fixed set.
 */
export class Redactor {
	private readonly forms: string[];
	private readonly whole: Set<string>;
	private readonly quotedShort: string[];
	/** Whether some secret holds a space (then `+` is also read as one, as forms encode it). */
	private readonly plusIsSpace: boolean;
	/** The shortest text a form or a quoted short secret can be found in. */
	private readonly shortestNeedle: number;

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
		this.plusIsSpace = all.some((secret) => secret.includes(' '));
		this.shortestNeedle = Math.min(
			...this.forms.map((form) => form.length),
			...this.quotedShort.map((quoted) => quoted.length),
		);
	}

	/** A text with every form of every secret replaced (short secrets only as quoted JSON strings). */
	text(text: string): string {
		if (this.forms.length === 0 && this.whole.size === 0) return text;
		// Most texts of an answer (ids, numbers, "sent") are short and escape-free: such a text is
		// its only reading, and one shorter than every form can only be a secret whole.
		if (text.length < this.shortestNeedle && !ESCAPE_STARTS.test(text))
			return this.whole.has(text) ? REDACTED : text;
		const readings = readingsOf(text, this.plusIsSpace);
		const spans: Array<[number, number]> = [];
		for (const reading of readings) {
			if (this.whole.has(reading.text)) return REDACTED;
			const found: Array<[number, number]> = [];
			for (const form of this.forms) collect(reading.text, form, 0, found);
			for (const quoted of this.quotedShort) collect(reading.text, quoted, 1, found);
			if (found.length) spans.push(...reading.toOriginal(found));
		}
		return spans.length ? replaceSpans(text, spans) : text;
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

/** Every place `form` occurs in `text`, less `trim` characters at each end (a quoted short secret keeps its quotes). */
function collect(text: string, form: string, trim: number, into: Array<[number, number]>): void {
	for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + form.length))
		into.push([at + trim, at + form.length - trim]);
}

/** The text with each stretch (merged where they overlap or touch) replaced by REDACTED. */
function replaceSpans(text: string, spans: Array<[number, number]>): string {
	spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
	const parts: string[] = [];
	let copied = 0;
	let open: [number, number] | undefined;
	for (const [start, end] of spans) {
		if (open && start <= open[1]) {
			open[1] = Math.max(open[1], end);
			continue;
		}
		if (open) {
			parts.push(text.slice(copied, open[0]), REDACTED);
			copied = open[1];
		}
		open = [start, end];
	}
	if (open) {
		parts.push(text.slice(copied, open[0]), REDACTED);
		copied = open[1];
	}
	parts.push(text.slice(copied));
	return parts.join('');
}

/** Replaces every form of the given secrets in a text. */
export function redact(text: string, secrets: Iterable<string | undefined>): string {
	return new Redactor(secrets).text(text);
}
