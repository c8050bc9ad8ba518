/**
 * How common server stacks write a string back: the JSON and URL encoders of PHP, Java, .NET,
 * Python, Go, Ruby and JavaScript, as their documentation and defaults describe them, and hex.
 * Each is a form the redaction looks for (nodes/shared/transport/envelope.ts); tests echo a secret
 * in each and check that the package never shows it; `findSecret` (hostile.ts) looks for each of
 * them in whatever a run produced.
 */

const hex4 = (code: number, upper: boolean) => {
	const digits = code.toString(16).padStart(4, '0');
	return upper ? digits.toUpperCase() : digits;
};

/** Each UTF-16 unit of the characters `escape` selects as `\uXXXX`; `"` and `\` as the JSON escapes unless selected. */
function jsonString(text: string, escape: (char: string) => boolean, upper: boolean): string {
	let out = '';
	for (const char of text) {
		const code = char.codePointAt(0) ?? 0;
		if (escape(char) || code < 0x20) {
			for (let i = 0; i < char.length; i++) out += `\\u${hex4(char.charCodeAt(i), upper)}`;
		} else if (char === '"' || char === '\\') out += `\\${char}`;
		else out += char;
	}
	return out;
}

const nonAscii = (char: string) => (char.codePointAt(0) ?? 0) > 0x7e;

/** Percent-encoding of the UTF-8 bytes of every character not in `keep` (space as `+` if `plus`). */
function percent(text: string, keep: RegExp, upper: boolean, plus = false): string {
	let out = '';
	for (const char of text) {
		if (keep.test(char)) out += char;
		else if (plus && char === ' ') out += '+';
		else
			for (const byte of Buffer.from(char, 'utf8')) {
				const digits = byte.toString(16).padStart(2, '0');
				out += `%${upper ? digits.toUpperCase() : digits}`;
			}
	}
	return out;
}

const RFC3986_UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** The secret as each stack writes it (name → text). */
export function stackEscapings(secret: string): Record<string, string> {
	const ascii = (escape: (char: string) => boolean) => (char: string) =>
		escape(char) || nonAscii(char);
	return {
		'PHP json_encode': jsonString(secret, nonAscii, false).replace(/\//g, '\\/'),
		'PHP json_encode JSON_HEX_TAG|AMP|APOS|QUOT': jsonString(
			secret,
			ascii((c) => `<>&'"`.includes(c)),
			true,
		).replace(/\//g, '\\/'),
		'PHP urlencode': percent(secret, /^[A-Za-z0-9\-._]$/, true, true),
		'PHP rawurlencode': percent(secret, RFC3986_UNRESERVED, true),
		'Java Jackson': jsonString(secret, () => false, true),
		'Java Jackson ESCAPE_NON_ASCII': jsonString(secret, nonAscii, true),
		'Java Gson': jsonString(secret, (c) => `<>&='`.includes(c), false),
		'Java URLEncoder': percent(secret, /^[A-Za-z0-9\-._*]$/, true, true),
		'.NET System.Text.Json': jsonString(
			secret,
			ascii((c) => `"&'+<>\``.includes(c)),
			true,
		),
		'.NET HttpUtility.UrlEncode': percent(secret, /^[A-Za-z0-9\-._*!()]$/, false, true),
		'.NET Uri.EscapeDataString': percent(secret, RFC3986_UNRESERVED, true),
		'Python json.dumps': jsonString(secret, nonAscii, false),
		'Python urllib.parse.quote': percent(secret, /^[A-Za-z0-9\-._~/]$/, true),
		'Python urllib.parse.quote_plus': percent(secret, RFC3986_UNRESERVED, true, true),
		'Go encoding/json': jsonString(secret, (c) => `<>&\u2028\u2029`.includes(c), false),
		'Go strconv.QuoteToASCII': jsonString(secret, nonAscii, false),
		'Go url.QueryEscape': percent(secret, /^[A-Za-z0-9\-._~]$/, true, true),
		'Ruby JSON.generate': jsonString(secret, () => false, false),
		'Ruby on Rails to_json': jsonString(secret, (c) => `<>&\u2028\u2029`.includes(c), false),
		'Ruby CGI.escape': percent(secret, /^[A-Za-z0-9\-._~]$/, true, true),
		'JavaScript JSON.stringify': JSON.stringify(secret).slice(1, -1),
		'JavaScript encodeURIComponent': encodeURIComponent(secret),
		'percent-encoding, lower-case hex': percent(secret, /^[A-Za-z0-9]$/, false),
		'hex, upper-case': Buffer.from(secret).toString('hex').toUpperCase(),
	};
}
