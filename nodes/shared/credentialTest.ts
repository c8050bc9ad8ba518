import type {
	ICredentialDataDecryptedObject,
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	INodeCredentialTestResult,
} from 'n8n-workflow';

import { causeInWords, messageOf } from './errors';
import { readSessionAnswer, type SessionAnswer } from './gateway';
import {
	ApiClient,
	ApiError,
	CredentialError,
	DEFAULT_RETRY_POLICY,
	TokenCache,
	endpoints,
	parseCredentials,
	tokenEndpoint,
	type ApiCredentials,
	type RetryPolicy,
} from './transport';

/** The user is waiting on the button: a retry would only delay the same answer. */
const ONE_ATTEMPT: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxRetries: 0 };

/** The credential's Test button, for every node (n8n finds it by this name). */
export async function messagingRateApiTest(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted<ICredentialDataDecryptedObject>,
): Promise<INodeCredentialTestResult> {
	let credentials: ApiCredentials | undefined;
	try {
		credentials = parseCredentials(credential.data ?? {});
		const { origin, pathname } = new URL(credentials.baseUrl);
		const apiPath = /\/api(\/|$)/i.exec(pathname);
		if (apiPath)
			return failed(
				`Base URL contains the API's path ("${pathname}"): remove it and keep only the gateway's address, e.g. ${origin}${pathname.slice(0, apiPath.index)}.`,
			);
		const client = new ApiClient(credentials, new TokenCache(), ONE_ATTEMPT);
		await client.call(endpoints.waProtected);
		// A credential for an account whose phone is not connected would fail at the first send.
		const session = await client.call(endpoints.status).then(readSessionAnswer, () => undefined);
		return sessionResult(session);
	} catch (error) {
		if (error instanceof CredentialError) return failed(error.message);
		if (error instanceof ApiError && credentials) return failed(explain(error, credentials));
		return failed(`The test failed unexpectedly: ${messageOf(error)}`);
	}
}

function sessionResult(session: SessionAnswer | undefined): INodeCredentialTestResult {
	const accepted = 'Connection successful: a token was issued and accepted';
	const unsaid = `${accepted} (the gateway did not say the WhatsApp session's state)`;
	if (!session?.stated) return { status: 'OK', message: unsaid };
	if (session.connected) return { status: 'OK', message: `${accepted}, and WhatsApp is connected` };
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

// The commonest mistakes, each with its fix; anything else in the gateway's own words.
function explain(error: ApiError, { baseUrl, timeoutSeconds }: ApiCredentials): string {
	const { host, hostname, origin, pathname } = new URL(baseUrl);
	const { kind, httpStatus: status, serverMessage } = error;
	const code = error.causeCode ?? '';
	const login = Object.values(tokenEndpoint).some(({ path }) => error.endpoint.includes(path));
	if (login && (kind === 'rpc' || status === 401 || status === 403))
		return `The gateway refused the Client ID or Client Secret (${serverMessage ? `"${serverMessage}"` : `HTTP ${status}`}): copy both again from your gateway account (the secret is case-sensitive).`;
	if (kind === 'timeout')
		return `No answer from ${host} within ${timeoutSeconds} s: check the port in Base URL, or raise "Request Timeout" if the gateway is slow.`;
	if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
		return `The host "${hostname}" was not found: check the spelling of Base URL.`;
	if (/CERT|UNABLE_TO_VERIFY/.test(code))
		return `The HTTPS certificate of ${host} is not trusted (${code}): fix the server's certificate, or turn on "Ignore SSL Issues" for a test server.`;
	if (kind === 'network')
		return `${host} cannot be reached (${causeInWords(code) || 'no answer'}): check the host, the port and http:// or https:// in Base URL, and that the gateway is running.`;
	// A web page, not the API's JSON.
	const page = kind === 'invalid-response' && !/^\s*[[{]/.test(serverMessage ?? '{');
	if (status === 404 || status === 405 || page) {
		const seen = page
			? `it shows "${serverMessage?.slice(0, 80)}"`
			: `HTTP ${status} at ${origin}${pathname.replace(/\/$/, '')}/api/…`;
		return `Base URL does not lead to the gateway's API (${seen}): use only the gateway's address, e.g. ${origin}.`;
	}
	const said = error.message.replace(`${error.endpoint} failed: `, '');
	return `The gateway answered the test with an error (${said}): check Base URL and test again; if it lasts, ask the gateway's operator.`;
}
