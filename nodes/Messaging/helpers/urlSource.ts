import type { IDisplayOptions, INodeProperties } from 'n8n-workflow';

import { inputError } from '../../shared/errors';
import { MAX_TIMER_MS } from '../../shared/clock';
import { redactUrl, urlProblem, type UrlFileOptions } from './download';
import type { MessagingRun } from '../parameters';

/** Send File with File Source "URL": the parameters and their checks, before any request. */

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
						"Whether to refuse URLs whose host, or a redirect's, is or resolves to a loopback, private or link-local address, e.g. when the URL comes from outside the workflow. n8n's own outbound policy, when the instance sets one, applies either way.",
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
	options: UrlFileOptions;
}

const MIB = 1024 * 1024;
/** A download may take Download Timeout plus this much per MiB of Max File Size in all. */
const DEADLINE_MS_PER_MIB = 1000;

const downloadOptionNames = {
	maxSizeMb: 'Max File Size (MB)',
	timeoutSeconds: 'Download Timeout (Seconds)',
	maxRedirects: 'Max Redirects',
};

/** The item's URL and download settings, checked; no request is made. */
export function readUrlSource(run: MessagingRun, itemIndex: number): UrlSource {
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
		// Shown without credentials, query values and fragment, when it parses at all.
		const shown = URL.canParse(url) ? redactUrl(url) : url.slice(0, 200);
		throw inputError(
			run.node,
			itemIndex,
			'File URL',
			`${problem}: "${shown}"`,
			'Write the full address, starting with https:// (or http://).',
		);
	}
	const raw = (run.parameter('downloadOptions', itemIndex, {}) ?? {}) as Record<string, unknown>;
	const number = (name: keyof typeof downloadOptionNames, fallback: number, min: number) => {
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
	const maxBytes = Math.floor(number('maxSizeMb', DEFAULT_MAX_FILE_SIZE_MB, 0.001) * MIB);
	// Timers take at most 2^31 - 1 ms (about 24.8 days); a longer one would fire at once.
	const timeoutMs = Math.min(
		Math.round(number('timeoutSeconds', DEFAULT_DOWNLOAD_TIMEOUT_SECONDS, 1) * 1000),
		MAX_TIMER_MS,
	);
	const deadlineMs = timeoutMs + Math.ceil((maxBytes / MIB) * DEADLINE_MS_PER_MIB);
	const block = raw.blockPrivateAddresses;
	const show = raw.showFullUrl;
	return {
		url,
		options: {
			maxBytes,
			timeoutMs,
			deadlineMs: Math.min(deadlineMs, MAX_TIMER_MS),
			maxRedirects: Math.floor(number('maxRedirects', DEFAULT_MAX_REDIRECTS, 0)),
			// A guard fails closed: only false, "false" or no value turn it off.
			blockPrivateAddresses:
				!(block === undefined || block === null || block === false || block === '') &&
				!(typeof block === 'string' && block.trim().toLowerCase() === 'false'),
			// A switch that shows more is on only for true and "true".
			showFullUrl:
				show === true || (typeof show === 'string' && show.trim().toLowerCase() === 'true'),
		},
	};
}
