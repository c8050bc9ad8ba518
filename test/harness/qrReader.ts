/** Reading a QR code back out of a PNG (no n8n imports: the real-n8n editor test uses it too). */
import QRCode from 'qrcode';

// pngjs comes with qrcode (which renders through it) and has no bundled types; this is all we use.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { PNG } = require('pngjs') as {
	PNG: { sync: { read(png: Buffer): { width: number; height: number; data: Buffer } } };
};

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
