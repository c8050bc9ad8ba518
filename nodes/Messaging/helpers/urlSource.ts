import type { IDisplayOptions, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { fileIdentity } from '../../shared/dataUri';
import { inputError } from '../../shared/errors';
import { MAX_TIMER_MS } from '../../shared/clock';
import type { DataUriParam } from '../../shared/transport';
import {
	openUrlFile,
	redactUrl,
	UrlFileError,
	urlProblem,
	type UrlFile,
	type UrlFileOptions,
} from './download';
import { n8nEgressFilter } from './egress';
import type { MessagingRun } from '../parameters';

/**
 * Send File with File Source "URL": the parameters, their checks (before any request), and the
 * file as a data-URI param whose content is downloaded while the request is written (never whole
 * in memory). The download's headers are read first: the mime type and the file name go into
 * the request before the content.
 */

const DEFAULT_MAX_FILE_SIZE_MB = 50;
const DEFAULT_DOWNLOAD_TIMEOUT_SECONDS = 60;
const DEFAULT_MAX_REDIRECTS = 5;

/** The URL field and the download's settings, shown when File Source is "URL". */
export function urlSourceProperties(show: IDisplayOptions): INodeProperties[] {
	return [
		{
			displayName: 'File URL',
			name: 'fileUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'https://example.com/files/invoice.pdf',
			description:
				'An http or https address the file is downloaded from while it is sent; user:password@ in it is sent as Basic authorization',
			displayOptions: show,
		},
		{
			displayName: 'Download Options',
			name: 'downloadOptions',
			type: 'collection',
			placeholder: 'Add option',
			default: {},
			displayOptions: show,
			options: [
				{
					displayName: 'Block Private Addresses',
					name: 'blockPrivateAddresses',
					type: 'boolean',
					default: false,
					description:
						"Whether to refuse URLs that lead (directly, through DNS or a redirect) to loopback, private or link-local addresses, e.g. when the URL comes from outside the workflow. n8n's own outbound policy, when the instance sets one, applies either way.",
				},
				{
					displayName: 'Download Timeout (Seconds)',
					name: 'timeoutSeconds',
					type: 'number',
					typeOptions: { minValue: 1 },
					default: DEFAULT_DOWNLOAD_TIMEOUT_SECONDS,
					description:
						'Longest wait for the file server to answer, and between two pieces of the file. The whole download may take this plus 1 second per MB of Max File Size.',
				},
				{
					displayName: 'Max File Size (MB)',
					name: 'maxSizeMb',
					type: 'number',
					typeOptions: { minValue: 0.001 },
					default: DEFAULT_MAX_FILE_SIZE_MB,
					description: 'A larger file is not sent: the item fails with an error naming the URL',
				},
				{
					displayName: 'Max Redirects',
					name: 'maxRedirects',
					type: 'number',
					typeOptions: { minValue: 0, maxValue: 20 },
					default: DEFAULT_MAX_REDIRECTS,
					description: 'How many redirects are followed (http and https only)',
				},
				{
					displayName: 'Show Full URL',
					name: 'showFullUrl',
					type: 'boolean',
					default: false,
					description:
						"Whether the output and errors show the URL's query values and fragment. They often hold credentials (signed links, tokens), so by default they are replaced by ***.",
				},
			],
		},
	];
}

export interface UrlSource {
	url: string;
	options: Omit<UrlFileOptions, 'signal'>;
}

/** A download may take Download Timeout plus this much per MiB of Max File Size in all. */
const DEADLINE_MS_PER_MIB = 1000;

/**
 * A switch that guards something: on for `true` and `"true"` (an expression's text), off for
 * `false`, `"false"`, or when not set; anything else it does not understand turns it on.
 */
function guardSwitch(value: unknown): boolean {
	if (value === undefined || value === null || value === false || value === '') return false;
	if (value === true) return true;
	const text = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
	return text !== 'false';
}

/** A switch that shows more: on only for `true` and `"true"`. */
function revealSwitch(value: unknown): boolean {
	return value === true || (typeof value === 'string' && value.trim().toLowerCase() === 'true');
}

/** The item's URL and download settings, checked; no request is made. */
export function readUrlSource(
	ctx: IExecuteFunctions,
	run: MessagingRun,
	itemIndex: number,
): UrlSource {
	const value = run.parameter('fileUrl', itemIndex, '');
	const url = typeof value === 'string' ? value.trim() : '';
	if (!url) {
		throw inputError(
			run.node,
			itemIndex,
			'File URL',
			'is empty',
			'Enter the http(s) address of the file, or map a field that holds it.',
		);
	}
	const problem = urlProblem(url);
	if (problem) {
		throw inputError(
			run.node,
			itemIndex,
			'File URL',
			`${problem}: "${shownInput(url)}"`,
			'Write the full address, starting with https:// (or http://).',
		);
	}
	const raw = (run.parameter('downloadOptions', itemIndex, {}) ?? {}) as Record<string, unknown>;
	const number = (name: string, fallback: number, min: number) => {
		const given = raw[name];
		if (given === undefined || given === '') return fallback;
		const parsed = Number(given);
		if (!Number.isFinite(parsed) || parsed < min) {
			throw inputError(
				run.node,
				itemIndex,
				downloadOptionNames[name],
				`must be a number of at least ${min}, not ${JSON.stringify(given)}`,
				'Correct it in Download Options, or remove it to use the default.',
			);
		}
		return parsed;
	};
	const maxBytes = Math.floor(number('maxSizeMb', DEFAULT_MAX_FILE_SIZE_MB, 0.001) * 1024 * 1024);
	// Timers take at most 2^31 - 1 ms (about 24.8 days); a longer one would fire at once.
	const timeoutMs = Math.min(
		Math.round(number('timeoutSeconds', DEFAULT_DOWNLOAD_TIMEOUT_SECONDS, 1) * 1000),
		MAX_TIMER_MS,
	);
	return {
		url,
		options: {
			maxBytes,
			timeoutMs,
			deadlineMs: Math.min(
				timeoutMs + Math.ceil((maxBytes / (1024 * 1024)) * DEADLINE_MS_PER_MIB),
				MAX_TIMER_MS,
			),
			maxRedirects: Math.floor(number('maxRedirects', DEFAULT_MAX_REDIRECTS, 0)),
			egress: {
				n8n: n8nEgressFilter(ctx),
				blockPrivateAddresses: guardSwitch(raw.blockPrivateAddresses),
			},
			showFullUrl: revealSwitch(raw.showFullUrl),
		},
	};
}

/** A URL the user gave, as an input error may quote it (credentials, query values and fragment hidden). */
function shownInput(url: string): string {
	try {
		new URL(url);
		return redactUrl(url);
	} catch {
		return url.length > 200 ? `${url.slice(0, 200)}…` : url;
	}
}

const downloadOptionNames: Record<string, string> = {
	maxSizeMb: 'Max File Size (MB)',
	timeoutSeconds: 'Download Timeout (Seconds)',
	maxRedirects: 'Max Redirects',
};

export interface DownloadedFile {
	body: DataUriParam;
	fileName: string;
	/** Bytes: announced by the server, else counted once the file was sent. */
	readonly byteLength?: number;
	/** The URL after redirects, credentials redacted. */
	url: string;
	/** Stops the download if the request never reads it (e.g. the token request failed). */
	discard(): void;
}

/**
 * Opens the download (headers only) and returns the file as the send's param. The first request
 * streams the opened body; a retry of the send (only when the gateway cannot have received it)
 * downloads the file again.
 */
export async function downloadToSend(
	source: UrlSource,
	given: { fileName?: string; mimeType?: string },
	signal?: AbortSignal,
): Promise<DownloadedFile> {
	const options = { ...source.options, signal };
	let first: UrlFile | undefined = await openUrlFile(source.url, options);
	const opened = first;
	const identity = fileIdentity(given, { fileName: opened.fileName, mimeType: opened.mimeType });
	let streamed = 0;
	async function* counted(body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
		streamed = 0;
		for await (const piece of body) {
			streamed += piece.length;
			yield piece;
		}
	}
	return {
		body: {
			kind: 'dataUri',
			mimeType: identity.mimeType,
			byteLength: opened.byteLength,
			maxByteLength: source.options.maxBytes,
			open: async () => {
				const file = first ?? (await openUrlFile(source.url, options));
				first = undefined;
				if (file.byteLength !== opened.byteLength) {
					file.discard();
					throw new UrlFileError(
						file.url,
						`the file changed between two attempts (${opened.byteLength ?? 'unknown'} bytes, then ${file.byteLength ?? 'unknown'})`,
					);
				}
				return counted(file.body);
			},
		},
		fileName: identity.fileName,
		get byteLength() {
			return opened.byteLength ?? (streamed > 0 ? streamed : undefined);
		},
		url: opened.url,
		discard: () => {
			first?.discard();
			first = undefined;
		},
	};
}
