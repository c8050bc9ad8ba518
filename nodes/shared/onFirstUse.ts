// Loaded when an operation first needs it: n8n loads every installed node at each start (and each
// worker does), and undici, the phone metadata, the QR encoder and the MIME tables were most of the
// package's start-up time and heap.
export function onFirstUse<T>(load: () => T): () => T {
	let loaded: { value: T } | undefined;
	return () => (loaded ??= { value: load() }).value;
}
