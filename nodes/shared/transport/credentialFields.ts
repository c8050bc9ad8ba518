import { MAX_TIMER_MS } from '../clock';
import { DEFAULT_MAX_RESPONSE_MEGABYTES, type ApiCredentials } from './client';

export interface StoredCredentials {
	baseUrl?: unknown;
	clientId?: unknown;
	clientSecret?: unknown;
	bearerLifetimeMinutes?: unknown;
	timeoutSeconds?: unknown;
	ignoreSSLIssues?: unknown;
	/** The old names of Token Lifetime and Ignore SSL Issues: n8n keeps what was saved. */
	tokenLifetimeMinutes?: unknown;
	allowUnauthorizedCerts?: unknown;
	maxResponseMegabytes?: unknown;
}

const MAX_BASE_URL = 2048;
/** A longer one would not fit a timer and would fire at once. */
const MAX_TIMEOUT_SECONDS = Math.floor(MAX_TIMER_MS / 1000);
const USE_ADDRESS = "Use the service's address, e.g. https://gateway.example.com";

export class CredentialError extends Error {
	override readonly name = 'CredentialError';
}

export function parseCredentials(stored: StoredCredentials): ApiCredentials {
	const baseUrl = String(stored.baseUrl ?? '').trim();
	const refuse = (problem: string) => {
		throw new CredentialError(`Credential field ${problem}`);
	};
	if (baseUrl.length > MAX_BASE_URL)
		refuse(`"Base URL" is too long (${baseUrl.length} characters). ${USE_ADDRESS}`);
	if (!URL.canParse(baseUrl)) {
		// Quoted only when it cannot hold a password (user:pass@host) and is short enough to read.
		const quoted = baseUrl.includes('@') || baseUrl.length > 200 ? '' : ` ("${baseUrl}")`;
		refuse(`"Base URL" is not a valid URL${quoted}. ${USE_ADDRESS}`);
	}
	const url = new URL(baseUrl);
	if (url.username || url.password) {
		refuse(
			'"Base URL" must not contain a user name or password (user:pass@…): the service does not use them, and they would not be kept secret there. Remove them; the Client ID and Client Secret go in their own fields.',
		);
	}
	if (url.protocol !== 'http:' && url.protocol !== 'https:')
		refuse(`"Base URL" must start with http:// or https:// (got "${url.protocol}")`);
	if (url.search || url.hash) refuse('"Base URL" must not contain a query or fragment (?… or #…)');
	const clientId = String(stored.clientId ?? '').trim();
	const clientSecret = String(stored.clientSecret ?? '');
	if (!clientId) refuse('"Client ID" is empty. Enter the client key of your account.');
	if (!clientSecret) refuse('"Client Secret" is empty. Enter the client secret of your account.');

	const positive = (value: unknown, fallback: number, field: string, max = Infinity): number => {
		if (value === undefined || value === null || value === '') return fallback;
		const number = Number(value);
		const got = `got "${String(value).slice(0, 40)}"`;
		if (!Number.isFinite(number) || number <= 0)
			refuse(`"${field}" must be a number above 0 (${got})`);
		if (number > max)
			refuse(`"${field}" must be at most ${max} (about ${Math.floor(max / 86_400)} days; ${got})`);
		return number;
	};
	let end = url.pathname.length; // without trailing slashes (a loop: `/\/+$/` is quadratic)
	while (end > 0 && url.pathname[end - 1] === '/') end--;
	return {
		baseUrl: `${url.origin}${url.pathname.slice(0, end)}`,
		clientId,
		clientSecret,
		tokenLifetimeMinutes: positive(
			stored.bearerLifetimeMinutes ?? stored.tokenLifetimeMinutes,
			60,
			'Token Lifetime (Minutes)',
		),
		timeoutSeconds: positive(
			stored.timeoutSeconds,
			30,
			'Request Timeout (Seconds)',
			MAX_TIMEOUT_SECONDS,
		),
		allowUnauthorizedCerts: (stored.ignoreSSLIssues ?? stored.allowUnauthorizedCerts) === true,
		maxResponseMegabytes: positive(
			stored.maxResponseMegabytes,
			DEFAULT_MAX_RESPONSE_MEGABYTES,
			'Max Response Size (MB)',
		),
	};
}
