import type {
	ICredentialDataDecryptedObject,
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	INodeCredentialTestResult,
} from 'n8n-workflow';

import {
	ApiClient,
	ApiError,
	CredentialError,
	TokenCache,
	endpoints,
	parseCredentials,
	tokenEndpoint,
	type RetryPolicy,
	type StoredCredentials,
} from './transport';
import { readSessionAnswer, type SessionAnswer } from './gateway';

// Every failure a user can cause says what to change in the credential.

/** The user is waiting on the button: a retry would only delay the same answer. */
const ONE_ATTEMPT: RetryPolicy = {
	maxRetries: 0,
	baseDelayMs: 0,
	maxDelayMs: 0,
	maxRetryAfterSeconds: 0,
};

/** The credential's Test button, for every node (n8n finds it by this name). */
export async function messagingRateApiTest(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted<ICredentialDataDecryptedObject>,
): Promise<INodeCredentialTestResult> {
	return await testCredential(credential.data ?? {});
}

async function testCredential(stored: StoredCredentials): Promise<INodeCredentialTestResult> {
	let baseUrl: URL | undefined;
	try {
		const credentials = parseCredentials(stored);
		baseUrl = new URL(credentials.baseUrl);
		const apiPath = /\/api(\/|$)/i.exec(baseUrl.pathname);
		if (apiPath) {
			const address = `${baseUrl.origin}${baseUrl.pathname.slice(0, apiPath.index)}`;
			return failed(
				`Base URL contains the API's path ("${baseUrl.pathname}"): remove it and keep only the gateway's address, e.g. ${address}.`,
			);
		}
		const client = new ApiClient(credentials, new TokenCache(), ONE_ATTEMPT);
		await client.call(endpoints.waProtected);
		// A credential for an account whose phone is not connected would fail at the first send.
		const session = await client.call(endpoints.status).then(readSessionAnswer, () => undefined);
		return sessionResult(session);
	} catch (error) {
		if (error instanceof CredentialError) return failed(error.message);
		if (error instanceof ApiError && baseUrl)
			return failed(explain(error, baseUrl, Number(stored.timeoutSeconds) || 30));
		return failed(
			`The test failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`,
		);
	}
}

function sessionResult(session: SessionAnswer | undefined): INodeCredentialTestResult {
	if (!session?.stated)
		return {
			status: 'OK',
			message:
				"Connection successful: a token was issued and accepted (the gateway did not say the WhatsApp session's state)",
		};
	if (session.connected)
		return {
			status: 'OK',
			message: 'Connection successful: a token was issued and accepted, and WhatsApp is connected',
		};
	// An Error: n8n shows an OK result as its own "Connection tested successfully", without this.
	const why =
		session.qrCode !== undefined || session.status.toLowerCase() === 'got qr code'
			? 'the gateway waits for a QR scan'
			: `logged out, status "${session.status.slice(0, 40)}"`;
	return failed(
		`These settings are right, but WhatsApp is not connected (${why}): run Messaging → Session → Get QR Code and scan the image with WhatsApp → Linked devices. Currency Rate works already.`,
	);
}

function failed(message: string): INodeCredentialTestResult {
	return { status: 'Error', message };
}

const TLS_NOT_SPOKEN = /wrong version number|packet length too long|unknown protocol|http request/i;
const CERTIFICATE_CODES =
	/^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|ERR_TLS_CERT_ALTNAME_INVALID|CERT_UNTRUSTED|CERT_SIGNATURE_FAILURE)$/;

function explain(error: ApiError, baseUrl: URL, timeoutSeconds: number): string {
	const where = baseUrl.host;
	const isLogin = Object.values(tokenEndpoint).some((endpoint) =>
		error.endpoint.includes(endpoint.path),
	);
	const said = error.serverMessage ? ` ("${error.serverMessage}")` : '';
	const code = error.causeCode ?? '';
	const https = baseUrl.protocol === 'https:';

	if (error.kind === 'timeout')
		return `No answer from ${where} within ${timeoutSeconds} s: check the port in Base URL, or raise "Request Timeout" if the gateway is slow.`;
	if (error.kind === 'network') {
		if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
			return `The host "${baseUrl.hostname}" was not found: check the spelling of Base URL.`;
		if (code === 'ECONNREFUSED')
			return `Nothing accepts connections at ${where}: check the host and port in Base URL, and that the gateway is running.`;
		if (
			code === 'EHOSTUNREACH' ||
			code === 'ENETUNREACH' ||
			code === 'UND_ERR_CONNECT_TIMEOUT' ||
			code === 'ETIMEDOUT'
		)
			return `${where} cannot be reached from n8n: check Base URL, and any firewall or proxy between n8n and the gateway.`;
		if (CERTIFICATE_CODES.test(code))
			return `The HTTPS certificate of ${where} is not trusted (${code}): fix the server's certificate, or turn on "Ignore SSL Issues" for a test server.`;
		if (
			https &&
			(code === 'EPROTO' || /^ERR_SSL_/.test(code) || TLS_NOT_SPOKEN.test(error.message))
		)
			return `${where} does not speak HTTPS: write http:// instead of https:// in Base URL (or check the port).`;
		if (!https)
			return `${where} closed the connection without answering: if the gateway uses HTTPS, write https:// instead of http:// in Base URL.`;
		return `The connection to ${where} failed (${code || 'no answer'}): check Base URL and that the gateway is running.`;
	}
	if (error.kind === 'http') {
		const status = error.httpStatus ?? 0;
		if (!https && /https/i.test(error.serverMessage ?? '') && status === 400)
			return `${where} expects HTTPS: write https:// instead of http:// in Base URL.`;
		if (status === 401 || status === 403)
			return isLogin
				? `The gateway refused the Client ID or Client Secret (HTTP ${status}): copy both again from your gateway account.`
				: `The gateway issued a token but then refused it (HTTP ${status}): check that this account may use the WhatsApp API.`;
		if (status === 404 || status === 405)
			return `Base URL does not lead to the gateway's API (HTTP ${status} at ${baseUrl.origin}${baseUrl.pathname.replace(/\/$/, '')}/api/…): use only the gateway's address, e.g. ${baseUrl.origin}.`;
		if (status === 429)
			return 'The gateway is limiting requests right now (HTTP 429): wait a minute and test again.';
		if (status >= 500)
			return `The gateway, or a proxy in front of it, is failing (HTTP ${status}${said}): try again later; if it lasts, ask the gateway's operator.`;
		return `The gateway answered HTTP ${status}${said}: check Base URL.`;
	}
	// The transport's "no token" error.
	if (error.kind === 'unexpected-answer' && /no token/.test(error.message))
		return 'The gateway answered the login without a token: check that Base URL points at the gateway and that the account is active.';
	if (error.kind === 'invalid-response') {
		if (/empty body/.test(error.message))
			return `${where} answered with an empty page, not the gateway's API: check Base URL.`;
		if (/^\s*[[{]/.test(error.serverMessage ?? ''))
			return "The gateway's answer was cut off or is not valid JSON: test again; if it lasts, a proxy in front of the gateway may be changing its answers.";
		const page = error.serverMessage ? ` (it shows "${error.serverMessage.slice(0, 80)}")` : '';
		return `Base URL answers with a web page or text, not the gateway's API${page}: use the gateway's address.`;
	}
	if (error.kind === 'rpc')
		return isLogin
			? `The gateway refused the Client ID or Client Secret${said}: copy both again from your gateway account (the secret is case-sensitive).`
			: `The gateway issued a token but refused it on the check${said}: check that this account may use the WhatsApp API.`;
	return `The test failed: ${error.message}`;
}
