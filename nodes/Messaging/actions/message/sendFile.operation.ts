import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import {
	base64ByteLength,
	fileIdentity,
	isMimeType,
	looksLikeCleanBase64,
	parseBase64Text,
} from '../../../shared/dataUri';
import { shown } from '../../../shared/errors';
import type { ItemCall } from '../../../shared/execution/router';
import { showFor } from '../../../shared/properties';
import { textParameter, textValue } from '../../../shared/execution/operationRun';
import { endpoints, type DataUriParam } from '../../../shared/transport';
import type { MessagingRun } from '../../run';
import { phoneProperty, recipientPhone } from '../../helpers/recipient';
import {
	downloadToSend,
	readUrlSource,
	urlIdentity,
	urlSourceProperties,
} from '../../helpers/download';
import { base64Digest, streamDigest } from '../../helpers/idempotency';

const show = showFor('message', 'sendFile');
const showForSource = (source: FileSource) => ({ show: { ...show.show, fileSource: [source] } });

type FileSource = 'binary' | 'base64' | 'url';

// A multiple of 3: each chunk of a file on disk base64-encodes on its own, without a copy.
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

/** The file as the send writes it; a download knows its size only once it has streamed. */
interface FileToSend {
	body: DataUriParam;
	fileName: string;
	readonly byteLength: number | undefined;
	url?: string;
	discard?: () => void;
}

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	run: MessagingRun,
): Promise<ItemCall> {
	const phone = recipientPhone(run, itemIndex);
	const source = run.parameter('fileSource', itemIndex, 'binary') as FileSource;
	const given = givenIdentity(run, itemIndex);
	const file =
		source === 'url'
			? fileFromUrl(this, run, itemIndex, given)
			: source === 'base64'
				? fileFromBase64Text(run, itemIndex, given)
				: await fileFromBinaryField(this, run, itemIndex, given);
	const caption = textParameter(run, itemIndex, 'caption', 'Caption');
	const { version } = run.options(itemIndex);
	await run.sender.identify(itemIndex, {
		operation: 'sendFile',
		phone,
		content: async () => [...(await file.identity()), caption],
	});
	return async () => {
		let sending: FileToSend | undefined;
		return await run.sender.send(
			itemIndex,
			phone,
			async () => {
				sending = await file.open();
				try {
					return await run.client.call(
						endpoint,
						{ version, phone, body: sending.body, filename: sending.fileName, caption },
						{ signal: run.signal },
					);
				} finally {
					sending.discard?.();
				}
			},
			(sent) => {
				const { fileName, body, byteLength, url } = sending as FileToSend;
				return {
					...sent,
					fileName,
					mimeType: body.mimeType,
					fileSize: byteLength ?? null,
					...(url === undefined ? {} : { fileUrl: url }),
				};
			},
		);
	};
}

/** What makes the file this message's (Skip Repeats Within), and the file when its send starts. */
interface FileSourced {
	identity: () => unknown[] | Promise<unknown[]>;
	open: () => Promise<FileToSend>;
}

/** File Name and MIME Type as given in Additional Fields (empty ones left out). */
type FileIdentity = { fileName?: string; mimeType?: string };

/** A file at hand: its SHA-256 is read only when Skip Repeats Within is on. */
function fileAtHand(file: FileToSend, digest: () => Promise<string>): FileSourced {
	return { identity: async () => [await digest(), file.fileName], open: async () => file };
}

/**
 * File Source "URL": checked now, downloaded once the item has its usage-limit slot, with n8n's
 * own HTTP helper (its proxy settings and outbound policy apply). Its address stands for the file.
 */
function fileFromUrl(
	ctx: IExecuteFunctions,
	run: MessagingRun,
	itemIndex: number,
	given: FileIdentity,
): FileSourced {
	const { url, options } = readUrlSource(run, itemIndex);
	return {
		identity: () => ['url', urlIdentity(url), given.fileName ?? ''],
		open: async () =>
			await downloadToSend(
				async (request) => await ctx.helpers.httpRequest(request),
				url,
				{ ...options, signal: run.signal },
				given,
			),
	};
}

/** File Source "Base64 Text": the text checked and sliced, never decoded (the transport writes the base64 as it is). */
function fileFromBase64Text(
	run: MessagingRun,
	itemIndex: number,
	given: FileIdentity,
): FileSourced {
	const fix = 'Map a field holding the file as base64 text or a data URI';
	const text = textParameter(run, itemIndex, 'fileContent', 'File Content', `${fix}.`).trim();
	if (text === '') {
		const other = ', or choose "Binary Field" as File Source.';
		throw run.fail(itemIndex, 'File Content', 'is empty', fix + other);
	}
	const parsed = parseBase64Text(text);
	const give =
		'Give base64 text (A–Z, a–z, 0–9, +, /, = padding) or a data URI such as data:application/pdf;base64,JVBERi0…, or choose "Binary Field" as File Source.';
	if ('problem' in parsed) throw run.fail(itemIndex, 'File Content', parsed.problem, give);
	return fileFromBase64(parsed.base64, fileIdentity(given, parsed));
}

function fileFromBase64(base64: string, identity: { fileName: string; mimeType: string }) {
	return fileAtHand(
		{
			body: { kind: 'dataUri', mimeType: identity.mimeType, base64 },
			fileName: identity.fileName,
			byteLength: base64ByteLength(base64),
		},
		async () => base64Digest(base64),
	);
}

/**
 * File Source "Binary Field": in memory, `data` is already base64 and is sent as it is; in
 * filesystem or object-store mode the file stays where n8n keeps it and is streamed into the body.
 */
async function fileFromBinaryField(
	ctx: IExecuteFunctions,
	run: MessagingRun,
	itemIndex: number,
	given: FileIdentity,
): Promise<FileSourced> {
	const field = 'Input Binary Field';
	const fail = (problem: string, fix: string) => run.fail(itemIndex, field, problem, fix);
	const value = run.parameter('binaryPropertyName', itemIndex, 'data');
	const name = textValue(run, itemIndex, value, field).trim();
	if (!name)
		throw fail('is empty', 'Enter the name of the binary field that holds the file, e.g. data.');
	const binaries = ctx.getInputData()[itemIndex]?.binary ?? {};
	const binary = binaries[name];
	if (!binary) {
		const present = Object.keys(binaries);
		throw fail(
			`names a binary field the item does not have: "${name}" (${present.length ? `it has: ${present.map((p) => `"${p}"`).join(', ')}` : 'the item has no binary data'})`,
			present.length
				? `Use one of the item's binary fields, e.g. "${present[0]}".`
				: 'Put a node that produces a file (Read Files, HTTP Request with a file response, an email trigger) before this one, or choose "Base64 Text" as File Source.',
		);
	}
	const emptyFile = () =>
		fail(
			`holds an empty file (field "${name}", 0 bytes)`,
			'Check the node that produced the file: the gateway cannot send a file without content.',
		);
	if (!binary.id) {
		const base64 = binary.data;
		if (typeof base64 !== 'string' || base64.length === 0) throw emptyFile();
		if (!looksLikeCleanBase64(base64))
			throw fail(
				`holds binary data that is not base64 (field "${name}")`,
				'The binary was built by hand with text that is not base64. Create it with a node that reads or converts files (e.g. Convert to File), or send the text with File Source "Base64 Text".',
			);
		return fileFromBase64(base64, fileIdentity(given, binary));
	}
	const id = binary.id;
	const metadata = await ctx.helpers.getBinaryMetadata(id);
	const byteLength = Number(metadata.fileSize ?? binary.bytes);
	if (!(byteLength > 0)) throw emptyFile();
	const { fileName, mimeType } = fileIdentity(given, {
		fileName: metadata.fileName ?? binary.fileName,
		mimeType: metadata.mimeType ?? binary.mimeType,
	});
	const stream = async () => await ctx.helpers.getBinaryStream(id, STREAM_CHUNK);
	return fileAtHand(
		{ body: { kind: 'dataUri', mimeType, byteLength, open: stream }, fileName, byteLength },
		async () => await streamDigest(await stream()),
	);
}

/** File Name and MIME Type as the user gave them (Additional Fields), the type checked. */
function givenIdentity(run: MessagingRun, itemIndex: number): FileIdentity {
	const fields = (run.parameter('fileFields', itemIndex, {}) ?? {}) as Record<string, unknown>;
	const fileName = textValue(run, itemIndex, fields.fileName, 'File Name') || undefined;
	const mimeType = textValue(run, itemIndex, fields.mimeType, 'MIME Type') || undefined;
	if (mimeType?.trim() && !isMimeType(mimeType.trim())) {
		const fix = 'Write it as type/subtype, e.g. application/pdf or image/png, or leave it empty.';
		throw run.fail(itemIndex, 'MIME Type', `is not a mime type: ${shown(mimeType)}`, fix);
	}
	return { fileName, mimeType };
}
