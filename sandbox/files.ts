/**
 * Files served over HTTP under `/files/`, for sending a file from a URL: a stand-in for the web
 * servers, storage buckets and CDNs users point the node at. Everything is decided by the
 * request's query, so a test (or a real-n8n workflow) writes the file it needs into its URL:
 *
 *   /files/<any path>/<name>?size=1048576&type=application/pdf
 *
 * - the content is `size` bytes (default 1024) of a deterministic pattern (`fileBytes(size, seed)`,
 *   seeded by `seed`, default 1), generated while it is written: a 500 MB file costs no memory;
 * - `type`: the Content-Type (default `application/octet-stream`; `none` sends no Content-Type);
 * - `disposition`: a Content-Disposition header, sent as given;
 * - `chunked=1`: no Content-Length (chunked transfer encoding);
 * - `declare=N`: Content-Length N whatever the size (a server that lies about the length);
 * - `delayMs=N`: wait before the headers; `stallAfter=N`: send N bytes, then nothing more;
 * - `chunkDelayMs=N`: wait between 64 KiB pieces (a slow server);
 * - `status=N`: answer N with a short HTML page instead of the file;
 * - `redirects=N`: answer 302 N times (to the same URL with `redirects=N-1`) before the file;
 *   `redirectTo=<url>`: one redirect to any URL (another host, another scheme);
 *   `redirectStatus=N`: the redirect's status (default 302);
 * - `auth=user:pass`: answer 401 unless the request carries that HTTP Basic authorization.
 *
 * Every request is recorded (`fileRequests()`), with the Authorization header it carried.
 * Knows nothing of the node code.
 */
import { createHash } from 'crypto';
import type { IncomingMessage, ServerResponse } from 'http';

export const FILES_PREFIX = '/files/';

const PIECE = 64 * 1024;
/** Sizes above this are refused: the sandbox is for tests, not for filling disks. */
const MAX_SIZE = 2 * 1024 * 1024 * 1024;

export interface FileRequestLogEntry {
	seq: number;
	method: string;
	/** Path and query as requested. */
	url: string;
	authorization?: string;
	status: number;
	/** Bytes of file content written (0 for redirects and errors). */
	bytesSent: number;
	/** True when the client went away before the whole answer was written. */
	aborted?: boolean;
}

/**
 * The content of a served file: byte i is a function of i and the seed, so a test can compute
 * the checksum of what it asked for without the sandbox keeping anything.
 */
export function fileBytes(size: number, seed = 1, offset = 0): Buffer {
	const bytes = Buffer.allocUnsafe(size);
	for (let i = 0; i < size; i++) {
		const n = offset + i;
		bytes[i] = (n * 31 + seed * 17 + (n >>> 8) * 7) & 0xff;
	}
	return bytes;
}

/** SHA-256 (hex) of `fileBytes(size, seed)`, computed piece by piece. */
export function fileSha256(size: number, seed = 1): string {
	const hash = createHash('sha256');
	for (let offset = 0; offset < size; offset += PIECE)
		hash.update(fileBytes(Math.min(PIECE, size - offset), seed, offset));
	return hash.digest('hex');
}

/** Resolves when the response can take more, or is gone (no listener left behind on either). */
export function drained(res: ServerResponse): Promise<void> {
	return new Promise((resolve) => {
		const done = () => {
			res.off('drain', done);
			res.off('close', done);
			resolve();
		};
		res.on('drain', done);
		res.on('close', done);
	});
}

export class FileServer {
	private log: FileRequestLogEntry[] = [];
	private seq = 1;
	private readonly timers = new Set<NodeJS.Timeout>();

	requests(): FileRequestLogEntry[] {
		return [...this.log];
	}

	reset(): void {
		this.log = [];
		this.seq = 1;
	}

	/** Cuts every pending wait short (the server is closing). */
	close(): void {
		for (const timer of this.timers) clearTimeout(timer);
		this.timers.clear();
	}

	async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
		const entry: FileRequestLogEntry = {
			seq: this.seq++,
			method: req.method ?? 'GET',
			url: `${url.pathname}${url.search}`,
			status: 0,
			bytesSent: 0,
		};
		if (req.headers.authorization !== undefined) entry.authorization = req.headers.authorization;
		this.log.push(entry);
		res.on('close', () => {
			if (!res.writableFinished) entry.aborted = true;
		});
		const query = url.searchParams;
		const number = (name: string, fallback: number) => {
			const value = Number(query.get(name) ?? fallback);
			return Number.isFinite(value) && value >= 0 ? Math.floor(value) : fallback;
		};

		const answer = (status: number, headers: Record<string, string>, body = '') => {
			entry.status = status;
			res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
			res.end(body);
		};

		if (req.method !== 'GET' && req.method !== 'HEAD')
			return answer(405, { allow: 'GET, HEAD' }, 'Method Not Allowed');
		await this.wait(number('delayMs', 0));

		const auth = query.get('auth');
		if (
			auth !== null &&
			req.headers.authorization !== `Basic ${Buffer.from(auth).toString('base64')}`
		) {
			return answer(
				401,
				{ 'www-authenticate': 'Basic realm="files"', 'content-type': 'text/html' },
				'<html><body><h1>401 Unauthorized</h1></body></html>',
			);
		}

		const redirects = number('redirects', 0);
		const redirectStatus = number('redirectStatus', 302);
		if (redirects > 0) {
			const next = new URL(url.toString());
			next.searchParams.set('redirects', String(redirects - 1));
			return answer(redirectStatus, { location: `${next.pathname}${next.search}` });
		}
		const redirectTo = query.get('redirectTo');
		if (redirectTo !== null) return answer(redirectStatus, { location: redirectTo });

		const status = number('status', 200);
		if (status !== 200) {
			return answer(
				status,
				{ 'content-type': 'text/html' },
				`<html><head><title>${status}</title></head><body><h1>Error ${status}</h1></body></html>`,
			);
		}

		const size = number('size', 1024);
		if (size > MAX_SIZE)
			return answer(413, { 'content-type': 'text/plain' }, `size over ${MAX_SIZE}`);
		const headers: Record<string, string> = {};
		const type = query.get('type') ?? 'application/octet-stream';
		if (type !== 'none') headers['content-type'] = type;
		const disposition = query.get('disposition');
		if (disposition !== null) headers['content-disposition'] = disposition;
		const declared = query.get('declare');
		if (declared !== null) headers['content-length'] = String(number('declare', size));
		else if (query.get('chunked') !== '1') headers['content-length'] = String(size);
		entry.status = 200;
		res.writeHead(200, headers);
		if (req.method === 'HEAD') {
			res.end();
			return;
		}

		const seed = number('seed', 1);
		const stallAfter = query.has('stallAfter') ? number('stallAfter', 0) : undefined;
		const chunkDelayMs = number('chunkDelayMs', 0);
		for (let offset = 0; offset < size; offset += PIECE) {
			if (res.destroyed) return;
			let length = Math.min(PIECE, size - offset);
			if (stallAfter !== undefined && offset + length > stallAfter)
				length = Math.max(0, stallAfter - offset);
			if (length > 0) {
				entry.bytesSent += length;
				if (!res.write(fileBytes(length, seed, offset))) await drained(res);
			}
			if (stallAfter !== undefined && offset + PIECE >= stallAfter) return; // never ends; the client gives up
			if (chunkDelayMs > 0) await this.wait(chunkDelayMs);
		}
		// A lying Content-Length: the connection is closed after the bytes we have.
		if (declared !== null && number('declare', size) !== size) {
			res.destroy();
			return;
		}
		res.end();
	}

	private async wait(ms: number): Promise<void> {
		if (ms <= 0) return;
		await new Promise<void>((resolve) => {
			const timer = setTimeout(() => {
				this.timers.delete(timer);
				resolve();
			}, ms);
			this.timers.add(timer);
		});
	}
}
