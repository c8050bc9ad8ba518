/**
 * Phone numbers the way spreadsheets and strangers write them: every form either reaches the
 * number it was written from or is refused, never another number. The numbers are
 * libphonenumber-js's example mobile number of every country, so every numbering plan is tried.
 */
import fc from 'fast-check';
import examples from 'libphonenumber-js/examples.mobile.json';
import { getCountryCallingCode, type CountryCode } from 'libphonenumber-js/max';

import { nationalNumber, normalizePhone } from '../../../nodes/shared/phone';
import { runMessaging } from '../../harness/messagingNode';
import { useSandbox } from '../../harness/useSandbox';

const plans = (Object.keys(examples) as CountryCode[]).map((country) => {
	const national = (examples as Record<string, string>)[country];
	const code = getCountryCallingCode(country);
	return { country, code, national, digits: `${code}${national}` };
});
const plan = fc.constantFrom(...plans);

const SPACES = [' ', '\u00a0', '\u2009', '\u202f', '  '];
const DIGIT_SCRIPTS: Array<[string, number]> = [
	['ASCII', 0x30],
	['full-width', 0xff10],
	['Arabic-Indic', 0x0660],
	['Eastern Arabic-Indic', 0x06f0],
];

function inScript(text: string, zero: number): string {
	return text.replace(/\d/g, (digit) => String.fromCodePoint(zero + Number(digit)));
}

/** The ways a spreadsheet (Excel, Google Sheets, LibreOffice, pandas) writes a number cell holding `digits`. */
function spreadsheetForms(digits: string): string[] {
	const exponent = digits.length - 1;
	return [
		String(Number(digits)), // a number cell, read as a number and mapped into a text field
		`${digits}.0`, // pandas and CSV exports of a float column
		`${digits}.00`,
		`${digits},0`, // the same in a decimal-comma locale
		`'${digits}`, // Excel's text marker
		`${digits[0]}.${digits.slice(1)}E+${exponent}`, // scientific notation, every digit kept
		`${digits[0]}.${digits.slice(1)}e${exponent}`,
		`${digits[0]}.${digits.slice(1)}0E+${exponent}`,
	];
}

/** Scientific notation as a cell shows it (six significant digits): digits are lost. */
function truncatedScientific(digits: string): string {
	return `${digits[0]}.${digits.slice(1, 6)}E+${digits.length - 1}`;
}

/** The result is exactly `expected`, or a refusal: never another number. */
function expectNumberOrRefusal(
	result: ReturnType<typeof normalizePhone>,
	expected: string,
	written: string,
): void {
	if ('phone' in result && result.phone !== expected) {
		throw new Error(
			`${JSON.stringify(written)} was read as ${result.phone}, written from ${expected}`,
		);
	}
}

describe('a phone number cell in every form a spreadsheet writes it', () => {
	it('reaches the number it holds, in every numbering plan, with and without a Default Country', () => {
		fc.assert(
			fc.property(
				plan,
				plan,
				fc.constantFrom(...DIGIT_SCRIPTS),
				fc.boolean(),
				(target, home, [, zero], withCountry) => {
					for (const form of spreadsheetForms(target.digits)) {
						const written = inScript(form, zero);
						expectNumberOrRefusal(
							normalizePhone(written, withCountry ? home.country : undefined),
							target.digits,
							written,
						);
					}
				},
			),
			{ numRuns: 2000 },
		);
	});

	it('is read as the number itself (not refused) without a Default Country, when the digits alone are a possible number', () => {
		for (const { digits } of plans) {
			// Every example number is possible with its country code.
			expect([digits, normalizePhone(digits)]).toEqual([digits, { phone: digits }]);
			for (const form of spreadsheetForms(digits))
				expect([form, normalizePhone(form)]).toEqual([form, { phone: digits }]);
		}
	});

	it('scientific notation that lost digits is refused, saying why', () => {
		fc.assert(
			fc.property(plan, fc.boolean(), ({ digits, country }, withCountry) => {
				const written = truncatedScientific(digits);
				const result = normalizePhone(written, withCountry ? country : undefined);
				expect(result).toEqual({
					problem: expect.stringContaining('scientific notation, which has lost digits'),
				});
			}),
			{ numRuns: 500 },
		);
	});

	it('a decimal part other than zeros is refused, never dropped or read as a digit', () => {
		fc.assert(
			fc.property(
				plan,
				fc.integer({ min: 1, max: 99 }),
				fc.constantFrom('.', ','),
				({ digits }, fraction, separator) => {
					const written = `${digits}${separator}${fraction}`;
					const result = normalizePhone(written);
					expect(result).toEqual({
						problem: expect.stringContaining('looks like a decimal number'),
					});
				},
			),
			{ numRuns: 500 },
		);
	});

	it('grouped with spaces of any kind (NBSP, thin, narrow no-break), in any digit script: read as without them', () => {
		fc.assert(
			fc.property(
				plan,
				fc.constantFrom(...SPACES),
				fc.constantFrom(...DIGIT_SCRIPTS),
				({ code, national, digits }, space, [, zero]) => {
					const groups = national.match(/.{1,4}/g) ?? [national];
					const written = inScript(`+${code}${space}${groups.join(space)}`, zero);
					const plain = normalizePhone(`+${digits}`);
					expectNumberOrRefusal(
						normalizePhone(written),
						'phone' in plain ? plain.phone : '(refused)',
						written,
					);
				},
			),
			{ numRuns: 1000 },
		);
	});

	it('a national number with its float tail is read as without it (081288776713.0 with ID), in every country', () => {
		for (const { country, national } of plans) {
			const plain = normalizePhone(`0${national}`, country);
			const float = normalizePhone(`0${national}.0`, country);
			expect([country, 'phone' in float ? float.phone : 'refused']).toEqual([
				country,
				'phone' in plain ? plain.phone : 'refused',
			]);
		}
	});
});

describe('the forms from the issue', () => {
	it.each([
		['6281288776713.0', undefined, '6281288776713'],
		['6281288776713.00', undefined, '6281288776713'],
		['081288776713.0', 'ID', '6281288776713'],
		['6.281288776713E+12', undefined, '6281288776713'],
		["'+62 812 8877 6713", undefined, '6281288776713'],
		['62\u00a0812\u20098877\u202f6713', undefined, '6281288776713'],
		['+62\u202f812\u202f8877\u202f6713', undefined, '6281288776713'],
		['+62\u2009812\u20098877\u20096713', 'US', '6281288776713'],
		['６２８１２８８７７６７１３', undefined, '6281288776713'],
		['٦٢٨١٢٨٨٧٧٦٧١٣', undefined, '6281288776713'],
		['6281288776713@c.us', undefined, '6281288776713'],
		['6281288776713@s.whatsapp.net', 'US', '6281288776713'],
		['6281288776713:7@s.whatsapp.net', undefined, '6281288776713'],
	])('%s (Default Country %s) → %s', (written, country, expected) => {
		expect(normalizePhone(written, country)).toEqual({ phone: expected });
	});

	it.each([
		['6.28129E+12', 'scientific notation, which has lost digits'],
		['62812887767.13', 'looks like a decimal number'],
		['+62 812 8877 6713 ext. 12', 'ends with an extension (ext. 12)'],
		['+62 812 8877 6713 x12', 'ends with an extension (x12)'],
		['+62 812 8877 6713;ext=12', 'ends with an extension'],
		['120363025246125486@g.us', 'is a group chat id'],
		['6281288776713-1612345678@g.us', 'is a group chat id'],
		['1234567890@lid', 'linked id'],
		['\u202e3176 7788 218 26+', 'change the order in which its digits are shown'],
		['6281288776713*1', 'is not a phone number'],
		['+62 812 8877 6713 / +62 811 1111 111', 'is not a phone number'],
	])('%s is refused: %s', (written, problem) => {
		expect(normalizePhone(written)).toEqual({ problem: expect.stringContaining(problem) });
	});
});

describe('through the engine against the sandbox', () => {
	const sandbox = useSandbox();

	it('Send Text and Number → Check reach 6281288776713 from the float and chat-id forms, and refuse a decimal', async () => {
		const items = [
			{ phone: '6281288776713.0' },
			{ phone: 6281288776713 },
			{ phone: '081288776713.0', country: 'ID' },
			{ phone: '6281288776713@c.us' },
			{ phone: '62812887767.13' },
		];
		const options = { defaultCountry: '={{ $json.country ?? "" }}' };
		const sent = await runMessaging(
			sandbox,
			{
				resource: 'message',
				operation: 'sendText',
				phone: '={{ $json.phone }}',
				text: 'hi',
				options,
			},
			items,
			{ continueOnFail: true },
		);
		const out = sent.output('Node');
		expect(out.slice(0, 4).map((item) => item.json.phone)).toEqual(Array(4).fill('6281288776713'));
		expect(out[4].json.error).toBe(
			'Field "Phone Number" looks like a decimal number, not a phone number: "62812887767.13". If a spreadsheet wrote it, format the column as text [item 4]',
		);
		expect(sandbox.ledger().map((entry) => entry.phone)).toEqual(Array(4).fill('6281288776713'));

		const checked = await runMessaging(
			sandbox,
			{ resource: 'number', operation: 'check', phone: '={{ $json.phone }}', options },
			items.slice(0, 4),
		);
		expect(checked.output('Node').map((item) => item.json.phone)).toEqual(
			Array(4).fill('6281288776713'),
		);
		expect(
			sandbox
				.requests()
				.filter((request) => request.path === '/api/wa/2.0/check')
				.map((request) => (request.params as { phone?: string }).phone),
		).toEqual(Array(4).fill('6281288776713'));
	});
});

describe('what each written form comes to', () => {
	const noCountryCode = (written: string) =>
		`has no country code: "${written}". Write it with its country code (e.g. +62…) or set the "Default Country" option`;
	const ambiguity = (written: string, country: string, national: string, international: string) =>
		`could be two different numbers: "${written}" reads as ${national} with the Default Country ${country}, or as ${international} if it starts with a country code. Write it with + and the country code, or as a national number with its leading 0`;
	it.each<[string, string | undefined, { phone: string } | { problem: string }]>([
		// Digits and the plus sign of other scripts, every digit from 0 to 9.
		['+６２ ８１９ ０９０９ ０９０９', undefined, { phone: '6281909090909' }],
		['\uff0b6281288776713', undefined, { phone: '6281288776713' }],
		['62812\u200b88776713', undefined, { phone: '6281288776713' }],
		['tel:+6281288776713', undefined, { phone: '6281288776713' }],
		['TEL: +62 812 8877 6713', undefined, { phone: '6281288776713' }],
		// A chat id carries its country code: never read with the Default Country.
		['5016221234@c.us', 'US', { phone: '5016221234' }],
		// Neither reading is a valid number, one is a possible one.
		['223456', 'AC', { phone: '247223456' }],
		['   ', undefined, { problem: 'is empty' }],
		['+ ( )', undefined, { problem: 'is not a phone number: "+ ( )"' }],
		['62abc', undefined, { problem: 'is not a phone number: "62abc"' }],
		['#12', undefined, { problem: 'is not a phone number: "#12"' }],
		[
			'6281288776713x12',
			undefined,
			{
				problem:
					'ends with an extension (x12): "6281288776713x12". WhatsApp numbers have none; remove it so that the message goes to the number you mean',
			},
		],
		[
			'6281288776713.01',
			undefined,
			{
				problem:
					'looks like a decimal number, not a phone number: "6281288776713.01". If a spreadsheet wrote it, format the column as text',
			},
		],
		[
			'6.2812887767131E+12',
			undefined,
			{
				problem:
					'is in scientific notation, which has lost digits of the number: "6.2812887767131E+12". Format the spreadsheet column as text (or as a number without decimals) and export it again',
			},
		],
		['1E+0', undefined, { problem: 'is too short to be a phone number: "1E+0"' }],
		['0812 0088 7767', undefined, { problem: noCountryCode('0812 0088 7767') }],
		[
			'+4423456789',
			undefined,
			{ problem: 'is not a possible phone number (wrong length): "+4423456789"' },
		],
		[
			'82345678',
			'AD',
			{
				problem: ambiguity('82345678', 'AD', '+376 82345678 (Andorra)', '+82 345678 (South Korea)'),
			},
		],
		[
			'5016221234',
			'US',
			{
				problem: ambiguity(
					'5016221234',
					'US',
					'+1 501 622 1234 (United States, fixed line or mobile)',
					'+501 622 1234 (Belize, mobile)',
				),
			},
		],
	])('%j (Default Country %s)', (written, country, expected) => {
		expect(normalizePhone(written, country)).toEqual(expected);
	});

	it('a text longer than any phone number is refused with its length, before it is read', () => {
		const digits = (count: number) => '1'.repeat(count);
		expect(normalizePhone(digits(65))).toEqual({
			problem: `is too long to be a phone number (65 characters): "${digits(60)}…"`,
		});
		expect(normalizePhone(digits(64))).toEqual({
			problem: `is too long to be a phone number: "${digits(60)}…"`,
		});
	});

	it('the national number of an international one, when its country is known', () => {
		expect(nationalNumber('6281288776713')).toBe('81288776713');
		expect(nationalNumber('99912345')).toBeUndefined();
	});
});
