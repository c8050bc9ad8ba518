/**
 * Shared by the Messaging engine tests: run the node against a sandbox, read what the sandbox
 * received, and read a QR code back out of a PNG.
 */
import type { IDataObject, INode, INodeExecutionData, INodeParameters } from 'n8n-workflow';
import QRCode from 'qrcode';

import type { RequestLogEntry, Sandbox } from '../../sandbox/types';
import { runWorkflow, sandboxCredential, singleNodeWorkflow, type EngineRun } from '../../dev/engine';

// pngjs comes with qrcode (which renders through it) and has no bundled types; this is all we use.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { PNG } = require('pngjs') as { PNG: { sync: { read(png: Buffer): { width: number; height: number; data: Buffer } } } };

export const SECRET = 'demo-secret';
export const CLIENT_ID = 'demo-client';
export const DEFAULT_VERSION = '16.0.1.3';
/** "+62 812-8877-6713" as people paste it, and as the API wants it. */
export const PHONE_PASTED = '+62 812-8877-6713';
export const PHONE = '6281288776713';

export async function runMessaging(
	sandbox: Sandbox,
	parameters: INodeParameters,
	items: Array<IDataObject | INodeExecutionData> = [{}],
	settings: Partial<INode> = {},
): Promise<EngineRun> {
	return await runWorkflow(singleNodeWorkflow('messaging', parameters, items, settings), sandboxCredential(sandbox.url));
}

/** Requests other than token requests, in the order they arrived. */
export function apiRequests(sandbox: Sandbox): RequestLogEntry[] {
	return sandbox
		.requests()
		.filter((entry) => entry.path !== '/api/wa/authentication')
		.sort((a, b) => a.seq - b.seq);
}

export function tokenRequests(sandbox: Sandbox): RequestLogEntry[] {
	return sandbox.requests().filter((entry) => entry.path === '/api/wa/authentication');
}

/** What a test asserts about one request: the wire facts, with the bearer as present/absent. */
export function wire(entry: RequestLogEntry): { method: string; path: string; bearer: boolean; params: unknown } {
	return { method: entry.method, path: entry.path, bearer: /^Bearer \S+$/.test(entry.authorization ?? ''), params: entry.params };
}

/**
 * Reads the QR matrix back out of a rendered PNG (any scale and quiet zone) and returns whether
 * it is exactly the matrix of `payload`: proof that scanning the image yields the payload.
 */
export function pngShowsQrOf(png: Buffer, payload: string): boolean {
	const image = PNG.sync.read(png);
	const dark = (x: number, y: number) => {
		const i = (image.width * y + x) << 2;
		return image.data[i] + image.data[i + 1] + image.data[i + 2] < 384;
	};
	// The top-left finder pattern starts at the first dark pixel of the diagonal.
	let edge = 0;
	while (edge < image.width && !dark(edge, edge)) edge++;
	// Any error-correction level the renderer may have chosen; each gives another matrix.
	return (['L', 'M', 'Q', 'H'] as const).some((level) => {
		const expected = QRCode.create(payload, { errorCorrectionLevel: level }).modules;
		const moduleSize = (image.width - 2 * edge) / expected.size;
		if (!(moduleSize >= 1)) return false;
		for (let row = 0; row < expected.size; row++) {
			for (let col = 0; col < expected.size; col++) {
				const x = Math.floor(edge + (col + 0.5) * moduleSize);
				const y = Math.floor(edge + (row + 0.5) * moduleSize);
				if (dark(x, y) !== Boolean(expected.get(row, col))) return false;
			}
		}
		return true;
	});
}
