// Secrets are redacted by value, in the forms a server writes a string back in and only those, and
// by key (a field named like a credential, so that a token the package never saw is too). The
// forms, and why short secrets count only as whole values: docs/security.md.

export const REDACTED = '[redacted]';

const MIN_INSIDE_TEXT = 4;

// Longer secrets are matched as JSON.stringify and encodeURIComponent write them: a pattern
// spelling each of their characters would not compile.
const MAX_SPELLED = 256;

/** Deeper values are dropped rather than passed on unchecked. */
const MAX_DEPTH = 100;

/** Fewer bytes of base64 inside a longer text would match ordinary words by chance. */
const MIN_BASE64_CORE = 6;

const SECRET_KEY = /(?:token|secret|password|passwd|apikey|authorization|cookie|sessionid)$/;

function isSecretKey(key: string): boolean {
	let secret = judgedKeys.get(key);
	if (secret === undefined) {
		secret = SECRET_KEY.test(key.toLowerCase().replace(/[^a-z0-9]/g, ''));
		// Answers repeat their keys for every item, so each is judged once; bounded, so that a hostile
		// answer's million keys are judged but not kept.
		if (judgedKeys.size < 4096 && key.length <= 64) judgedKeys.set(key, secret);
	}
	return secret;
}

const judgedKeys = new Map<string, boolean>();

const hex = (value: number, digits: number) => value.toString(16).padStart(digits, '0');

const exactly = (text: string) =>
	Array.from({ length: text.length }, (_, i) => `\\u${hex(text.charCodeAt(i), 4)}`).join('');

const eitherCase = (digits: string) =>
	digits.replace(/[a-f]/g, (digit) => `[${digit}${digit.toUpperCase()}]`);

/** No two ways of a character start alike, so a failed match never retries: linear. */
const spelled = (secret: string, waysOf: (char: string) => string[]) =>
	[...secret].map((char) => `(?:${waysOf(char).join('|')})`).join('');

function jsonWays(char: string): string[] {
	const written = JSON.stringify(char).slice(1, -1);
	const units = char.split('').map((unit) => `\\\\u${eitherCase(hex(unit.charCodeAt(0), 4))}`);
	return [
		units.join(''),
		...(written.startsWith('\\u') ? [] : [exactly(written)]),
		...(char === '/' ? ['\\\\/'] : []),
	];
}

const urlWays = (char: string) => [
	[...Buffer.from(char, 'utf8')].map((byte) => `%${eitherCase(hex(byte, 2))}`).join(''),
	...(char === ' ' ? ['\\+'] : []),
	...(char === '%' ? [] : [exactly(char)]),
];

// One run for each alignment the secret can have inside a longer base64 text. A form comes before
// the shorter ones it starts with, which would leave its end behind.
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

function textForms(secret: string): string[] {
	const bytes = Buffer.from(secret, 'utf8');
	const hexForm = bytes.toString('hex');
	return [...new Set([...base64Forms(bytes), hexForm, hexForm.toUpperCase(), secret])];
}

const spelledForms = (secret: string) => [
	...textForms(secret).map(exactly),
	spelled(secret, jsonWays),
	spelled(secret, urlWays),
];

const unspelledForms = (secret: string) => {
	const json = JSON.stringify(secret).slice(1, -1);
	// A lone surrogate as UTF-8 encoders write it: encodeURIComponent would throw.
	const url = encodeURIComponent(secret.replace(/[\ud800-\udfff]/gu, '\ufffd'));
	// Also the variants stacks are known to write: PHP's `\/`, lower-case percent escapes.
	return [
		...textForms(secret),
		json,
		json.replaceAll('/', '\\/'),
		url,
		url.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
	];
};

export class Redactor {
	private readonly pattern: RegExp | undefined;
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

	text(text: string): string {
		for (const form of this.texts) text = text.replaceAll(form, REDACTED);
		return this.pattern ? text.replace(this.pattern, REDACTED) : text;
	}

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

export function redact(text: string, secrets: Iterable<string | undefined>): string {
	return new Redactor(secrets).text(text);
}
