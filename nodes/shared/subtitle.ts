import type { ResourceDefinition } from './execution/router';

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
export function operationNames<C>(
	resources: ReadonlyArray<ResourceDefinition<C>>,
): Record<string, string> {
	const names: Record<string, string> = {};
	for (const resource of resources) {
		for (const operation of resource.operations) {
			names[`${resource.option.value}:${operation.value}`] = operation.subtitle ?? operation.name;
		}
	}
	return names;
}

/** `={{ body }}`, refusing a body that would end the expression early. */
export function subtitleExpression(body: string): string {
	const text = `={{ ${body} }}`;
	if (/\}\}(?!$)/.test(text))
		throw new Error('A subtitle expression must not contain "}}" before its end');
	return text;
}

/** The operation's name (`Send Text`, `Check Number`), for nodes whose subtitle is only that. */
export function operationSubtitle<C>(resources: ReadonlyArray<ResourceDefinition<C>>): string {
	return subtitleExpression(
		`(${JSON.stringify(operationNames(resources))})[$parameter["resource"] + ":" + $parameter["operation"]]`,
	);
}
