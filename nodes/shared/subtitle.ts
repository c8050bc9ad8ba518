import type { ResourceDefinition } from './execution/router';

// n8n evaluates the subtitle as an expression in the editor: reading a parameter it cannot resolve
// (`{{ $json.x }}`) throws, so every read is guarded, and `}}` would end the expression early.

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

export function subtitleExpression(body: string): string {
	const text = `={{ ${body} }}`;
	if (/\}\}(?!$)/.test(text))
		throw new Error('A subtitle expression must not contain "}}" before its end');
	return text;
}

export function operationSubtitle<C>(resources: ReadonlyArray<ResourceDefinition<C>>): string {
	return subtitleExpression(
		`(${JSON.stringify(operationNames(resources))})[$parameter["resource"] + ":" + $parameter["operation"]]`,
	);
}
