/**
 * A module loaded the first time an operation needs it, not when n8n loads the node: n8n loads
 * every installed node at each start (and each queue worker does), and most workflows use few of
 * our operations. undici, the phone metadata, the QR encoder and the MIME tables were most of the
 * package's start-up time and heap (`npm run bench:startup`). After the first call it is one
 * variable read.
 */
export function onFirstUse<T>(load: () => T): () => T {
	let loaded: { value: T } | undefined;
	return () => (loaded ??= { value: load() }).value;
}
