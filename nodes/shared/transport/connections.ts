import type { buildConnector, Dispatcher } from 'undici';

import { environment } from '../environment';
import { onFirstUse } from '../onFirstUse';

const undici = onFirstUse(
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use (onFirstUse.ts)
	() => require('undici') as typeof import('undici'),
);

// One dispatcher per TLS setting and proxy environment, shared by the process, so the cap on
// sockets per origin holds whatever the parallelism.
const MAX_CONNECTIONS_PER_ORIGIN = 64;
const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'];

/** Request options that ask to be told when undici binds the request to a connected socket. */
export interface SentSignalling {
	readonly onSent?: () => void;
}

/** `writes` tells `onSent`; reads need not know (they are retried either way). */
export interface Dispatchers {
	readonly reads: Dispatcher;
	readonly writes: Dispatcher;
}

const dispatchers = new Map<string, Dispatchers>();

export function dispatchersFor(
	allowUnauthorizedCerts: boolean,
	connectTimeoutMs: number,
): Dispatchers {
	const env = environment();
	const proxied = PROXY_VARIABLES.some((name) => env[name]);
	const proxies = [...PROXY_VARIABLES, 'NO_PROXY', 'no_proxy'].map((name) => env[name] ?? '');
	const key = `${allowUnauthorizedCerts}|${connectTimeoutMs}|${proxies.join('\n')}`;
	let found = dispatchers.get(key);
	if (!found) {
		const tls = { rejectUnauthorized: !allowUnauthorizedCerts };
		const options = {
			keepAliveTimeout: 10_000,
			keepAliveMaxTimeout: 60_000,
			connections: MAX_CONNECTIONS_PER_ORIGIN,
			connect: { ...tls, timeout: connectTimeoutMs },
		};
		// Through a proxy the connection to the service is TLS inside the tunnel: same rule for it.
		const reads = proxied
			? new (undici().EnvHttpProxyAgent)({ ...options, requestTls: tls, factory: poolFailingFast })
			: new (undici().Agent)(options);
		found = { reads, writes: reads.compose(tellSent) };
		dispatchers.set(key, found);
	}
	return found;
}

// undici retries a connection that fails with a socket error at once and forever while a request
// waits, and a proxy that closes every connection fails every tunnel that way: tunnel errors are
// passed on as plain ones, so the waiting requests fail and the caller's retry rules decide.
function poolFailingFast(origin: string | URL, options: object): Dispatcher {
	const connect = (options as { connect?: unknown }).connect;
	if (typeof connect !== 'function') return new (undici().Pool)(origin, options);
	const tunnel = connect as buildConnector.connector;
	return new (undici().Pool)(origin, {
		...options,
		connect: (settings: buildConnector.Options, callback: buildConnector.Callback) =>
			tunnel(settings, (...args) => {
				const [error] = args;
				if (!error) return callback(...args);
				const code = (error as { code?: string }).code;
				const retried = code === 'UND_ERR_SOCKET' || code === 'UND_ERR_INFO';
				callback(
					Object.assign(new Error(`through the proxy (HTTP(S)_PROXY): ${error.message}`), {
						code: retried ? 'PROXY_CONNECTION_CLOSED' : code,
						cause: error,
					}),
					null,
				);
			}),
	});
}

// Until then nothing of the request has left this machine; error codes cannot tell (an ECONNRESET
// also follows a sent request), so a write's retry rests on this.
const tellSent: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) => {
	const onSent = (options as SentSignalling).onSent;
	if (!onSent) return dispatch(options, handler);
	return dispatch(options, {
		onRequestStart: (controller, context) => {
			onSent();
			handler.onRequestStart?.(controller, context);
		},
		onRequestUpgrade: (...args) => handler.onRequestUpgrade?.(...args),
		onResponseStart: (...args) => handler.onResponseStart?.(...args),
		onResponseData: (...args) => handler.onResponseData?.(...args),
		onResponseEnd: (...args) => handler.onResponseEnd?.(...args),
		onResponseError: (...args) => handler.onResponseError?.(...args),
	});
};
