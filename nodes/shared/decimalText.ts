// `16.250` is 16250 to an Indonesian reader and 16.25 to an English one: unless the format is
// given, such text is reported as ambiguous with both readings, never guessed.

export type NumberFormat = 'auto' | 'point' | 'comma';

type ParsedNumber = { value: number } | { ambiguous: [number, number] } | { invalid: true };

const MAX_LENGTH = 64;
const PLAIN = /^[+-]?(\d+(?:\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const GROUPED_POINT = /^[+-]?[1-9]\d{0,2}(,\d{3})+(\.\d+)?$/;
const GROUPED_COMMA = /^[+-]?[1-9]\d{0,2}(\.\d{3})+(,\d+)?$/;
const DECIMAL_COMMA = /^[+-]?(\d+,\d*|,\d+)$/;
/** `16.250`, `16,250`: the form that reads both ways. */
const ONE_GROUP = /^[+-]?[1-9]\d{0,2}[.,]\d{3}$/;

export function parseDecimal(input: string, format: NumberFormat = 'auto'): ParsedNumber {
	// No number is longer: a longer text is not scanned at all.
	if (input.length > 4 * MAX_LENGTH) return { invalid: true };
	const text = input.trim().replace(/[\s\u00a0\u202f]/g, '');
	const point = format === 'comma' || text.length > MAX_LENGTH ? undefined : pointReading(text);
	const comma = format === 'point' || text.length > MAX_LENGTH ? undefined : commaReading(text);
	if (point !== undefined && comma !== undefined && point !== comma && ONE_GROUP.test(text))
		return { ambiguous: [point, comma] };
	const value = point ?? comma;
	return value === undefined ? { invalid: true } : { value };
}

function pointReading(text: string): number | undefined {
	if (PLAIN.test(text)) return Number(text);
	if (GROUPED_POINT.test(text)) return Number(text.replace(/,/g, ''));
	return undefined;
}

function commaReading(text: string): number | undefined {
	if (/^[+-]?\d+$/.test(text)) return Number(text);
	if (GROUPED_COMMA.test(text)) return Number(text.replace(/\./g, '').replace(',', '.'));
	if (DECIMAL_COMMA.test(text)) return Number(text.replace(',', '.'));
	return undefined;
}
