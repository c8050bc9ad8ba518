import { onFirstUse } from '../shared/onFirstUse';
import { normalizePhone } from '../shared/phone';

const phoneNumbers = onFirstUse(
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use (onFirstUse.ts)
	() => require('libphonenumber-js') as typeof import('libphonenumber-js'),
);
import type { TriggerSettings } from './parameters';
import type { IncomingEvent } from './payload';

interface ComparableNumber {
	international?: string;
	national?: string;
}

const MAX_NUMBER_LENGTH = 32;

/** Local spellings are compared by their national part: the account's number tells the country. */
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

export function sameNumber(a: string, b: string, defaultCountry = ''): boolean {
	const left = comparable(a, defaultCountry);
	const right = comparable(b, defaultCountry);
	if (left.international && right.international) return left.international === right.international;
	return left.national !== undefined && left.national !== '' && left.national === right.national;
}

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
