// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use: start-up (CONTRIBUTING)
const qrEncoder = () => require('qrcode') as typeof import('qrcode');

// Medium error correction and a 4-module quiet zone: what phone cameras read best from a screen.
const QR_PNG = { type: 'png', errorCorrectionLevel: 'M', margin: 4, width: 400 } as const;
const IMAGE_DATA_URI = /^data:(image\/[\w.+-]+)(?:;[^;,]*)*;base64,/i;

/** The server's own image when it sends one as a data URI, else a PNG drawn from the code. */
export async function qrImage(qrCode: string) {
	const dataUri = IMAGE_DATA_URI.exec(qrCode.slice(0, 200));
	if (dataUri) {
		const mimeType = dataUri[1].toLowerCase();
		const extension =
			mimeType === 'image/svg+xml' ? 'svg' : mimeType.split('/')[1].replace('jpeg', 'jpg');
		const image = Buffer.from(qrCode.slice(dataUri[0].length), 'base64');
		return { image, mimeType, fileName: `qr-code.${extension}` };
	}
	const image = await qrEncoder().toBuffer(qrCode, QR_PNG);
	return { image, mimeType: 'image/png', fileName: 'qr-code.png' };
}
