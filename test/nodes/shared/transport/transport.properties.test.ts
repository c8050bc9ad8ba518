/**
 * Properties of the transport's pure parts, over generated inputs (fast-check): whatever the
 * server answers, the parser gives a result or an ApiError, never another exception; a file
 * streamed as a data URI gives exactly the JSON a plain string would.
 */
import fc from 'fast-check';
import { Readable } from 'stream';

import { ApiError, endpoints } from '../../../../nodes/shared/transport';
import { buildBody, type ParamValue } from '../../../../nodes/shared/transport/endpoints';
import { parseEnvelope, Redactor } from '../../../../nodes/shared/transport/envelope';

async function collect(body: ReturnType<typeof buildBody>): Promise<Buffer> {
	const chunks: Buffer[] = [];
	for await (const chunk of body.chunks()) chunks.push(Buffer.from(chunk));
	return Buffer.concat(chunks);
}

const secret = new Redactor(['s3cr3t-value']);

describe('parseEnvelope', () => {
	const answers = fc.oneof(
		fc.string(),
		fc.json(),
		fc.jsonValue().map((v) => JSON.stringify({ jsonrpc: '2.0', id: null, result: v })),
		fc
			.record({
				code: fc.integer(),
				message: fc.string(),
				data: fc.option(fc.record({ name: fc.string(), message: fc.string() })),
			})
			.map((e) => JSON.stringify({ error: e })),
		fc.string().map((t) => `<html><head><title>${t}</title></head><body>${t}</body></html>`),
	);

	test('any status and body → a result or an ApiError naming the endpoint', () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 100, max: 599 }),
				answers,
				fc.constantFrom(...Object.values(endpoints)),
				(status, text, endpoint) => {
					try {
						parseEnvelope(endpoint, { status, text }, secret);
						return status < 400;
					} catch (error) {
						return (
							error instanceof ApiError &&
							error.message.startsWith(endpoint.label) &&
							!error.message.includes('s3cr3t-value')
						);
					}
				},
			),
			{ numRuns: 2000 },
		);
	});

	test('the secret never survives in the server text of an error', () => {
		fc.assert(
			fc.property(fc.string({ maxLength: 400 }), fc.string(), (before, after) => {
				const text = JSON.stringify({
					error: { code: 200, message: `${before}s3cr3t-value${after}` },
				});
				try {
					parseEnvelope(endpoints.limit, { status: 200, text }, secret);
					return false;
				} catch (error) {
					return !(error as Error).message.includes('s3cr3t-value');
				}
			}),
		);
	});
});

describe('buildBody', () => {
	test('a data URI param streamed from bytes or base64 equals the plain JSON body', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.uint8Array({ maxLength: 5000 }),
				fc.string(),
				fc.constantFrom('image/png', 'text/plain', 'application/pdf', 'application/x-"odd"'),
				fc.integer({ min: 1, max: 700 }),
				async (bytes, caption, mimeType, chunkSize) => {
					const content = Buffer.from(bytes);
					const expected = JSON.stringify({
						params: {
							phone: '1',
							body: `data:${mimeType};base64,${content.toString('base64')}`,
							caption,
						},
					});
					const chunks: Buffer[] = [];
					for (let i = 0; i < content.length; i += chunkSize)
						chunks.push(content.subarray(i, i + chunkSize));
					const fromStream: Record<string, ParamValue> = {
						phone: '1',
						body: {
							kind: 'dataUri',
							mimeType,
							open: () => Readable.from(chunks),
							byteLength: content.length,
						},
						caption,
					};
					const fromBase64: Record<string, ParamValue> = {
						phone: '1',
						body: { kind: 'dataUri', mimeType, base64: content.toString('base64') },
						caption,
					};
					for (const params of [fromStream, fromBase64]) {
						const body = buildBody(params);
						const bytesOut = await collect(body);
						if (bytesOut.toString() !== expected) return false;
						if (body.length !== bytesOut.length) return false;
					}
					return true;
				},
			),
			{ numRuns: 300 },
		);
	});
});
