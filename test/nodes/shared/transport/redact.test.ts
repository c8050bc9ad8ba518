/**
 * The one redaction (nodes/shared/transport/envelope.ts): a secret is found in each form of its
 * list (as is, JSON-escaped, URL-encoded, base64 and base64url, hex), as the encoders of
 * test/harness/serverEscapes.ts write them, and only the stretch that says it is replaced. Each
 * form has a test here that fails without it.
 */
import fc from 'fast-check';

import { REDACTED, Redactor, redact } from '../../../../nodes/shared/transport/envelope';
import { findSecret } from '../../../harness/hostile';
import { stackEscapings } from '../../../harness/serverEscapes';

/** Secrets with every character that changes under some escaping: `/`, `&`, `<`, quotes, `+`, space, `\`, non-ASCII, astral. */
const HOSTILE_SECRETS = [
	`p/a&s<s>"w'ö rd+\\9€😀`,
	'Zm9v/YmFy+cXV4=/&#x2F;',
	'señor-Ünïcödé/sécret',
	'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig-_/+',
	'  lead&trail  ',
	'50%-off%2F',
];

describe.each(HOSTILE_SECRETS)('secret %j', (secret) => {
	// Built in each test, not while jest collects the file: Stryker switches a mutant on per test.
	const redactor = () => new Redactor([secret]);
	it.each(Object.entries(stackEscapings(secret)))('%s', (_stack, form) => {
		const text = `before ${form} after`;
		const redacted = redactor().text(text);
		expect(redacted).toBe(`before ${REDACTED} after`);
		expect(findSecret(redacted, [secret])).toBeUndefined();
		expect(redactor().value({ message: text, nested: [text] })).toEqual({
			message: redacted,
			nested: [redacted],
		});
	});
});

describe('each form of the list', () => {
	const secret = `p/a&s<s>"w'ö rd+9😀`;
	const redactor = () => new Redactor([secret]);
	const expectRedacted = (form: string) =>
		expect(redactor().text(`<${form}>`)).toBe(`<${REDACTED}>`);
	const lowerHex = (text: string) => text.replace(/%[0-9A-F]{2}/g, (byte) => byte.toLowerCase());

	it('as is, also where it holds `%` and `"` (no escaped form leaves both as they are)', () => {
		const plain = `50%"off\\now`;
		expect(redact(`<${plain}>`, [plain])).toBe(`<${REDACTED}>`);
	});

	describe('JSON-escaped', () => {
		it('as JSON.stringify writes it (`\\"`)', () => {
			expectRedacted(JSON.stringify(secret).slice(1, -1));
		});

		it("PHP's `\\/`, and `\\uXXXX` in lower case (non-ASCII, astral as two)", () => {
			expectRedacted(
				JSON.stringify(secret)
					.slice(1, -1)
					.replace(/\//g, '\\/')
					.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
			);
		});

		it('every character as `\\uXXXX` in upper case', () => {
			expectRedacted(
				secret
					.split('')
					.map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`)
					.join(''),
			);
		});

		it('each character spelled any way JSON allows, mixed in one text', () => {
			const escaped = (c: string) =>
				c
					.split('')
					.map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
					.join('');
			const ways = [
				(c: string) => JSON.stringify(c).slice(1, -1),
				(c: string) => (c === '/' ? '\\/' : JSON.stringify(c).slice(1, -1)),
				escaped,
				(c: string) => escaped(c).replace(/[a-f]/g, (digit) => digit.toUpperCase()),
			];
			const chars = [...secret];
			fc.assert(
				fc.property(
					fc.array(fc.nat(ways.length - 1), { minLength: chars.length, maxLength: chars.length }),
					(picks) => expectRedacted(chars.map((c, i) => ways[picks[i]](c)).join('')),
				),
			);
		});
	});

	describe('URL-encoded', () => {
		it('%XX in upper case (encodeURIComponent)', () => {
			expectRedacted(encodeURIComponent(secret));
		});

		it('%xx in lower case, every byte encoded', () => {
			expectRedacted(Buffer.from(secret).toString('hex').replace(/../g, '%$&'));
		});

		it('a space as `+` (form encoding)', () => {
			expectRedacted(lowerHex(new URLSearchParams({ s: secret }).toString().slice(2)));
		});

		it('each character as is, %XX or %xx, mixed in one text', () => {
			const ways = [
				(c: string) => c,
				(c: string) => encodeURIComponent(c),
				(c: string) => lowerHex(encodeURIComponent(c)),
			];
			const chars = [...secret];
			fc.assert(
				fc.property(
					fc.array(fc.nat(ways.length - 1), { minLength: chars.length, maxLength: chars.length }),
					(picks) => expectRedacted(chars.map((c, i) => ways[picks[i]](c)).join('')),
				),
			);
		});
	});

	describe('base64 and base64url', () => {
		/** Padded, with `+` and `/` in its base64 at every alignment, so each variant is distinct. */
		const paddedSecret = `se"cr\\et<&>+/ 'x?ÿ`;
		const paddedRedactor = () => new Redactor([paddedSecret]);
		const bytes = Buffer.from(paddedSecret);

		it.each([
			['base64, padded', bytes.toString('base64')],
			['base64, unpadded', bytes.toString('base64').replace(/=+$/, '')],
			['base64url', bytes.toString('base64url')],
		])('%s', (_form, form) => {
			expect(form).toMatch(/[+/]|[-_]/);
			expect(paddedRedactor().text(`<${form}>`)).toBe(`<${REDACTED}>`);
		});

		it.each([0, 1, 2])(
			'inside a longer base64 text, %i bytes after a group starts (`Basic base64(id:secret)`)',
			(before) => {
				const longer = Buffer.concat([
					Buffer.from('id:'.slice(3 - before)),
					bytes,
					Buffer.from('!?'),
				]);
				for (const alphabet of ['base64', 'base64url'] as const) {
					const redacted = paddedRedactor().text(longer.toString(alphabet));
					// What stays is at most the groups the secret shares with what is around it.
					expect(redacted).toMatch(/^[\w+/=-]{0,4}\[redacted\][\w+/=-]{0,8}$/);
				}
			},
		);
	});

	it('hex, in lower and upper case', () => {
		const hex = Buffer.from(secret).toString('hex');
		expectRedacted(hex);
		expectRedacted(hex.toUpperCase());
	});

	describe('a secret too long to spell character by character (a token)', () => {
		const token = `${'tok/en+ö"-'.repeat(40)}end`;
		const tokenRedactor = () => new Redactor([token]);
		const bytes = Buffer.from(token);

		it.each([
			['as is', token],
			['JSON-escaped', JSON.stringify(token).slice(1, -1)],
			['JSON-escaped with \\/ (PHP)', JSON.stringify(token).slice(1, -1).replaceAll('/', '\\/')],
			['URL-encoded', encodeURIComponent(token)],
			[
				'URL-encoded, lower-case hex',
				encodeURIComponent(token).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
			],
			['base64', bytes.toString('base64')],
			['base64url', bytes.toString('base64url')],
			['hex', bytes.toString('hex')],
			['hex, upper case', bytes.toString('hex').toUpperCase()],
		])('%s', (_form, form) => {
			expect(tokenRedactor().text(`<${form}>`)).toBe(`<${REDACTED}>`);
		});

		it('however long, or not well-formed (a hostile server could issue any)', () => {
			const huge = 'T'.repeat(2 ** 20);
			expect(redact(`Bearer ${huge}.`, [huge, 'client-secret'])).toBe(`Bearer ${REDACTED}.`);
			const loneSurrogate = `${token}\ud800`;
			expect(redact(`<${loneSurrogate}>`, [loneSurrogate])).toBe(`<${REDACTED}>`);
			// URL-encoded as UTF-8 encoders write a lone surrogate: U+FFFD.
			const urlForm = `${encodeURIComponent(token)}%EF%BF%BD`;
			expect(redact(`<${urlForm}>`, [loneSurrogate])).toBe(`<${REDACTED}>`);
		});
	});

	it('not HTML entities, nor one form inside another: the list is all there is', () => {
		const outside = [
			secret.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'),
			JSON.stringify(encodeURIComponent(secret)).replace(/%/g, '\\u0025'),
		];
		for (const text of outside) expect(redactor().text(text)).toBe(text);
	});
});

describe('what is replaced', () => {
	const secret = `p/a&s<s>"w'ö rd+9`;
	const redactor = () => new Redactor([secret]);

	it('leaves everything around the secret as it was, escapes included', () => {
		const text = `a%2Fb \\u00e9 &amp; ${encodeURIComponent(secret)} &#47; \\/ tail`;
		expect(redactor().text(text)).toBe(`a%2Fb \\u00e9 &amp; ${REDACTED} &#47; \\/ tail`);
	});

	it('does not touch a text that only resembles the secret, or a part of it', () => {
		const parts = [secret.slice(0, 8), encodeURIComponent(secret.slice(1)), 'p%2Fa%26s%3Cs%3E'];
		for (const part of parts) expect(redactor().text(part)).toBe(part);
		// `+` stands for a space only, `\/` for a slash only.
		const plusForA = secret.replace('a', '+');
		const slashForW = JSON.stringify(secret).slice(1, -1).replace('w', '\\/');
		for (const lookalike of [plusForA, slashForW])
			expect(redactor().text(lookalike)).toBe(lookalike);
	});

	it('a blank or missing secret (a URL query without a value) replaces nothing', () => {
		expect(redact('hook?a=&b=x-secret-1', ['', undefined, 'x-secret-1'])).toBe(
			`hook?a=&b=${REDACTED}`,
		);
		expect(redact('nothing to hide, not even ""', [''])).toBe('nothing to hide, not even ""');
	});

	it('where two secrets start at one place, the longer one is replaced', () => {
		expect(redact('token abcd-efgh!', ['abcd', 'abcd-efgh'])).toBe(`token ${REDACTED}!`);
	});

	it('short secrets: as a whole value or a quoted JSON string, also when escaped', () => {
		expect(redact('ab', ['ab'])).toBe(REDACTED);
		expect(redact('\\u0061\\u0062', ['ab'])).toBe(REDACTED);
		expect(redact('say "ab" and abc', ['ab'])).toBe(`say "${REDACTED}" and abc`);
		// From four characters on, a secret is found inside a longer text too.
		expect(redact('key=abcd;', ['abcd'])).toBe(`key=${REDACTED};`);
		expect(redact('key=abc;', ['abc'])).toBe('key=abc;');
	});
});
