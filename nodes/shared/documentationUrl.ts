/**
 * Where the editor's "Docs" link of a node leads. n8n uses an `http…` `documentationUrl` on the
 * node description as written; without one it takes the codex file's primary documentation and
 * appends its tracking query, which would break a `#anchor`. `test/docs.test.ts` checks that
 * this is the repository of package.json and that every anchor is a heading of the file.
 */
export const REPOSITORY_URL =
	'https://github.com/n8n-nodes-messaging-rate/n8n-nodes-messaging-rate';

/** A node's section in docs/: `docs/<file>#<anchor>` on the default branch of the repository. */
export function nodeDocumentationUrl(file: string, anchor: string): string {
	return `${REPOSITORY_URL}/blob/main/docs/${file}#${anchor}`;
}

/**
 * The docs section of one operation, `## <Resource> → <Operation>` in the node's page, by GitHub's
 * heading anchor: lower case, punctuation dropped (the arrow too), spaces to hyphens.
 */
export function operationDocumentationUrl(
	file: string,
	resource: string,
	operation: string,
): string {
	const anchor = `${resource} → ${operation}`
		.toLowerCase()
		.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
		.replace(/ /g, '-');
	return nodeDocumentationUrl(file, anchor);
}
