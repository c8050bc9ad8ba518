import { onFirstUse } from './onFirstUse';

const qrEncoder = onFirstUse(
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use (onFirstUse.ts)
	() => require('qrcode') as typeof import('qrcode'),
);

export interface QrImage {
	readonly image: Buffer;
	readonly mimeType: string;
	readonly fileName: string;
	readonly fromServer: boolean;
}

const IMAGE_DATA_URI = /^data:(image\/[\w.+-]+)(?:;[^;,]*)*;base64,/i;

export async function qrImage(qrCode: string): Promise<QrImage> {
	const dataUri = IMAGE_DATA_URI.exec(qrCode.slice(0, 200));
	if (dataUri) {
		const mimeType = dataUri[1].toLowerCase();
		const extension =
			mimeType === 'image/svg+xml' ? 'svg' : mimeType.split('/')[1].replace('jpeg', 'jpg');
		return {
			image: Buffer.from(qrCode.slice(dataUri[0].length), 'base64'),
			mimeType,
			fileName: `qr-code.${extension}`,
			fromServer: true,
		};
	}
	// Medium error correction and a 4-module quiet zone: what phone cameras read best from a screen.
	const image = await qrEncoder().toBuffer(qrCode, {
		type: 'png',
		errorCorrectionLevel: 'M',
		margin: 4,
		width: 400,
	});
	return { image, mimeType: 'image/png', fileName: 'qr-code.png', fromServer: false };
}
