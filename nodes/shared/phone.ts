import type { CountryCode, PhoneNumber } from 'libphonenumber-js/max';

import { onFirstUse } from './onFirstUse';

/** The phone metadata (1.5 MB of heap): loaded by the first number read. */
const phoneNumbers = onFirstUse(
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use (onFirstUse.ts)
	() => require('libphonenumber-js/max') as typeof import('libphonenumber-js/max'),
);

/**
 * A phone number as people paste it ("+62 812-8877-6713", "0812 8877 6713", "6281288776713")
 * → the API's form: digits with country code, no plus.
 *
 * Bare digits (no `+`, no leading 0) are the hard case: a spreadsheet turns "0812 8877 6713"
 * into 81288776713, which is also a number in Japan (+81). So with a Default Country, bare
 * digits are read both ways, as a national number of that country and as digits with a
 * country code, and:
 * - if only one reading is a valid number, that one is used;
 * - if both are valid and only one is a mobile number (WhatsApp accounts are mobile numbers),
 *   the mobile one is used;
 * - otherwise the number is refused with both readings shown, so the user says which one:
 *   nothing is sent to a country the user did not mean.
 * Numbers with `+` (or a leading 0, national) are read as written. Without a Default Country,
 * bare digits carry their country code (the API's own form).
 *
 * Returns the digits, or a sentence saying what is wrong (the caller names the item and field).
 */
export function normalizePhone(input: string, defaultCountry?: string): PhoneResult {
	// Parsing costs tens of microseconds, the largest part of a send's own CPU time; bulk sends
	// often repeat numbers (one team, one admin), so recent answers are remembered. Only numbers
	// (short keys, short values) are kept, never refusals, and the total is bounded in bytes.
	const key = input.length <= MAX_CACHED_INPUT ? `${defaultCountry ?? ''}|${input}` : undefined;
	const known = key === undefined ? undefined : recent.get(key);
	if (known !== undefined) return { phone: known };
	const result = parsePhone(input, defaultCountry);
	if (key !== undefined && 'phone' in result) remember(key, result.phone);
	return result;
}

export type PhoneResult = Readonly<{ phone: string }> | Readonly<{ problem: string }>;

/** Longer texts are refused before any parsing: no phone number, however written, is longer. */
const MAX_PHONE_TEXT = 64;
/** Inputs longer than this are not cached (a formatted number with an extension fits). */
const MAX_CACHED_INPUT = 40;
/** Bound of the cache in bytes (UTF-16 keys and values plus a per-entry overhead). */
export const PHONE_CACHE_BYTES = 256 * 1024;
const ENTRY_OVERHEAD = 64;

const recent = new Map<string, string>();
let recentBytes = 0;

function entryBytes(key: string, phone: string): number {
	return 2 * (key.length + phone.length) + ENTRY_OVERHEAD;
}

function remember(key: string, phone: string): void {
	recent.set(key, phone);
	recentBytes += entryBytes(key, phone);
	for (const [oldKey, oldPhone] of recent) {
		if (recentBytes <= PHONE_CACHE_BYTES) break;
		recent.delete(oldKey);
		recentBytes -= entryBytes(oldKey, oldPhone);
	}
}

/** Size of the cache now (for the hostile-input tests). */
export function phoneCacheBytes(): number {
	return recentBytes;
}

/** The countries libphonenumber knows, listed once per process (not once per number read). */
const countries = onFirstUse((): ReadonlySet<string> => new Set(phoneNumbers().getCountries()));

const FORMATTING = /[\s().\-/]/g;

/** `tel:`, then digits, spaces and `().-/`, with at most one `+`, at the start or after `(`. */
const PHONE_ALPHABET = /^(?:\(?\+)?[\d\s().\-/]*$/;
/**
 * An extension after the number (`ext. 12`, `x12`, `#12`, `;ext=12`): WhatsApp numbers have none.
 * The match starts at the marker, not at the spaces before it: a leading `\s*` made every space
 * a start to try again from (quadratic on a long run of spaces).
 */
const EXTENSION = /(?:;\s*ext\s*=|ext\.?|extension|x|#)\s*(\d+)$/i;
/** A WhatsApp chat id: the digits before `@c.us` / `@s.whatsapp.net` (and an optional `:device`). */
const PERSON_CHAT_ID = /^(\d{1,20})(?::\d{1,4})?@(?:c\.us|s\.whatsapp\.net)$/i;
/** Other WhatsApp ids: none of them is a phone number to send to. */
const OTHER_IDS: ReadonlyArray<[RegExp, string]> = [
	[/@g\.us$/i, 'a group chat id'],
	[/@lid$/i, 'a WhatsApp linked id (it hides the phone number)'],
	[/@broadcast$/i, 'a broadcast list or status id'],
	[/@newsletter$/i, 'a channel id'],
	[/@(?:c\.us|s\.whatsapp\.net)$/i, 'a chat id without a phone number'],
];
/** A spreadsheet number cell written as a float: `6281288776713.0`, `6281288776713,00`. */
const FLOAT_FORM = /^(\+?\d+)[.,](\d+)$/;
/** Scientific notation, as spreadsheets write long numbers: `6.281288776713E+12`. */
const SCIENTIFIC = /^\+?(\d)(?:[.,](\d+))?e\+?(\d{1,3})$/i;
/** Characters that reorder what is shown: the digits seen would not be the digits read. */
const BIDI_OVERRIDES = /[\u202a-\u202e\u2066-\u2069]/;
/** Invisible characters pasted with numbers (zero-width space and joiners, BOM, direction marks). */
const INVISIBLE = /[\u200b-\u200f\u2060\ufeff]/g;
/** Digit forms people paste: full-width, Arabic-Indic and Eastern Arabic-Indic (Persian, Urdu). */
const DIGIT_BLOCKS = [0xff10, 0x0660, 0x06f0];

function quote(text: string): string {
	return JSON.stringify(text.length > 30 ? `${text.slice(0, 30)}…` : text);
}

/** Other scripts' digits (and the full-width plus) as ASCII; every other character as it is. */
function asciiDigits(text: string): string {
	let out = '';
	for (const char of text) {
		const code = char.codePointAt(0) as number;
		const block = DIGIT_BLOCKS.find((start) => code >= start && code <= start + 9);
		out += block !== undefined ? String(code - block) : code === 0xff0b ? '+' : char;
	}
	return out;
}

/**
 * The text a person or a spreadsheet wrote, as the digits and separators it means, or a refusal.
 * Only rewrites that keep the digits as they were: another script's digits, a spreadsheet's
 * `'` text marker, a float's `.0`, exact scientific notation, a chat id's suffix. Anything that
 * could change which number it is (a decimal part, digits lost to scientific notation, an
 * extension) is refused, never guessed.
 */
function readWritten(input: string): { text: string; international?: true } | { problem: string } {
	if (BIDI_OVERRIDES.test(input))
		return {
			problem: `holds characters that change the order in which its digits are shown: ${quote(input)}. Type the number again`,
		};
	let text = asciiDigits(input.replace(INVISIBLE, '')).trim();
	if (text.startsWith("'")) text = text.slice(1).trim();
	if (text.slice(0, 4).toLowerCase() === 'tel:') text = text.slice(4).trim();

	const chat = PERSON_CHAT_ID.exec(text);
	// A chat id always carries the country code: never read with the Default Country.
	if (chat) return { text: chat[1], international: true };
	const other = OTHER_IDS.find(([suffix]) => suffix.test(text));
	if (other) return { problem: `is ${other[1]}, not a phone number: ${quote(input)}` };
	const extension = EXTENSION.exec(text);
	if (extension && /\d/.test(text.slice(0, extension.index))) {
		return {
			problem: `ends with an extension (${extension[0].trim()}): ${quote(input)}. WhatsApp numbers have none; remove it so that the message goes to the number you mean`,
		};
	}

	const float = FLOAT_FORM.exec(text);
	if (float) {
		if (/^0+$/.test(float[2])) return { text: float[1] };
		return {
			problem: `looks like a decimal number, not a phone number: ${quote(input)}. If a spreadsheet wrote it, format the column as text`,
		};
	}
	const scientific = SCIENTIFIC.exec(text);
	if (scientific) {
		const [, first, decimals = '', exponent] = scientific;
		// Exact only when every digit up to the exponent is written (`6.28129E+12` lost seven) and
		// nothing after it but zeros.
		const places = Number(exponent);
		if (decimals.length < places || !/^0*$/.test(decimals.slice(places))) {
			return {
				problem: `is in scientific notation, which has lost digits of the number: ${quote(input)}. Format the spreadsheet column as text (or as a number without decimals) and export it again`,
			};
		}
		return { text: `${first}${decimals.slice(0, places)}` };
	}
	if (!PHONE_ALPHABET.test(text)) return { problem: `is not a phone number: ${quote(input)}` };
	return { text };
}

function parsePhone(input: string, defaultCountry?: string): PhoneResult {
	const raw = input.trim();
	if (!raw) return { problem: 'is empty' };
	// Every step below is linear, and on at most MAX_PHONE_TEXT characters.
	if (raw.length > MAX_PHONE_TEXT)
		return {
			problem: `is too long to be a phone number (${raw.length} characters): ${quote(raw)}`,
		};
	const country = defaultCountry ? (defaultCountry.trim().toUpperCase() as CountryCode) : undefined;
	if (country && !countries().has(country)) {
		return {
			problem: `cannot be read: the default country "${defaultCountry}" is not an ISO country code such as ID or US`,
		};
	}
	const written = readWritten(raw);
	if ('problem' in written) return written;
	const { text } = written;
	if (!/\d/.test(text)) return { problem: `is not a phone number: ${quote(input)}` };

	const bare = text.replace(FORMATTING, '');
	if (written.international) return asInternational(input, bare);
	// 00 is the international prefix of most countries: 0062 812… is +62 812….
	if (/^00[1-9]\d*$/.test(bare)) return asInternational(input, bare.slice(2));
	if (/^[1-9]\d*$/.test(bare))
		return country ? eitherReading(input, bare, country) : asInternational(input, bare);
	return asWritten(input, text, country);
}

/** A number with `+`, or national with a leading 0: read as written. */
function asWritten(input: string, text: string, country: CountryCode | undefined): PhoneResult {
	try {
		const parsed = phoneNumbers().parsePhoneNumberWithError(
			text,
			country ? { defaultCountry: country } : undefined,
		);
		if (!parsed.isPossible())
			return {
				problem: lengthProblem(input, phoneNumbers().validatePhoneNumberLength(text, country)),
			};
		return { phone: digitsOf(parsed) };
	} catch (error) {
		// libphonenumber-js's error codes: INVALID_COUNTRY, NOT_A_NUMBER, TOO_SHORT, TOO_LONG, INVALID_LENGTH.
		const reason = error instanceof Error ? error.message : '';
		if (reason === 'INVALID_COUNTRY') {
			if (/^(\+|00)/.test(text)) return { problem: `has an unknown country code: ${quote(input)}` };
			return {
				problem: `has no country code: ${quote(input)}. Write it with its country code (e.g. +62…) or set the "Default Country" option`,
			};
		}
		return { problem: lengthProblem(input, reason) };
	}
}

/** Bare digits without a Default Country: the API's form, digits with their country code. */
function asInternational(input: string, bare: string): PhoneResult {
	const parsed = tryParse(`+${bare}`);
	if (parsed?.isPossible()) return { phone: digitsOf(parsed) };
	const reason = phoneNumbers().validatePhoneNumberLength(`+${bare}`);
	if (reason === 'INVALID_COUNTRY') {
		return {
			problem: `has no country code: ${quote(input)}. Write it with its country code (e.g. +62…) or set the "Default Country" option`,
		};
	}
	return { problem: lengthProblem(input, reason) };
}

/** Bare digits with a Default Country: both readings, see the module comment. */
function eitherReading(input: string, bare: string, country: CountryCode): PhoneResult {
	const national = tryParse(bare, country);
	const international = tryParse(`+${bare}`);
	if (national && international && national.number === international.number)
		return { phone: digitsOf(national) };
	const valid = [national, international].filter(
		(reading): reading is PhoneNumber => reading?.isValid() === true,
	);
	if (valid.length === 1) return { phone: digitsOf(valid[0]) };
	if (valid.length === 2) {
		const mobile = valid.filter(isMobile);
		if (mobile.length === 1) return { phone: digitsOf(mobile[0]) };
		return { problem: ambiguity(input, country, valid[0], valid[1]) };
	}
	const possible = [national, international].filter(
		(reading): reading is PhoneNumber => reading?.isPossible() === true,
	);
	if (possible.length === 1) return { phone: digitsOf(possible[0]) };
	if (possible.length === 2)
		return { problem: ambiguity(input, country, possible[0], possible[1]) };
	return { problem: lengthProblem(input, phoneNumbers().validatePhoneNumberLength(bare, country)) };
}

function ambiguity(
	input: string,
	country: CountryCode,
	national: PhoneNumber,
	international: PhoneNumber,
): string {
	return (
		`could be two different numbers: ${quote(input)} reads as ${describe(national)} with the Default Country ${country}, ` +
		`or as ${describe(international)} if it starts with a country code. Write it with + and the country code, or as a national number with its leading 0`
	);
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
const TYPE_WORDS: Record<string, string> = {
	MOBILE: 'mobile',
	FIXED_LINE: 'fixed line',
	FIXED_LINE_OR_MOBILE: 'fixed line or mobile',
	TOLL_FREE: 'toll free',
	VOIP: 'VoIP',
};

function describe(number: PhoneNumber): string {
	const where = number.country
		? (regionNames.of(number.country) ?? number.country)
		: `+${number.countryCallingCode}`;
	const type = TYPE_WORDS[number.getType() ?? ''];
	return `${number.formatInternational()} (${where}${type ? `, ${type}` : ''})`;
}

function isMobile(number: PhoneNumber): boolean {
	const type = number.getType();
	return type === 'MOBILE' || type === 'FIXED_LINE_OR_MOBILE';
}

function tryParse(text: string, country?: CountryCode): PhoneNumber | undefined {
	try {
		return phoneNumbers().parsePhoneNumberWithError(
			text,
			country ? { defaultCountry: country } : undefined,
		);
	} catch {
		return undefined;
	}
}

function digitsOf(number: PhoneNumber): string {
	return number.number.slice(1);
}

function lengthProblem(input: string, reason: string | undefined): string {
	if (reason === 'TOO_SHORT') return `is too short to be a phone number: ${quote(input)}`;
	if (reason === 'TOO_LONG') return `is too long to be a phone number: ${quote(input)}`;
	if (reason === 'INVALID_LENGTH')
		return `is not a possible phone number (wrong length): ${quote(input)}`;
	return `is not a possible phone number: ${quote(input)}`;
}
