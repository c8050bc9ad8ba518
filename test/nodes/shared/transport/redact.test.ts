/**
 * The one redaction (nodes/shared/transport/redact.ts): a secret is found in every form a server
 * stack writes it back in (test/harness/serverEscapes.ts), mixed escapes included, and only the
 * stretch that says it is replaced.
 */
import fc from 'fast-check';

import { REDACTED, Redactor, redact } from '../../../../nodes/shared/transport/redact';
import { findSecret } from '../../../harness/hostile';
import { stackEscapings } from '../../../harness/serverEscapes';

/** Secrets with every character that changes under some escaping: `/`, `&`, `<`, quotes, `+`, space, `\`, non-ASCII, astral. */
const HOSTILE_SECRETS = [
	`p/a&s<s>"w'ö rd+\\9€😀`,
	'Zm9v/YmFy+cXV4=/&#x2F;',
	'señor-Ünïcödé/sécret',
	'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig-_/+',
	'  lead&trail  ',
];

describe.each(HOSTILE_SECRETS)('secret %j', (secret) => {
	const redactor = new Redactor([secret]);
	it.each(Object.entries(stackEscapings(secret)))('%s', (_stack, form) => {
		const text = `before ${form} after`;
		const redacted = redactor.text(text);
		expect(redacted).toMatch(/^before .*\[redacted\].* after$/);
		expect(findSecret(redacted, [secret])).toBeUndefined();
		// Only the wrapping of a nested form (JSON around it, base64 padding) may stay.
		expect(redacted.length).toBeLessThan(text.length);
		expect(redactor.value({ message: text, nested: [text] })).toEqual({
			message: redacted,
			nested: [redacted],
		});
	});
});

describe('what is replaced', () => {
	const secret = `p/a&s<s>"w'ö rd+9`;
	const redactor = new Redactor([secret]);

	it('every character escaped a different way, in one text (mixed escapes)', () => {
		const ways = [
			(c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`,
			(c: string) => encodeURIComponent(c).toLowerCase(),
			(c: string) => `&#${c.codePointAt(0)};`,
			(c: string) => (/[a-z0-9]/i.test(c) ? c : `\\${c}`),
			(c: string) => c,
		];
		fc.assert(
			fc.property(
				fc.array(fc.nat(ways.length - 1), { minLength: secret.length, maxLength: secret.length }),
				(picks) => {
					const form = [...secret].map((c, i) => ways[picks[i]](c)).join('');
					expect(redactor.text(`<${form}>`)).toBe(`<${REDACTED}>`);
				},
			),
		);
	});

	it('an escape nested three deep: URL-encoded inside JSON inside HTML', () => {
		const form = JSON.stringify({ u: `https://x/?s=${encodeURIComponent(secret)}` }).replace(
			/["&<>]/g,
			(c) => `&#${c.charCodeAt(0)};`,
		);
		expect(redactor.text(form)).not.toContain('w');
		expect(redactor.text(form)).toContain(REDACTED);
	});

	it('leaves everything around the secret as it was, escapes included', () => {
		const text = `a%2Fb \\u00e9 &amp; ${encodeURIComponent(secret)} &#47; \\/ tail`;
		expect(redactor.text(text)).toBe(`a%2Fb \\u00e9 &amp; ${REDACTED} &#47; \\/ tail`);
	});

	it('does not touch a text that only resembles the secret, or a part of it', () => {
		const parts = [secret.slice(0, 8), encodeURIComponent(secret.slice(1)), 'p%2Fa%26s%3Cs%3E'];
		for (const part of parts) expect(redactor.text(part)).toBe(part);
	});

	it('base64 and hex of the secret, in either case, inside escapes', () => {
		const base64 = Buffer.from(`client:${secret}`).toString('base64');
		expect(redactor.text(`Basic ${base64.replace(/\//g, '\\/')}`)).toMatch(
			/^Basic [A-Za-z0-9+\\/]*\[redacted\]/,
		);
		expect(redactor.text(Buffer.from(secret).toString('hex').toUpperCase())).toBe(REDACTED);
	});

	it('short secrets: as a whole value or a quoted JSON string, also when escaped', () => {
		expect(redact('ab', ['ab'])).toBe(REDACTED);
		expect(redact('\\u0061\\u0062', ['ab'])).toBe(REDACTED);
		expect(redact('say "ab" and abc', ['ab'])).toBe(`say "${REDACTED}" and abc`);
	});
});
