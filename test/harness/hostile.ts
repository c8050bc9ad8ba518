/**
 * Tools for the hostile-input suite (`npm run test:hostile`, files in test/hostile/).
 *
 * Time: never a wall-clock constant (the machine is shared and noisy). `expectLinearTime` times
 * the code under test on an input of n and of 4n bytes in the same run and compares the two: a
 * linear-time parser takes about 4 times as long on the larger input, a quadratic one about 16
 * times. It also compares the larger run with a plain linear pass over the same input
 * (`baseline`), so that a parser that is linear but does something silly per byte shows too.
 *
 * Secrets: `findSecret` looks for a secret in the encodings a leak can take (as is, JSON-escaped,
 * HTML-escaped, URL-encoded, base64, base64url, hex, and as every encoder of serverEscapes.ts
 * writes it back) anywhere in a value (strings, nested objects, arrays, errors with their
 * description and cause). It looks for more than the redaction replaces (HTML-escaped): the
 * tests echo only forms the redaction lists.
 */
import { performance } from 'perf_hooks';

import { stackEscapings } from './serverEscapes';

export interface LinearTimeCase<I> {
	/** Builds the worst input of about `bytes` bytes for the code under test. */
	input(bytes: number): I;
	/** The code under test; its result is ignored (throwing is fine: a refusal is an answer). */
	run(input: I): unknown;
	/** A plain linear pass over the same input, for scale (default: one charCode sum over its JSON). */
	baseline?(input: I): unknown;
	/** Size of the large input (default 1 MiB); the small one is a quarter of it. */
	bytes?: number;
	/** Allowed ratio large/small (default 8: linear ≈ 4, quadratic ≈ 16). */
	maxGrowth?: number;
	/** Allowed ratio of the large run to the baseline on the same input (default 200). */
	maxOverBaseline?: number;
}

export interface LinearTimeResult {
	smallMs: number;
	largeMs: number;
	baselineMs: number;
	growth: number;
	overBaseline: number;
}

function timeOnce(fn: () => unknown): number {
	const start = performance.now();
	try {
		fn();
	} catch {
		// A refusal (thrown error) is a result like any other; only the time matters here.
	}
	return performance.now() - start;
}

/** Median of `runs` timings (the first call warms the code up and is not counted). */
function medianMs(fn: () => unknown, runs = 5): number {
	timeOnce(fn);
	const times = Array.from({ length: runs }, () => timeOnce(fn)).sort((a, b) => a - b);
	return times[Math.floor(runs / 2)];
}

function defaultBaseline(input: unknown): number {
	const text = typeof input === 'string' ? input : (JSON.stringify(input) ?? '');
	let sum = 0;
	for (let i = 0; i < text.length; i++) sum = (sum + text.charCodeAt(i)) | 0;
	return sum;
}

/**
 * Measures a case and returns the ratios; throws (failing the test) when the growth from n to 4n
 * or the cost over the baseline is beyond the case's limits. Tiny timings are floored at 0.05 ms
 * so that a parser that stops early on a bounded prefix (the goal) passes.
 */
export function expectLinearTime<I>(name: string, testCase: LinearTimeCase<I>): LinearTimeResult {
	const bytes = testCase.bytes ?? 1024 * 1024;
	const small = testCase.input(Math.floor(bytes / 4));
	const large = testCase.input(bytes);
	const baseline = testCase.baseline ?? defaultBaseline;
	const floor = 0.05;
	const maxGrowth = testCase.maxGrowth ?? 8;
	const maxOverBaseline = testCase.maxOverBaseline ?? 200;
	const measure = () => {
		const smallMs = Math.max(
			floor,
			medianMs(() => testCase.run(small)),
		);
		const largeMs = Math.max(
			floor,
			medianMs(() => testCase.run(large)),
		);
		const baselineMs = Math.max(
			floor,
			medianMs(() => baseline(large)),
		);
		return {
			smallMs,
			largeMs,
			baselineMs,
			growth: largeMs / smallMs,
			overBaseline: largeMs / baselineMs,
		};
	};
	const fails = (r: LinearTimeResult) => r.growth > maxGrowth || r.overBaseline > maxOverBaseline;
	let result = measure();
	// A garbage collection or a busy machine (CI installs n8n on the other core meanwhile) can spoil a
	// measurement of a linear parser; a quadratic one fails every measurement. Up to four in all.
	for (let retry = 0; retry < 3 && fails(result); retry++) result = measure();
	const { smallMs, largeMs } = result;
	if (fails(result)) {
		throw new Error(
			`${name}: not linear-time and bounded: ${fmt(smallMs)} ms on ${bytes / 4} bytes, ${fmt(largeMs)} ms on ${bytes} bytes ` +
				`(growth ${result.growth.toFixed(1)}×, allowed ${maxGrowth}×; ${result.overBaseline.toFixed(1)}× a linear pass, allowed ${maxOverBaseline}×)`,
		);
	}
	return result;
}

function fmt(ms: number): string {
	return ms < 1 ? ms.toFixed(3) : ms.toFixed(1);
}

/** Every form a secret can leak in. Secrets shorter than 1 character are ignored. */
function secretForms(secret: string): string[] {
	if (!secret) return [];
	const json = JSON.stringify(secret).slice(1, -1);
	const html = secret
		.replace(/&/g, '&amp;')
		.replace(/</g, '&lt;')
		.replace(/>/g, '&gt;')
		.replace(/"/g, '&quot;')
		.replace(/'/g, '&#39;');
	const html2 = secret
		.replace(/&/g, '&amp;')
		.replace(/</g, '&lt;')
		.replace(/>/g, '&gt;')
		.replace(/"/g, '&#34;')
		.replace(/'/g, '&#x27;');
	const bytes = Buffer.from(secret, 'utf8');
	const forms = [
		secret,
		json,
		html,
		html2,
		encodeURIComponent(secret),
		new URLSearchParams({ s: secret }).toString().slice(2),
		encodeURI(secret),
		bytes.toString('base64'),
		bytes.toString('base64').replace(/=+$/, ''),
		bytes.toString('base64url'),
		bytes.toString('hex'),
		// As PHP, Java, .NET, Python, Go and Ruby write it back (serverEscapes.ts).
		...Object.values(stackEscapings(secret)),
	];
	return [...new Set(forms.filter(Boolean))];
}

/** Every string inside a value: nested objects and arrays, and an error's message, description, stack and cause. */
export function stringsIn(value: unknown, seen = new Set<unknown>()): string[] {
	if (typeof value === 'string') return [value];
	if (value === null || typeof value !== 'object' || seen.has(value))
		return value === undefined ? [] : [String(value)];
	seen.add(value);
	const out: string[] = [];
	if (value instanceof Error) {
		out.push(value.message, value.stack ?? '');
		for (const key of ['description', 'cause', 'context'] as const)
			out.push(...stringsIn((value as unknown as Record<string, unknown>)[key], seen));
	}
	if (Buffer.isBuffer(value)) return [...out, value.toString('latin1'), value.toString('utf8')];
	for (const key of Object.keys(value)) {
		out.push(key, ...stringsIn((value as Record<string, unknown>)[key], seen));
	}
	return out;
}

/** The first place a secret shows up in `value`, in any of its forms, or undefined. */
export function findSecret(
	value: unknown,
	secrets: readonly string[],
): { secret: string; form: string; inText: string } | undefined {
	const texts = stringsIn(value);
	for (const secret of secrets) {
		for (const form of secretForms(secret)) {
			const inText = texts.find((text) => text.includes(form));
			if (inText !== undefined)
				return { secret, form, inText: inText.length > 200 ? `${inText.slice(0, 200)}…` : inText };
		}
	}
	return undefined;
}

/** Throws (failing the test) when any secret is found in `value`. */
export function expectNoSecret(where: string, value: unknown, secrets: readonly string[]): void {
	const found = findSecret(value, secrets);
	if (found)
		throw new Error(
			`${where}: a secret leaks in the form ${JSON.stringify(found.form)}: ${JSON.stringify(found.inText)}`,
		);
}
