import type { CountryCode, PhoneNumber } from 'libphonenumber-js/max';

import { shown } from './errors';
import { MemoryTable } from './store';

const phoneNumbers = () =>
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use: start-up (CONTRIBUTING)
	require('libphonenumber-js/max') as typeof import('libphonenumber-js/max');

// Bare digits with a Default Country are read both ways (a spreadsheet turns 0812… into 812…, also
// a +81 number): the one valid reading, else the one mobile one, else refused with both.
export function normalizePhone(input: string, defaultCountry?: string): PhoneResult {
	// Parsing is most of a send's own CPU, and bulk sends repeat numbers. Only numbers are cached,
	// never refusals.
	const key = input.length <= MAX_CACHED_INPUT ? `${defaultCountry ?? ''}|${input}` : undefined;
	const known = key === undefined ? undefined : recent.get(key);
	if (known !== undefined) return { phone: known };
	const result = parsePhone(input, defaultCountry);
	if (key !== undefined && 'phone' in result) recent.set(key, result.phone, Infinity);
	return result;
}

export type PhoneResult = Readonly<{ phone: string }> | Readonly<{ problem: string }>;

const MAX_PHONE_TEXT = 64;
const MAX_CACHED_INPUT = 40;
const recent = new MemoryTable<string>(256 * 1024, (phone) => 2 * phone.length);

let countryCodes: ReadonlySet<string> | undefined;
const countries = () => (countryCodes ??= new Set(phoneNumbers().getCountries()));

const FORMATTING = /[\s().\-/]/g;

const PHONE_ALPHABET = /^(?:\(?\+)?[\d\s().\-/]*$/;
/** Matched from the marker: a leading `\s*` was quadratic on a long run of spaces. */
const EXTENSION = /(?:;\s*ext\s*=|ext\.?|extension|x|#)\s*(\d+)$/i;
const PERSON_CHAT_ID = /^(\d{1,20})(?::\d{1,4})?@(?:c\.us|s\.whatsapp\.net)$/i;
const OTHER_IDS: ReadonlyArray<[RegExp, string]> = [
	[/@g\.us$/i, 'a group chat id'],
	[/@lid$/i, 'a WhatsApp linked id (it hides the phone number)'],
	[/@broadcast$/i, 'a broadcast list or status id'],
	[/@newsletter$/i, 'a channel id'],
	[/@(?:c\.us|s\.whatsapp\.net)$/i, 'a chat id without a phone number'],
];
/** A spreadsheet cell written as a float: `6281288776713.0`. */
const FLOAT_FORM = /^(\+?\d+)[.,](\d+)$/;
/** As spreadsheets write long numbers: `6.281288776713E+12`. */
const SCIENTIFIC = /^\+?(\d)(?:[.,](\d+))?e\+?(\d{1,3})$/i;
const BIDI_OVERRIDES = /[\u202a-\u202e\u2066-\u2069]/;
const INVISIBLE = /[\u200b-\u200f\u2060\ufeff]/g;
const DIGIT_BLOCKS = [0xff10, 0x0660, 0x06f0];

function asciiDigits(text: string): string {
	let out = '';
	for (const char of text) {
		const code = char.codePointAt(0) as number;
		const block = DIGIT_BLOCKS.find((start) => code >= start && code <= start + 9);
		out += block !== undefined ? String(code - block) : code === 0xff0b ? '+' : char;
	}
	return out;
}

/** Only rewrites that keep the digits; anything that could change the number is refused. */
function readWritten(input: string): { text: string; international?: true } | { problem: string } {
	if (BIDI_OVERRIDES.test(input))
		return {
			problem: `holds characters that change the order in which its digits are shown: ${shown(input)}. Type the number again`,
		};
	let text = asciiDigits(input.replace(INVISIBLE, '')).trim();
	if (text.startsWith("'")) text = text.slice(1).trim();
	if (text.slice(0, 4).toLowerCase() === 'tel:') text = text.slice(4).trim();

	const chat = PERSON_CHAT_ID.exec(text);
	// A chat id always carries the country code: never read with the Default Country.
	if (chat) return { text: chat[1], international: true };
	const other = OTHER_IDS.find(([suffix]) => suffix.test(text));
	if (other) return { problem: `is ${other[1]}, not a phone number: ${shown(input)}` };
	const extension = EXTENSION.exec(text);
	if (extension && /\d/.test(text.slice(0, extension.index)))
		return {
			problem: `ends with an extension (${extension[0].trim()}): ${shown(input)}. WhatsApp numbers have none; remove it so that the message goes to the number you mean`,
		};

	const float = FLOAT_FORM.exec(text);
	if (float) {
		if (/^0+$/.test(float[2])) return { text: float[1] };
		return {
			problem: `looks like a decimal number, not a phone number: ${shown(input)}. If a spreadsheet wrote it, format the column as text`,
		};
	}
	const scientific = SCIENTIFIC.exec(text);
	if (scientific) {
		const [, first, decimals = '', exponent] = scientific;
		// Exact only when every digit up to the exponent is written and nothing after it but zeros.
		const places = Number(exponent);
		if (decimals.length < places || !/^0*$/.test(decimals.slice(places)))
			return {
				problem: `is in scientific notation, which has lost digits of the number: ${shown(input)}. Format the spreadsheet column as text (or as a number without decimals) and export it again`,
			};
		return { text: `${first}${decimals.slice(0, places)}` };
	}
	if (!PHONE_ALPHABET.test(text)) return { problem: `is not a phone number: ${shown(input)}` };
	// Typesetting spaces (no-break, thin, narrow) separate digit groups like a plain space.
	return { text: text.replace(/\s/g, ' ') };
}

function parsePhone(input: string, defaultCountry?: string): PhoneResult {
	const raw = input.trim();
	if (!raw) return { problem: 'is empty' };
	if (raw.length > MAX_PHONE_TEXT)
		return {
			problem: `is too long to be a phone number (${raw.length} characters): ${shown(raw)}`,
		};
	const country = defaultCountry ? (defaultCountry.trim().toUpperCase() as CountryCode) : undefined;
	if (country && !countries().has(country))
		return {
			problem: `cannot be read: the default country ${shown(defaultCountry)} is not an ISO country code such as ID or US`,
		};
	const written = readWritten(raw);
	if ('problem' in written) return written;
	const { text } = written;
	if (!/\d/.test(text)) return { problem: `is not a phone number: ${shown(input)}` };

	const bare = text.replace(FORMATTING, '');
	if (written.international) return asInternational(input, bare);
	// 00 is the international prefix of most countries: 0062 812… is +62 812….
	if (/^00[1-9]\d*$/.test(bare)) return asInternational(input, bare.slice(2));
	if (/^[1-9]\d*$/.test(bare))
		return country ? eitherReading(input, bare, country) : asInternational(input, bare);
	return asWritten(input, text, country);
}

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
		const reason = error instanceof Error ? error.message : '';
		if (reason === 'INVALID_COUNTRY' && /^(\+|00)/.test(text))
			return { problem: `has an unknown country code: ${shown(input)}` };
		return { problem: lengthProblem(input, reason) };
	}
}

function asInternational(input: string, bare: string): PhoneResult {
	const parsed = tryParse(`+${bare}`);
	if (parsed?.isPossible()) return { phone: digitsOf(parsed) };
	return { problem: lengthProblem(input, phoneNumbers().validatePhoneNumberLength(`+${bare}`)) };
}

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
		`could be two different numbers: ${shown(input)} reads as ${describe(national)} with the Default Country ${country}, ` +
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

/** The number without its country code, when the country is known. */
export function nationalNumber(international: string): string | undefined {
	return tryParse(`+${international}`)?.nationalNumber;
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
	if (reason === 'INVALID_COUNTRY')
		return `has no country code: ${shown(input)}. Write it with its country code (e.g. +62…) or set the "Default Country" option`;
	if (reason === 'TOO_SHORT') return `is too short to be a phone number: ${shown(input)}`;
	if (reason === 'TOO_LONG') return `is too long to be a phone number: ${shown(input)}`;
	if (reason === 'INVALID_LENGTH')
		return `is not a possible phone number (wrong length): ${shown(input)}`;
	return `is not a possible phone number: ${shown(input)}`;
}
