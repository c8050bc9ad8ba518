import { onFirstUse } from '../shared/onFirstUse';
import { normalizePhone } from '../shared/phone';

/** The phone metadata, loaded by the first number compared (not when n8n loads the trigger). */
const phoneNumbers = onFirstUse(
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use (onFirstUse.ts)
	() => require('libphonenumber-js') as typeof import('libphonenumber-js'),
);
import type { TriggerSettings } from './parameters';
import type { IncomingEvent } from './payload';

/**
 * The filters that answer a delivered message with "ignored" instead of starting the workflow:
 * Message Types and Ignore Own Messages.
 */

/** A number reduced to what two spellings of it share. */
interface ComparableNumber {
	/** Digits with country code, when the number is written internationally. */
	international?: string;
	/** The national part (no trunk 0, no country code), when it can be told. */
	national?: string;
}

const MAX_NUMBER_LENGTH = 32;

/**
 * `6281288776713`, `+62 812-8877-6713` and `0812 8877 6713` are one number: the first two are
 * international, the third local (a trunk 0, no country code). Local spellings are compared by
 * their national part, since the account's own number tells which country is meant.
 */
function comparable(text: string, defaultCountry: string): ComparableNumber {
	if (text.length > MAX_NUMBER_LENGTH) return {};
	const digits = text.replace(/\D/g, '');
	if (digits === '') return {};
	if (/^\s*(\+|00)/.test(text) || !digits.startsWith('0')) {
		const international = digits.replace(/^00/, '');
		const parsed = phoneNumbers().parsePhoneNumberFromString(`+${international}`);
		return { international, national: parsed?.nationalNumber };
	}
	const normalized = defaultCountry ? normalizePhone(text, defaultCountry) : undefined;
	if (normalized && 'phone' in normalized) return comparable(normalized.phone, '');
	return { national: digits.replace(/^0+/, '') };
}

/** Whether two spellings name the same number (an unknown side never matches). */
export function sameNumber(a: string, b: string, defaultCountry = ''): boolean {
	const left = comparable(a, defaultCountry);
	const right = comparable(b, defaultCountry);
	if (left.international && right.international) return left.international === right.international;
	return left.national !== undefined && left.national !== '' && left.national === right.national;
}

/** Why a message is not passed on, or undefined when it starts the workflow. */
export function ignoreReason(event: IncomingEvent, settings: TriggerSettings): string | undefined {
	if (settings.messageTypes.length > 0 && !settings.messageTypes.includes(event.type)) {
		return `message type "${event.type}" is not selected`;
	}
	if (
		settings.ignoreOwnMessages &&
		event.author &&
		sameNumber(event.author, settings.accountNumber, settings.defaultCountry)
	) {
		return "sent by the account's own number";
	}
	return undefined;
}
