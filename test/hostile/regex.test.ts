/**
 * Every regular expression of the package, and every parser that sees outside text, is
 * linear-time and bounded:
 *
 * 1. The audit: every regex literal in nodes/ and credentials/ (found with TypeScript's own
 *    parser) is fuzzed with long runs of the characters that make patterns backtrack; its time
 *    on 4n characters must be about 4 times its time on n (a quadratic one takes 16 times).
 *    A new regex is covered without editing this file. The one pattern built at run time, the
 *    redaction's (from the secrets), is fuzzed through the Redactor that builds it.
 * 2. The parsers, each on 1 MB of the worst input we could build for it (less where a quadratic
 *    pattern would run for hours), timed against a plain linear pass over the same input in the
 *    same run (test/harness/hostile.ts).
 */
import { readFileSync, readdirSync } from 'fs';
import { join, relative } from 'path';
import type { IDataObject } from 'n8n-workflow';
import * as ts from 'typescript';

import { expectLinearTime } from '../harness/hostile';
import { isMimeType, parseBase64Text } from '../../nodes/shared/dataUri';
import { readSendWindow } from '../../nodes/Messaging/helpers/sendWindowFields';
import { normalizePhone } from '../../nodes/shared/phone';
import { parseDecimal } from '../../nodes/shared/rates/rateTable';
import { endpoints, parseCredentials } from '../../nodes/shared/transport';
import { parseEnvelope, Redactor } from '../../nodes/shared/transport/envelope';

const ROOT = join(__dirname, '..', '..');

interface FoundRegex {
	where: string;
	source: string;
	flags: string;
}

function sourceFiles(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
		entry.isDirectory()
			? sourceFiles(join(dir, entry.name))
			: entry.name.endsWith('.ts')
				? [join(dir, entry.name)]
				: [],
	);
}

/** The one file that builds a pattern at run time; the audit fuzzes it through its Redactor. */
const BUILT_PATTERN_FILE = join('nodes', 'shared', 'transport', 'envelope.ts');

/** Every regex literal of the package's runtime code. */
function packageRegexes(): FoundRegex[] {
	const found: FoundRegex[] = [];
	for (const file of [
		...sourceFiles(join(ROOT, 'nodes')),
		...sourceFiles(join(ROOT, 'credentials')),
	]) {
		const source = ts.createSourceFile(
			file,
			readFileSync(file, 'utf8'),
			ts.ScriptTarget.Latest,
			true,
		);
		const visit = (node: ts.Node) => {
			if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
				const text = node.getText(source);
				const end = text.lastIndexOf('/');
				const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
				found.push({
					where: `${relative(ROOT, file)}:${line}`,
					source: text.slice(1, end),
					flags: text.slice(end + 1).replace('g', ''),
				});
			}
			if (
				ts.isNewExpression(node) &&
				node.expression.getText(source) === 'RegExp' &&
				relative(ROOT, file) !== BUILT_PATTERN_FILE
			) {
				throw new Error(
					`${relative(ROOT, file)}: new RegExp(…) cannot be audited; use a regex literal`,
				);
			}
			ts.forEachChild(node, visit);
		};
		visit(source);
	}
	return found;
}

/**
 * Runs that make patterns backtrack: one character, or a short unit, repeated, after a prefix
 * that gets anchored patterns going, and ending in a character that makes the match fail late,
 * or not ending at all (`\s*\S+$` matches at once on spaces then `!`, and is quadratic on spaces).
 * Each pattern is also fuzzed with runs of its own literal characters (patternUnits).
 */
const UNITS = [
	' ',
	'1',
	'a',
	'x',
	'<',
	'.',
	',',
	';',
	'=',
	'/',
	'-',
	'+',
	'1,',
	' ;',
	'x1',
	'token ',
	'<title',
	';a=',
];
const PREFIXES = ['', 'a/b;x=', 'data:a', '1'];
const ENDINGS = ['\u0000!', ',', ''];

/**
 * The characters a pattern names literally, each alone and before a space, a digit and a letter:
 * a pattern's own markers (`#`, `@`, `:`) repeated are what make `(@\w+)*@$` backtrack.
 */
function patternUnits(source: string): string[] {
	const literals = new Set<string>();
	for (let i = 0; i < source.length; i++) {
		const char = source[i];
		// `\d`, `\s`, `\b`, `\u…` are classes or escapes; `\.`, `\/` are literal.
		if (char === '\\') {
			const next = source[++i] ?? '';
			if (!/[\da-z]/i.test(next)) literals.add(next);
		} else if (!'^$.|?*+()[]{}'.includes(char)) literals.add(char);
	}
	return [...literals].flatMap((char) => [char, `${char} `, `${char}1`, `${char}a`]);
}

function fuzzInput(prefix: string, unit: string, ending: string, length: number): string {
	return prefix + unit.repeat(Math.ceil(length / unit.length)) + ending;
}

describe('the regex audit: every pattern of the package is linear on long runs', () => {
	const regexes = packageRegexes();

	it('finds the patterns (the audit itself works)', () => {
		expect(regexes.length).toBeGreaterThan(20);
		expect(regexes.some((r) => r.where.startsWith('nodes/shared/phone.ts'))).toBe(true);
	});

	it('flags the quadratic patterns this package had (the audit can fail)', () => {
		const formerPatterns = [
			/\s*(ext\.?|x)\s*\d+$/i, // phone.ts, extension
			/<[^>]+>/, // envelope.ts, tags
			/\b(session|token)\b[^.]*\b(expired|invalid)\b/i, // envelope.ts, auth failure
			/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/, // rateTable.ts and convert, numbers
			/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;\s*[\w.+-]+=[^;,]*)*$/, // dataUri.ts, mime types
		];
		for (const pattern of formerPatterns)
			expect(worstGrowth((input) => pattern.test(input)).growth).toBeGreaterThanOrEqual(8);
	});

	it('flags quadratic patterns that only a run to the end, or of their own markers, shows', () => {
		for (const pattern of [/\s*\S+$/, /(@\w+)*@$/])
			expect(
				worstGrowth((input) => pattern.test(input), patternUnits(pattern.source)).growth,
			).toBeGreaterThanOrEqual(8);
	});

	it.each(regexes.map((r) => [r.where, r] as const))('%s', (_where, found) => {
		const pattern = new RegExp(found.source, found.flags);
		const worst = worstGrowth((input) => pattern.test(input), patternUnits(found.source));
		if (worst.growth >= 8)
			throw new Error(
				`/${found.source}/${found.flags} (${found.where}) is not linear: ×${worst.growth.toFixed(1)} for 4× the input ${worst.input}`,
			);
		expect(worst.growth).toBeLessThan(8);
	});

	it(`${BUILT_PATTERN_FILE}: the pattern a Redactor builds from its secrets`, () => {
		// Secrets made of the fuzz units, ending otherwise: every run is a long match that fails late.
		const secrets = [
			'x1x1x1x1x1x1x1!',
			' ; ; ; ; ;x',
			'1,1,1,1,1,1,x',
			'<title<title>',
			'+ + + +!',
		];
		const redactor = new Redactor([...secrets, 'ab3', 'a/b;x=1']);
		const worst = worstGrowth((input) => redactor.text(input));
		expect(worst.growth).toBeLessThan(8);
	});
});

/** The largest growth of a pattern's time from n to 4n characters over every fuzz input. */
function worstGrowth(
	run: (input: string) => unknown,
	ownUnits: readonly string[] = [],
): { growth: number; input: string } {
	const timeOf = (input: string, runs: number) => {
		const times: number[] = [];
		for (let i = 0; i < runs; i++) {
			const start = process.hrtime.bigint();
			run(input);
			times.push(Number(process.hrtime.bigint() - start));
		}
		return Math.max(20_000, times.sort((a, b) => a - b)[Math.floor(runs / 2)]); // floor: 20 µs
	};
	const growth = (prefix: string, unit: string, ending: string, n: number, runs: number) => {
		const small = fuzzInput(prefix, unit, ending, n);
		const large = fuzzInput(prefix, unit, ending, 4 * n);
		timeOf(small, 1);
		return timeOf(large, runs) / timeOf(small, runs);
	};
	let worst = { growth: 0, input: '' };
	for (const prefix of PREFIXES) {
		for (const unit of new Set([...UNITS, ...ownUnits])) {
			for (const ending of ENDINGS) {
				let g = growth(prefix, unit, ending, 2048, 3);
				// A suspect is measured again, larger, three times, and its best round counts: noise (a GC
				// pause, another process on the CPU) slows some rounds; a quadratic pattern is slow in
				// every round, a linear one not in all.
				if (g > 8) g = Math.min(...[0, 1, 2].map(() => growth(prefix, unit, ending, 4096, 3)));
				if (g > worst.growth)
					worst = { growth: g, input: JSON.stringify(`${prefix}${unit}${unit}…${ending}`) };
				if (g > 8) return worst;
			}
		}
	}
	return worst;
}

/** A JSON-RPC endpoint for the envelope cases. */
const endpoint = endpoints.sendMessage;

describe('parsers of outside text, 1 MB of their worst input, against a linear pass', () => {
	const report: Record<string, string> = {};
	afterAll(() => {
		// The measured ratios, for the record (npm run test:hostile prints them).
		console.log(
			Object.entries(report)
				.map(([name, line]) => `${name}: ${line}`)
				.join('\n'),
		);
	});
	const measure = (name: string, testCase: Parameters<typeof expectLinearTime<string>>[1]) => {
		const result = expectLinearTime(name, testCase);
		const kib = (testCase.bytes ?? 1024 * 1024) / 1024;
		report[name] =
			`growth ×${result.growth.toFixed(1)} for 4× the input, ${result.overBaseline.toFixed(1)}× a linear pass (${result.largeMs.toFixed(2)} ms on ${kib} KiB)`;
		return result;
	};

	it('phone numbers: "1" + spaces + "#a" (the extension pattern), digits, letters', () => {
		// The extension pattern once started at the spaces before its marker: every space began a scan
		// to the end, and "#a" (a marker, then no digits) makes each scan fail late. Smaller than 1 MB,
		// so that such a pattern fails this bound within seconds rather than running for hours.
		measure('phone: spaces before #a', {
			input: (n) => `1${' '.repeat(n)}#a`,
			run: (s) => normalizePhone(s),
			bytes: 16 * 1024,
		});
		measure('phone: 1 MB of digits', {
			input: (n) => '6'.repeat(n),
			run: (s) => normalizePhone(s, 'ID'),
		});
		measure('phone: x1x1x1…', {
			input: (n) => `+62${'x1'.repeat(n / 2)}`,
			run: (s) => normalizePhone(s),
		});
	});

	it('HTML error pages: "<" without ">", "<title" without end, unclosed scripts, spaces', () => {
		const redactor = new Redactor(['a-long-secret']);
		const pageText = (page: string) =>
			parseEnvelope(endpoint, { status: 500, text: page }, redactor);
		measure('page: <<<<', { input: (n) => '<'.repeat(n), run: (s) => pageText(s) });
		measure('page: <title<title…', {
			input: (n) => '<title'.repeat(n / 6),
			run: (s) => pageText(s),
		});
		measure('page: <script> unclosed', {
			input: (n) => `<p>${'<script>'.repeat(n / 8)}`,
			run: (s) => pageText(s),
		});
		measure('page: <a> tags', { input: (n) => '<a>x'.repeat(n / 4), run: (s) => pageText(s) });
		measure('envelope: HTTP 502 page of "<"', {
			input: (n) => '<'.repeat(n),
			run: (s) => parseEnvelope(endpoint, { status: 502, text: s }, redactor),
		});
	});

	it('JSON-RPC errors: the auth-failure wording on a long sentence', () => {
		measure('envelope: "token " × n in an error message', {
			input: (n) =>
				JSON.stringify({ jsonrpc: '2.0', error: { code: 200, message: 'token '.repeat(n / 6) } }),
			run: (s) =>
				parseEnvelope(endpoint, { status: 200, text: s }, new Redactor(['a-long-secret'])),
		});
	});

	it('redaction: runs of half escapes, the secret cut short in each form, a secret on every line', () => {
		const secret = `p/a&s<s>"w'ö rd+9`;
		const redactor = new Redactor([secret, 'AT-access-token-1234']);
		const measureRedaction = (name: string, input: (n: number) => string) =>
			measure(`redaction: ${name}`, { input, run: (s) => redactor.text(s) });
		/** `form` without its last character, then a space, as many times as fit in n. */
		const cutShort = (form: string) => (n: number) =>
			`${form.slice(0, -1)} `.repeat(n / form.length);
		const bytes = Buffer.from(secret);
		measureRedaction('%41%41…', (n) => '%41'.repeat(n / 3));
		measureRedaction('%C3%C3… (lead bytes without the rest)', (n) => '%C3'.repeat(n / 3));
		measureRedaction('\\u0041\\u0041…', (n) => '\\u0041'.repeat(n / 6));
		measureRedaction('\\\\\\… (backslashes)', (n) => '\\'.repeat(n));
		measureRedaction('+ + + (a secret with a space)', (n) => '+ '.repeat(n / 2));
		measureRedaction('the secret cut short, as is', cutShort(secret));
		measureRedaction(
			'the secret cut short, JSON-escaped',
			cutShort(JSON.stringify(secret).slice(1, -1)),
		);
		measureRedaction('the secret cut short, URL-encoded', cutShort(encodeURIComponent(secret)));
		measureRedaction('the secret cut short, base64', cutShort(bytes.toString('base64')));
		measureRedaction('the secret cut short, hex', cutShort(bytes.toString('hex')));
		// A hostile server's token, too long to spell: its forms are searched as texts.
		const token = Buffer.from(Array.from({ length: 48_000 }, (_, i) => (i * 7919) % 251)).toString(
			'base64url',
		);
		const withToken = new Redactor([secret, token]);
		measure('redaction: a 64 KB token, cut short on every line', {
			input: (n) => `${token.slice(0, -1)}\n`.repeat(n / token.length),
			run: (s) => withToken.text(s),
		});
		measureRedaction('the secret escaped on every line', (n) =>
			`${encodeURIComponent(secret)}\n`.repeat(n / (encodeURIComponent(secret).length + 1)),
		);
	});

	it('numbers, data URIs, mime types, base URLs', () => {
		measure('number text (amounts, rates): 1 MB of digits then x', {
			input: (n) => `${'1'.repeat(n)}x`,
			run: (s) => parseDecimal(s),
		});
		measure('number text (amounts, rates): 1,111,111…x', {
			input: (n) => `1${',111'.repeat(n / 4)}x`,
			run: (s) => parseDecimal(s),
		});
		measure('data URI: data:a;;;;… without comma', {
			input: (n) => `data:a${';'.repeat(n)}`,
			run: (s) => parseBase64Text(s),
		});
		// Removing 200,000 spaces builds a new 1 MB string in V8's large-object space, a step above the
		// 256 KB run (×9 measured on a busy machine, 30 ms); a quadratic pass would be ×16 and seconds.
		measure('base64 with spaces', {
			input: (n) => 'QUJD '.repeat(n / 5),
			run: (s) => parseBase64Text(s),
			maxGrowth: 14,
		});
		measure('mime type: parameters then spaces', {
			input: (n) => `a/b;x=${' '.repeat(n)},`,
			run: (s) => isMimeType(s),
		});
		measure('base URL: slashes', {
			input: (n) => `http://h/${'/'.repeat(n)}a`,
			run: (s) => parseCredentials({ baseUrl: s, clientId: 'c', clientSecret: 's' }),
		});
	});

	// Send Only Between is item data when mapped: read in one pass, and refused in a short sentence.
	it('send windows: Days as 1 MB of day names then a word, Time Zone and Start of 1 MB', () => {
		const refusal = (fields: IDataObject) => {
			const read = readSendWindow(fields, 'UTC');
			if (!('problem' in read)) throw new Error(`accepted: ${JSON.stringify(fields).slice(0, 80)}`);
			expect(read.problem.length).toBeLessThan(200);
			return read;
		};
		measure('send window: Days "mon,tue,…,x"', {
			input: (n) => `${'mon,tue,'.repeat(n / 8)}x`,
			run: (s) => refusal({ days: s }),
		});
		measure('send window: Time Zone of 1 MB', {
			input: (n) => `Asia/${'J'.repeat(n)}`,
			run: (s) => refusal({ timeZone: s }),
		});
		measure('send window: Start "0" then spaces', {
			input: (n) => `0${' '.repeat(n)}:00x`,
			run: (s) => refusal({ start: s }),
		});
	});
});
