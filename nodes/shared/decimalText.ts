/**
 * Decimal numbers written as text, in either of the two ways people write them: `1,234.56`
 * (decimal point, comma thousands: English) and `1.234,56` (decimal comma, dot thousands:
 * Indonesian and most of Europe). `16.250` is sixteen thousand two hundred fifty to an Indonesian
 * reader and sixteen and a quarter to an English one: such text is never guessed, it is reported
 * as ambiguous with both readings, unless the format is given.
 *
 * Linear-time: one anchored pattern per form, on text of bounded length.
 */

/** How a text writes its decimals: `point` = 1,234.56; `comma` = 1.234,56; `auto` = whichever is unambiguous. */
export type NumberFormat = 'auto' | 'point' | 'comma';

export const NUMBER_FORMATS: readonly NumberFormat[] = ['auto', 'point', 'comma'];

export type ParsedNumber = { value: number } | { ambiguous: [number, number] } | { invalid: true };

const MAX_LENGTH = 64;
const PLAIN = /^[+-]?(\d+(?:\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
// Thousands groups: 1–3 digits (not starting with 0), then groups of exactly 3.
const GROUPED_POINT = /^[+-]?[1-9]\d{0,2}(,\d{3})+(\.\d+)?$/;
const GROUPED_COMMA = /^[+-]?[1-9]\d{0,2}(\.\d{3})+(,\d+)?$/;
const DECIMAL_COMMA = /^[+-]?(\d+,\d*|,\d+)$/;
// One separator followed by exactly three digits: `16.250`, `16,250`.
const ONE_GROUP = /^[+-]?[1-9]\d{0,2}[.,]\d{3}$/;

export function parseDecimal(input: string, format: NumberFormat = 'auto'): ParsedNumber {
	// No number is longer: a longer text is not scanned at all.
	if (input.length > 4 * MAX_LENGTH) return { invalid: true };
	const text = input.trim().replace(/[\s\u00a0\u202f]/g, '');
	if (text === '' || text.length > MAX_LENGTH) return { invalid: true };
	if (format !== 'auto') {
		const value = readAs(text, format);
		return value === undefined ? { invalid: true } : { value };
	}
	const point = readAs(text, 'point');
	const comma = readAs(text, 'comma');
	if (point !== undefined && comma !== undefined && point !== comma && ONE_GROUP.test(text)) {
		return { ambiguous: [point, comma] };
	}
	const value = point ?? comma;
	return value === undefined ? { invalid: true } : { value };
}

function readAs(text: string, format: 'point' | 'comma'): number | undefined {
	if (format === 'point') {
		if (PLAIN.test(text)) return Number(text);
		if (GROUPED_POINT.test(text)) return Number(text.replace(/,/g, ''));
		return undefined;
	}
	if (/^[+-]?\d+$/.test(text)) return Number(text);
	if (GROUPED_COMMA.test(text)) return Number(text.replace(/\./g, '').replace(',', '.'));
	if (DECIMAL_COMMA.test(text)) return Number(text.replace(',', '.'));
	return undefined;
}

/** `16,250.00` or `16.250,00`: how a number looks in the given format, for error messages. */
export function formatExample(format: NumberFormat): string {
	return format === 'comma' ? '1.234,56' : '1,234.56';
}
