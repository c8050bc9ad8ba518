import { parsePhoneNumberWithError, type CountryCode, getCountries } from 'libphonenumber-js';

/**
 * A phone number as people paste it ("+62 812-8877-6713", "0812 8877 6713", "6281288776713")
 * → the API's form: digits with country code, no plus. Local numbers (leading 0, no country
 * code) need `defaultCountry`, an ISO code like "ID".
 *
 * Returns the digits, or a sentence saying what is wrong (the caller names the item and field).
 */
export function normalizePhone(input: string, defaultCountry?: string): PhoneResult {
	// Parsing costs tens of microseconds, the largest part of a send's own CPU time; bulk sends
	// often repeat numbers (one team, one admin), so recent answers are remembered.
	const key = `${defaultCountry ?? ''}|${input}`;
	const known = recent.get(key);
	if (known) return known;
	const result = parsePhone(input, defaultCountry);
	if (recent.size >= RECENT_LIMIT) recent.delete(recent.keys().next().value as string);
	recent.set(key, result);
	return result;
}

export type PhoneResult = Readonly<{ phone: string }> | Readonly<{ problem: string }>;

const RECENT_LIMIT = 2000;
const recent = new Map<string, PhoneResult>();

function parsePhone(input: string, defaultCountry?: string): PhoneResult {
	const raw = input.trim();
	if (!raw) return { problem: 'is empty' };
	if (/[a-z]/i.test(raw.replace(/^tel:/i, '').replace(/\s*(ext\.?|x)\s*\d+$/i, ''))) {
		return { problem: `is not a phone number: "${input}"` };
	}
	const country = defaultCountry ? (defaultCountry.trim().toUpperCase() as CountryCode) : undefined;
	if (country && !getCountries().includes(country)) {
		return { problem: `cannot be read: the default country "${defaultCountry}" is not an ISO country code such as ID or US` };
	}
	// Digits with country code and no plus (the API's own form) are read as international.
	const text = /^\d{10,15}$/.test(raw) && !raw.startsWith('0') ? `+${raw}` : raw;
	try {
		const parsed = parsePhoneNumberWithError(text, country ? { defaultCountry: country } : undefined);
		if (!parsed.isPossible()) return { problem: `is not a possible phone number: "${input}"` };
		return { phone: parsed.number.replace(/^\+/, '') };
	} catch (error) {
		// libphonenumber-js's error codes: INVALID_COUNTRY, NOT_A_NUMBER, TOO_SHORT, TOO_LONG, INVALID_LENGTH.
		const reason = error instanceof Error ? error.message : '';
		if (reason === 'INVALID_COUNTRY') {
			if (/^\s*(\+|00)/.test(text)) return { problem: `has an unknown country code: "${input}"` };
			return {
				problem: `has no country code: "${input}". Write it with its country code (e.g. +62…) or set the "Default Country" option`,
			};
		}
		if (reason === 'TOO_SHORT' || reason === 'TOO_LONG' || reason === 'INVALID_LENGTH') {
			return { problem: `is not a possible phone number (${reason === 'TOO_SHORT' ? 'too short' : reason === 'TOO_LONG' ? 'too long' : 'wrong length'}): "${input}"` };
		}
		return { problem: `is not a phone number: "${input}"` };
	}
}
