import { getCountries, parsePhoneNumberWithError, validatePhoneNumberLength, type CountryCode, type PhoneNumber } from 'libphonenumber-js/max';

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
export const MAX_PHONE_TEXT = 64;
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
const COUNTRIES: ReadonlySet<string> = new Set(getCountries());

const FORMATTING = /[\s().\-/]/g;
const EXTENSION = /(?:ext\.?|x)\s*\d+$/i;

function quote(text: string): string {
	return JSON.stringify(text.length > 30 ? `${text.slice(0, 30)}…` : text);
}

function parsePhone(input: string, defaultCountry?: string): PhoneResult {
	const raw = input.trim();
	if (!raw) return { problem: 'is empty' };
	// Every step below is linear, and on at most MAX_PHONE_TEXT characters.
	if (raw.length > MAX_PHONE_TEXT) return { problem: `is too long to be a phone number (${raw.length} characters): ${quote(raw)}` };
	const country = defaultCountry ? (defaultCountry.trim().toUpperCase() as CountryCode) : undefined;
	if (country && !COUNTRIES.has(country)) {
		return { problem: `cannot be read: the default country "${defaultCountry}" is not an ISO country code such as ID or US` };
	}
	const text = raw.slice(0, 4).toLowerCase() === 'tel:' ? raw.slice(4).trim() : raw;
	if (/[a-z]/i.test(text.replace(EXTENSION, ''))) return { problem: `is not a phone number: ${quote(input)}` };

	const bare = text.replace(FORMATTING, '');
	// 00 is the international prefix of most countries: 0062 812… is +62 812….
	if (/^00[1-9]\d*$/.test(bare)) return asInternational(input, bare.slice(2));
	if (/^[1-9]\d*$/.test(bare)) return country ? eitherReading(input, bare, country) : asInternational(input, bare);
	return asWritten(input, text, country);
}

/** A number with `+`, or national with a leading 0: read as written. */
function asWritten(input: string, text: string, country: CountryCode | undefined): PhoneResult {
	try {
		const parsed = parsePhoneNumberWithError(text, country ? { defaultCountry: country } : undefined);
		if (!parsed.isPossible()) return { problem: lengthProblem(input, validatePhoneNumberLength(text, country)) };
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
	const reason = validatePhoneNumberLength(`+${bare}`);
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
	if (national && international && national.number === international.number) return { phone: digitsOf(national) };
	const valid = [national, international].filter((reading): reading is PhoneNumber => reading?.isValid() === true);
	if (valid.length === 1) return { phone: digitsOf(valid[0]) };
	if (valid.length === 2) {
		const mobile = valid.filter(isMobile);
		if (mobile.length === 1) return { phone: digitsOf(mobile[0]) };
		return { problem: ambiguity(input, country, valid[0], valid[1]) };
	}
	const possible = [national, international].filter((reading): reading is PhoneNumber => reading?.isPossible() === true);
	if (possible.length === 1) return { phone: digitsOf(possible[0]) };
	if (possible.length === 2) return { problem: ambiguity(input, country, possible[0], possible[1]) };
	return { problem: lengthProblem(input, validatePhoneNumberLength(bare, country)) };
}

function ambiguity(input: string, country: CountryCode, national: PhoneNumber, international: PhoneNumber): string {
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
	const where = number.country ? regionNames.of(number.country) ?? number.country : `+${number.countryCallingCode}`;
	const type = TYPE_WORDS[number.getType() ?? ''];
	return `${number.formatInternational()} (${where}${type ? `, ${type}` : ''})`;
}

function isMobile(number: PhoneNumber): boolean {
	const type = number.getType();
	return type === 'MOBILE' || type === 'FIXED_LINE_OR_MOBILE';
}

function tryParse(text: string, country?: CountryCode): PhoneNumber | undefined {
	try {
		return parsePhoneNumberWithError(text, country ? { defaultCountry: country } : undefined);
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
	if (reason === 'INVALID_LENGTH') return `is not a possible phone number (wrong length): ${quote(input)}`;
	return `is not a possible phone number: ${quote(input)}`;
}
