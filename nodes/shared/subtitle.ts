import type { ResourceDefinition } from './execution/operation';

/**
 * The grey line under a node on the canvas (`subtitle`). n8n evaluates it as an expression in
 * the editor, with `$parameter` resolving the node's parameters, so it is written as JavaScript
 * inside `{{ }}` here. Rules the code below follows:
 * - a parameter that holds an expression the editor cannot resolve (`{{ $json.x }}`,
 *   `$fromAI(...)`) throws when read: every read is guarded, and an unknown value is left out,
 *   never shown as raw expression text;
 * - the text must not contain two closing braces in a row (they would end the `{{ }}`).
 */

/** `{"message:sendText": "Send Text", …}`: what the canvas shows for each operation. */
function operationNames<C>(resources: ReadonlyArray<ResourceDefinition<C>>): Record<string, string> {
	const names: Record<string, string> = {};
	for (const resource of resources) {
		for (const operation of resource.operations) {
			names[`${resource.option.value}:${operation.value}`] = operation.subtitle ?? operation.name;
		}
	}
	return names;
}

function expression(body: string): string {
	const text = `={{ ${body} }}`;
	if (/\}\}(?!$)/.test(text)) throw new Error('A subtitle expression must not contain "}}" before its end');
	return text;
}

/** The operation's name (`Send Text`, `Check Number`), for nodes whose subtitle is only that. */
export function operationSubtitle<C>(resources: ReadonlyArray<ResourceDefinition<C>>): string {
	return expression(`(${JSON.stringify(operationNames(resources))})[$parameter["resource"] + ":" + $parameter["operation"]]`);
}

/**
 * Currency Rate: the provider and what is asked of it, `BCA · USD → IDR` (Convert),
 * `BCA · USD, EUR` or `BCA · all currencies` (Get), and the operation's name otherwise (or when
 * the fields are expressions known only at run time).
 */
export function currencyRateSubtitle<C>(resources: ReadonlyArray<ResourceDefinition<C>>): string {
	const body = [
		'(() => {',
		// A value the editor can show: text that is not itself an unresolved expression.
		'const read = (name) => { try { const v = $parameter[name]; const t = typeof v === "string" || typeof v === "number" ? String(v).trim() : ""; return t.startsWith("=") || t.includes("{{") ? "" : t; } catch (e) { return ""; } };',
		`const name = (${JSON.stringify(operationNames(resources))})[$parameter["resource"] + ":" + $parameter["operation"]] || "";`,
		'if ($parameter["resource"] !== "rate") return name;',
		'const code = read("provider");',
		'const provider = (code === "other" ? read("providerCode") : code).toUpperCase();',
		'let what = name;',
		'if ($parameter["operation"] === "convert") { const from = read("fromCurrency").toUpperCase(); const to = read("toCurrency").toUpperCase(); if (from && to) what = from + " → " + to; }',
		'if ($parameter["operation"] === "get") { let raw = ""; let known = true; try { const v = $parameter["currencies"]; raw = Array.isArray(v) ? v.join(",") : String(v ?? ""); } catch (e) { known = false; }',
		'if (known && !raw.trim().startsWith("=") && !raw.includes("{{")) { const codes = raw.split(/[\\s,;]+/).filter((c) => c).map((c) => c.toUpperCase()); what = codes.length === 0 ? "all currencies" : codes.length > 3 ? codes.slice(0, 3).join(", ") + " +" + (codes.length - 3) : codes.join(", "); } }',
		'return provider ? provider + " · " + what : what;',
		'})()',
	].join(' ');
	return expression(body);
}
