/**
 * How common server stacks write a string back: JSON encoders, string literals, HTML escapers,
 * URL encoders of PHP, Java, .NET, Python, Go, Ruby and JavaScript, as their documentation and
 * defaults describe them. Tests echo a secret in each of these forms and check that the package
 * never shows it; `findSecret` (hostile.ts) looks for each of them in whatever a run produced.
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

function html(
	text: string,
	map: Record<string, string>,
	other?: (char: string) => string | undefined,
): string {
	let out = '';
	for (const char of text) out += map[char] ?? other?.(char) ?? char;
	return out;
}

/** HTML 4's Latin-1 entity names, U+00A0…U+00FF in order (what Java's escapeHtml4 and PHP's htmlentities write). */
const LATIN1_NAMES =
	'nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml'.split(
		' ',
	);
const latin1Named = (char: string) => {
	const code = char.codePointAt(0) ?? 0;
	if (code >= 0xa0 && code <= 0xff) return `&${LATIN1_NAMES[code - 0xa0]};`;
	return code === 0x20ac ? '&euro;' : undefined;
};

const BASIC_HTML = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
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
		'PHP htmlspecialchars': html(secret, { ...BASIC_HTML, "'": '&#039;' }),
		'PHP htmlentities': html(secret, { ...BASIC_HTML, "'": '&#039;' }, latin1Named),
		'PHP urlencode': percent(secret, /^[A-Za-z0-9\-._]$/, true, true),
		'PHP rawurlencode': percent(secret, RFC3986_UNRESERVED, true),
		'Java Jackson': jsonString(secret, () => false, true),
		'Java Jackson ESCAPE_NON_ASCII': jsonString(secret, nonAscii, true),
		'Java Gson': jsonString(secret, (c) => `<>&='`.includes(c), false),
		'Java URLEncoder': percent(secret, /^[A-Za-z0-9\-._*]$/, true, true),
		'Java escapeHtml4': html(secret, BASIC_HTML, latin1Named),
		'.NET System.Text.Json': jsonString(
			secret,
			ascii((c) => `"&'+<>\``.includes(c)),
			true,
		),
		'.NET WebUtility.HtmlEncode': html(secret, { ...BASIC_HTML, "'": '&#39;' }, (char) => {
			const code = char.codePointAt(0) ?? 0;
			return code >= 0xa0 && code <= 0xff ? `&#${code};` : undefined;
		}),
		'.NET HttpUtility.UrlEncode': percent(secret, /^[A-Za-z0-9\-._*!()]$/, false, true),
		'.NET Uri.EscapeDataString': percent(secret, RFC3986_UNRESERVED, true),
		'Python json.dumps': jsonString(secret, nonAscii, false),
		'Python html.escape': html(secret, { ...BASIC_HTML, "'": '&#x27;' }),
		'Python urllib.parse.quote': percent(secret, /^[A-Za-z0-9\-._~/]$/, true),
		'Python urllib.parse.quote_plus': percent(secret, RFC3986_UNRESERVED, true, true),
		'Python repr': [...secret]
			.map((char) => {
				const code = char.codePointAt(0) ?? 0;
				if (char === '\\' || char === "'") return `\\${char}`;
				if (code >= 0x7f && code <= 0xa0) return `\\x${code.toString(16).padStart(2, '0')}`;
				return char;
			})
			.join(''),
		'Go encoding/json': jsonString(secret, (c) => `<>&\u2028\u2029`.includes(c), false),
		'Go strconv.QuoteToASCII': jsonString(secret, nonAscii, false),
		'Go url.QueryEscape': percent(secret, /^[A-Za-z0-9\-._~]$/, true, true),
		'Go html.EscapeString': html(secret, {
			'&': '&amp;',
			'<': '&lt;',
			'>': '&gt;',
			'"': '&#34;',
			"'": '&#39;',
		}),
		'Ruby JSON.generate': jsonString(secret, () => false, false),
		'Ruby on Rails to_json': jsonString(secret, (c) => `<>&\u2028\u2029`.includes(c), false),
		'Ruby CGI.escapeHTML': html(secret, { ...BASIC_HTML, "'": '&#39;' }),
		'Ruby CGI.escape': percent(secret, /^[A-Za-z0-9\-._~]$/, true, true),
		'JavaScript JSON.stringify': JSON.stringify(secret).slice(1, -1),
		'JavaScript encodeURIComponent': encodeURIComponent(secret),
		'percent-encoding, lower-case hex': percent(secret, /^[A-Za-z0-9]$/, false),
		'XML decimal references': [...secret].map((c) => `&#${c.codePointAt(0)};`).join(''),
		'XML hex references, lower-case': [...secret]
			.map((c) => `&#x${(c.codePointAt(0) ?? 0).toString(16)};`)
			.join(''),
		'XML hex references, upper-case': [...secret]
			.map((c) => `&#X${(c.codePointAt(0) ?? 0).toString(16).toUpperCase()};`)
			.join(''),
		'hex, upper-case': Buffer.from(secret).toString('hex').toUpperCase(),
		'base64 in PHP json_encode': Buffer.from(secret).toString('base64').replace(/\//g, '\\/'),
		'URL-encoded JSON in HTML': html(encodeURIComponent(JSON.stringify({ s: secret })), {
			'%': '&#37;',
		}),
	};
}
