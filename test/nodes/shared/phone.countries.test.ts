/**
 * Phone numbers with a Default Country, over real numbering plans: libphonenumber-js's example
 * mobile number of every country. A number is never sent to a country the user did not mean:
 * bare digits are read as a national number of the Default Country or as digits with a country
 * code, and where both readings are numbers (and the mobile rule does not decide) the item is
 * refused with both readings shown.
 */
import fc from 'fast-check';
import examples from 'libphonenumber-js/examples.mobile.json';
import { getCountryCallingCode, type CountryCode } from 'libphonenumber-js/max';

import { normalizePhone } from '../../../nodes/shared/phone';

const countries = Object.keys(examples) as CountryCode[];
const plans = countries.map((country) => ({
	country,
	code: getCountryCallingCode(country),
	national: (examples as Record<string, string>)[country],
}));
const plan = fc.constantFrom(...plans);

/** The result is the expected number, or a refusal that shows it among both readings. */
function expectNumberOrAmbiguity(result: ReturnType<typeof normalizePhone>, expected: string) {
	if ('phone' in result) expect(result.phone).toBe(expected);
	else expect(result.problem).toMatch(/could be two different numbers: .* reads as \+.* or as \+/);
}

describe('bare digits with a Default Country, every country', () => {
	it('a national mobile number whose leading 0 a spreadsheet dropped goes to that country, or is refused', () => {
		fc.assert(
			fc.property(plan, ({ country, code, national }) => {
				expectNumberOrAmbiguity(normalizePhone(national, country), `${code}${national}`);
			}),
			{ numRuns: plans.length * 2 },
		);
	});

	it('the API form (country code and number, no plus) of the same country goes there, or is refused', () => {
		fc.assert(
			fc.property(plan, ({ country, code, national }) => {
				expectNumberOrAmbiguity(
					normalizePhone(`${code}${national}`, country),
					`${code}${national}`,
				);
			}),
			{ numRuns: plans.length * 2 },
		);
	});

	it("another country's number in the API form, under any Default Country: that number, or refused", () => {
		fc.assert(
			fc.property(plan, plan, (target, home) => {
				expectNumberOrAmbiguity(
					normalizePhone(`${target.code}${target.national}`, home.country),
					`${target.code}${target.national}`,
				);
			}),
			{ numRuns: 3000 },
		);
	});

	it('with a plus, always exactly the number written, whatever the Default Country', () => {
		fc.assert(
			fc.property(plan, plan, (target, home) => {
				expect(normalizePhone(`+${target.code} ${target.national}`, home.country)).toEqual({
					phone: `${target.code}${target.national}`,
				});
			}),
			{ numRuns: 3000 },
		);
	});

	it('a refusal shows both readings, each as a real number with its country', () => {
		const refused = plans
			.map(({ country, national }) => ({
				country,
				national,
				result: normalizePhone(national, country),
			}))
			.filter(({ result }) => 'problem' in result);
		// Some example numbers have two readings: without a refusal here the wording goes unchecked.
		expect(refused.length).toBeGreaterThan(0);
		for (const { result } of refused)
			expect((result as { problem: string }).problem).toMatch(
				/reads as \+\d[\d ]+ \([A-Z][^)]*\) with the Default Country [A-Z]{2}, or as \+\d[\d ]+ \(/,
			);
		// Most countries' numbers are unambiguous: refusals are the exception.
		expect(refused.length / plans.length).toBeLessThan(0.2);
	});
});

describe('the examples from the issue', () => {
	it.each([
		['81288776713', 'ID', '6281288776713'], // spreadsheet-dropped 0: Indonesia (mobile), not Japan (+81, fixed line)
		['812 8877 6713', 'ID', '6281288776713'], // the same digits with spaces: the same number
		['6281288776713', 'ID', '6281288776713'],
		['0812 8877 6713', 'ID', '6281288776713'],
		['0062 812 8877 6713', 'ID', '6281288776713'],
		['4915123456789', 'DE', '4915123456789'], // German mobile in API form, not +49 4915…
		['2025550123', 'US', '12025550123'],
	])('%s with %s → %s', (input, country, expected) => {
		expect(normalizePhone(input, country)).toEqual({ phone: expected });
	});

	it('12345 is too short (not "has no country code"), with or without a Default Country', () => {
		expect(normalizePhone('12345')).toEqual({
			problem: 'is too short to be a phone number: "12345"',
		});
		expect(normalizePhone('12345', 'ID')).toEqual({
			problem: 'is too short to be a phone number: "12345"',
		});
	});
});
