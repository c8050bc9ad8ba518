// n8n uses an `http…` documentationUrl as written; without one it adds a tracking query to the
// codex's link, which would break the `#anchor`.
const DOCUMENTATION_URL =
	'https://github.com/n8n-nodes-messaging-rate/n8n-nodes-messaging-rate/blob/main/docs/';

export function nodeDocumentationUrl(file: string, anchor: string): string {
	return `${DOCUMENTATION_URL}${file}#${anchor}`;
}

/** GitHub's heading anchor: lower case, punctuation (the arrow too) dropped, spaces to hyphens. */
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
