/**
 * Where the editor's "Docs" links lead: the package's documentation, the docs/ folder whose
 * README.md is package.json's homepage (`test/cross-cutting/docs.test.ts` keeps every link of the
 * nodes, their codex files and the credential under it). n8n uses an `http…` `documentationUrl`
 * on the node description as written; without one it appends a tracking query to the codex's
 * link, which would break a `#anchor`.
 */
export const DOCUMENTATION_URL =
	'https://github.com/n8n-nodes-messaging-rate/n8n-nodes-messaging-rate/blob/main/docs/';

/** A node's section in docs/: `docs/<file>#<anchor>`. */
export function nodeDocumentationUrl(file: string, anchor: string): string {
	return `${DOCUMENTATION_URL}${file}#${anchor}`;
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
