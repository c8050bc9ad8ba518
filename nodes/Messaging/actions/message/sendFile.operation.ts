import type { IBinaryData, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import {
	base64ByteLength,
	fileIdentity,
	isMimeType,
	looksLikeCleanBase64,
	parseBase64Text,
} from '../../../shared/dataUri';
import { inputError } from '../../../shared/errors';
import { showFor, type ItemCall } from '../../../shared/execution/router';
import { textParameter, textValue } from '../../../shared/execution/operationRun';
import { endpoints, type DataUriParam } from '../../../shared/transport';
import { phoneProperty, recipientPhone, type MessagingRun } from '../../parameters';
import { readUrlSource, urlSourceProperties } from '../../helpers/urlSource';
import { downloadToSend, urlIdentity, type DownloadedFile } from '../../helpers/download';
import { base64Digest, streamDigest } from '../../helpers/idempotency';
import { identifySend, send } from '../../helpers/sending';

const show = showFor('message', 'sendFile');
const showForSource = (source: FileSource) => ({ show: { ...show.show, fileSource: [source] } });

type FileSource = 'binary' | 'base64' | 'url';

/**
 * Read size for files on disk: a multiple of 3, so every chunk base64-encodes on its own and
 * the encoder never has to join a chunk's leftover bytes to the next one (a copy per chunk).
 */
const STREAM_CHUNK = 3 * 64 * 1024;

export const description: INodeProperties[] = [
	{
		...phoneProperty('Recipient, with country code (or set "Default Country" in the options)'),
		displayOptions: show,
	},
	{
		displayName: 'File Source',
		name: 'fileSource',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Binary Field',
				value: 'binary',
				description:
					'A file of the input item, e.g. from Read Files, HTTP Request or an email attachment',
			},
			{
				name: 'Base64 Text',
				value: 'base64',
				description: 'Base64 text or a data URI (data:application/pdf;base64,…)',
			},
			{
				name: 'URL',
				value: 'url',
				description:
					'An http(s) address: the file is downloaded while it is sent, never held whole in memory',
			},
		],
		default: 'binary',
		displayOptions: show,
	},
	{
		displayName: 'Input Binary Field',
		name: 'binaryPropertyName',
		type: 'string',
		default: 'data',
		required: true,
		placeholder: 'data',
		hint: 'The name of the input binary field containing the file to be sent',
		displayOptions: showForSource('binary'),
	},
	{
		displayName: 'File Content',
		name: 'fileContent',
		type: 'string',
		typeOptions: { rows: 3 },
		default: '',
		required: true,
		placeholder: 'data:application/pdf;base64,JVBERi0xLjcK…',
		description:
			'The file as base64 text or as a base64 data URI; a data URI also gives the mime type',
		displayOptions: showForSource('base64'),
	},
	...urlSourceProperties(showForSource('url')),
	{
		displayName: 'Caption',
		name: 'caption',
		type: 'string',
		typeOptions: { rows: 2 },
		default: '',
		description: 'Text shown with the file (optional)',
		displayOptions: show,
	},
	{
		displayName: 'Additional Fields',
		name: 'fileFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		displayOptions: show,
		options: [
			{
				displayName: 'File Name',
				name: 'fileName',
				type: 'string',
				default: '',
				placeholder: 'invoice.pdf',
				description:
					"Name the recipient sees. Default: the binary file's name, else file.pdf, file.png … after the mime type.",
			},
			{
				displayName: 'MIME Type',
				name: 'mimeType',
				type: 'string',
				default: '',
				placeholder: 'application/pdf',
				description:
					"Type of the file. Default: the binary file's type or the data URI's, else guessed from the file name, else application/octet-stream.",
			},
		],
	},
];

export const endpoint = endpoints.sendFile;

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	run: MessagingRun,
): Promise<ItemCall> {
	const phone = recipientPhone(run, itemIndex);
	const source = run.parameter('fileSource', itemIndex, 'binary') as FileSource;
	if (source === 'url') return await sendFromUrl(this, run, itemIndex, phone);
	const given = givenIdentity(run, itemIndex);
	const file =
		source === 'base64'
			? fileFromBase64Text(run, itemIndex, given)
			: await fileFromBinaryField(this, run, itemIndex, given);
	const caption = textParameter(run, itemIndex, 'caption', 'Caption');
	const { version } = run.options(itemIndex);
	await identifySend(run, itemIndex, {
		operation: 'sendFile',
		phone,
		content: async () => [await file.digest(), file.fileName, caption],
	});
	return async () => {
		const sent = await send(
			run,
			itemIndex,
			phone,
			async () =>
				await run.client.call(
					endpoint,
					{ version, phone, body: file.body, filename: file.fileName, caption },
					{ signal: run.signal },
				),
		);
		return {
			json: {
				...sent,
				fileName: file.fileName,
				mimeType: file.body.mimeType,
				fileSize: file.byteLength,
			},
		};
	};
}

/**
 * File Source "URL": every parameter checked first (before any item's send), then, when the
 * item's turn comes, the download streamed into the send.
 */
async function sendFromUrl(
	ctx: IExecuteFunctions,
	run: MessagingRun,
	itemIndex: number,
	phone: string,
): Promise<ItemCall> {
	const given = givenIdentity(run, itemIndex);
	const source = readUrlSource(run, itemIndex);
	const caption = textParameter(run, itemIndex, 'caption', 'Caption');
	const { version } = run.options(itemIndex);
	// The file is unknown before its download: its address stands for it (urlIdentity).
	await identifySend(run, itemIndex, {
		operation: 'sendFile',
		phone,
		content: () => ['url', urlIdentity(source.url), given.fileName ?? '', caption],
	});
	return async () => {
		let downloaded: DownloadedFile | undefined;
		const sent = await send(run, itemIndex, phone, async () => {
			// Downloaded only once the item has its usage-limit slot.
			// n8n's own HTTP helper: n8n's proxy settings and outbound policy apply to the download.
			const file = await downloadToSend(
				async (request) => await ctx.helpers.httpRequest(request),
				source.url,
				{ ...source.options, signal: run.signal },
				given,
			);
			downloaded = file;
			try {
				return await run.client.call(
					endpoint,
					{ version, phone, body: file.body, filename: file.fileName, caption },
					{ signal: run.signal },
				);
			} finally {
				file.discard();
			}
		});
		const file = downloaded as DownloadedFile;
		return {
			json: {
				...sent,
				fileName: file.fileName,
				mimeType: file.body.mimeType,
				fileSize: file.byteLength ?? null,
				fileUrl: file.url,
			},
		};
	};
}

/** File Name and MIME Type as given in Additional Fields (empty ones left out). */
type FileIdentity = { fileName?: string; mimeType?: string };

interface FileToSend {
	body: DataUriParam;
	fileName: string;
	byteLength: number;
	/** SHA-256 of the file's bytes (for Skip Repeats Within; read only when it is on). */
	digest: () => Promise<string>;
}

/** File Source "Base64 Text": the text checked and sliced, never decoded (the transport writes the base64 as it is). */
function fileFromBase64Text(run: MessagingRun, itemIndex: number, given: FileIdentity): FileToSend {
	const node = run.node;
	const text = textParameter(
		run,
		itemIndex,
		'fileContent',
		'File Content',
		'Map a field holding the file as base64 text or a data URI.',
	);
	if (text.trim() === '') {
		throw inputError(
			node,
			itemIndex,
			'File Content',
			'is empty',
			'Map a field holding the file as base64 text or a data URI, or choose "Binary Field" as File Source.',
		);
	}
	const parsed = parseBase64Text(text.trim());
	if ('problem' in parsed) {
		throw inputError(
			node,
			itemIndex,
			'File Content',
			parsed.problem,
			'Give base64 text (A–Z, a–z, 0–9, +, /, = padding) or a data URI such as data:application/pdf;base64,JVBERi0…, or choose "Binary Field" as File Source.',
		);
	}
	const identity = fileIdentity(given, { fileName: parsed.fileName, mimeType: parsed.mimeType });
	return {
		body: { kind: 'dataUri', mimeType: identity.mimeType, base64: parsed.base64 },
		fileName: identity.fileName,
		byteLength: base64ByteLength(parsed.base64),
		digest: async () => base64Digest(parsed.base64),
	};
}

/** File Source "Binary Field": the item's binary, where n8n keeps it. */
async function fileFromBinaryField(
	ctx: IExecuteFunctions,
	run: MessagingRun,
	itemIndex: number,
	given: FileIdentity,
): Promise<FileToSend> {
	const binary = inputBinary(ctx, run, itemIndex);
	return binary.id
		? await fileFromStoredBinary(ctx, run, itemIndex, given, binary, binary.id)
		: fileFromBinaryInMemory(run, itemIndex, given, binary);
}

/** Filesystem or object-store mode: the file stays where n8n keeps it and is streamed into the body. */
async function fileFromStoredBinary(
	ctx: IExecuteFunctions,
	run: MessagingRun,
	itemIndex: number,
	given: FileIdentity,
	binary: IBinaryData,
	binaryId: string,
): Promise<FileToSend> {
	const metadata = await ctx.helpers.getBinaryMetadata(binaryId);
	const byteLength = Number(metadata.fileSize ?? binary.bytes);
	if (!(byteLength > 0)) throw emptyFile(run, itemIndex);
	const identity = fileIdentity(given, {
		fileName: metadata.fileName ?? binary.fileName,
		mimeType: metadata.mimeType ?? binary.mimeType,
	});
	return {
		body: {
			kind: 'dataUri',
			mimeType: identity.mimeType,
			byteLength,
			open: async () => await ctx.helpers.getBinaryStream(binaryId, STREAM_CHUNK),
		},
		fileName: identity.fileName,
		byteLength,
		digest: async () =>
			await streamDigest(await ctx.helpers.getBinaryStream(binaryId, STREAM_CHUNK)),
	};
}

/** In-memory mode: `data` is already base64 and is sent as it is, never decoded. */
function fileFromBinaryInMemory(
	run: MessagingRun,
	itemIndex: number,
	given: FileIdentity,
	binary: IBinaryData,
): FileToSend {
	const node = run.node;
	const base64 = binary.data;
	if (typeof base64 !== 'string' || base64.length === 0) throw emptyFile(run, itemIndex);
	if (!looksLikeCleanBase64(base64)) {
		throw inputError(
			node,
			itemIndex,
			'Input Binary Field',
			`holds binary data that is not base64 (field "${binaryPropertyName(run, itemIndex)}")`,
			'The binary was built by hand with text that is not base64. Create it with a node that reads or converts files (e.g. Convert to File), or send the text with File Source "Base64 Text".',
		);
	}
	const identity = fileIdentity(given, binary);
	return {
		body: { kind: 'dataUri', mimeType: identity.mimeType, base64 },
		fileName: identity.fileName,
		byteLength: base64ByteLength(base64),
		digest: async () => base64Digest(base64),
	};
}

/** File Name and MIME Type as the user gave them (Additional Fields), the type checked. */
function givenIdentity(run: MessagingRun, itemIndex: number): FileIdentity {
	const fields = (run.parameter('fileFields', itemIndex, {}) ?? {}) as {
		fileName?: unknown;
		mimeType?: unknown;
	};
	const given = {
		fileName: textValue(run, itemIndex, fields.fileName, 'File Name') || undefined,
		mimeType: textValue(run, itemIndex, fields.mimeType, 'MIME Type') || undefined,
	};
	if (given.mimeType?.trim() && !isMimeType(given.mimeType.trim())) {
		throw inputError(
			run.node,
			itemIndex,
			'MIME Type',
			`is not a mime type: "${given.mimeType}"`,
			'Write it as type/subtype, e.g. application/pdf or image/png, or leave it empty.',
		);
	}
	return given;
}

function binaryPropertyName(run: MessagingRun, itemIndex: number): string {
	return textValue(
		run,
		itemIndex,
		run.parameter('binaryPropertyName', itemIndex, 'data'),
		'Input Binary Field',
	).trim();
}

/** The item's binary field, or an error that lists the fields the item does have. */
function inputBinary(ctx: IExecuteFunctions, run: MessagingRun, itemIndex: number): IBinaryData {
	const name = binaryPropertyName(run, itemIndex);
	const node = run.node;
	if (!name) {
		throw inputError(
			node,
			itemIndex,
			'Input Binary Field',
			'is empty',
			'Enter the name of the binary field that holds the file, e.g. data.',
		);
	}
	const binaries = ctx.getInputData()[itemIndex]?.binary ?? {};
	const binary = binaries[name];
	if (!binary) {
		const present = Object.keys(binaries);
		throw inputError(
			node,
			itemIndex,
			'Input Binary Field',
			present.length
				? `names a binary field the item does not have: "${name}" (it has: ${present.map((p) => `"${p}"`).join(', ')})`
				: `names a binary field the item does not have: "${name}" (the item has no binary data)`,
			present.length
				? `Use one of the item's binary fields, e.g. "${present[0]}".`
				: 'Put a node that produces a file (Read Files, HTTP Request with a file response, an email trigger) before this one, or choose "Base64 Text" as File Source.',
		);
	}
	return binary;
}

function emptyFile(run: MessagingRun, itemIndex: number) {
	return inputError(
		run.node,
		itemIndex,
		'Input Binary Field',
		`holds an empty file (field "${binaryPropertyName(run, itemIndex)}", 0 bytes)`,
		'Check the node that produced the file: the gateway cannot send a file without content.',
	);
}
