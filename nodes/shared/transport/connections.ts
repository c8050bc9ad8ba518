import type { Dispatcher } from 'undici';

import { environment } from '../environment';
import { onFirstUse } from '../onFirstUse';

/** undici (about 60 ms and 4 MB of a start): loaded by the first request, not when n8n loads the node. */
const undici = onFirstUse(
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use (onFirstUse.ts)
	() => require('undici') as typeof import('undici'),
);

/**
 * The connection pools: one undici Agent (a keep-alive Pool per origin) per TLS setting and
 * proxy environment, shared by every credential, node and execution of the process.
 *
 * - At most `MAX_CONNECTIONS_PER_ORIGIN` sockets to one origin, whatever the parallelism of the
 *   nodes and executions running at once: further requests wait in the pool's queue.
 * - `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` (and their lower-case forms) are honoured as n8n's
 *   own HTTP helpers honour them (undici's EnvHttpProxyAgent: a CONNECT tunnel through the
 *   proxy, direct for hosts in NO_PROXY). A run's client reads them when it first sends
 *   (ApiClient's `pool`, not for every request); a change of them makes a new pool.
 */
export const MAX_CONNECTIONS_PER_ORIGIN = 64;

const PROXY_VARIABLES = [
	'HTTPS_PROXY',
	'https_proxy',
	'HTTP_PROXY',
	'http_proxy',
	'NO_PROXY',
	'no_proxy',
] as const;

const agents = new Map<string, Dispatcher>();
/** How many times `closeConnections` closed every pool: a pool kept from before is closed. */
let poolsClosed = 0;

/** The `closeConnections` count now (a holder of a pool checks it before using the pool again). */
export function poolGeneration(): number {
	return poolsClosed;
}

export interface PoolSettings {
	readonly allowUnauthorizedCerts: boolean;
	/** Bound on connecting (TCP and TLS), in ms. */
	readonly connectTimeoutMs: number;
}

/** The proxy variables as they are now (a change of them calls for new pools). */
function proxyEnvironment(): string {
	return PROXY_VARIABLES.map((name) => environment()[name] ?? '').join('\n');
}

/** Whether a proxy is set (then undici's EnvHttpProxyAgent routes each request, NO_PROXY honoured). */
function usesProxy(): boolean {
	return PROXY_VARIABLES.slice(0, 4).some((name) => Boolean(environment()[name]));
}

/** The pool for these settings under the current proxy environment. */
export function poolFor(settings: PoolSettings): Dispatcher {
	const key = `${settings.allowUnauthorizedCerts}|${settings.connectTimeoutMs}|${proxyEnvironment()}`;
	let agent = agents.get(key);
	if (!agent) {
		const tls = { rejectUnauthorized: !settings.allowUnauthorizedCerts };
		const options = {
			keepAliveTimeout: 10_000,
			keepAliveMaxTimeout: 60_000,
			connections: MAX_CONNECTIONS_PER_ORIGIN,
			connect: { ...tls, timeout: settings.connectTimeoutMs },
		};
		// Through a proxy the connection to the service is TLS inside the tunnel: same rule for its certificate.
		agent = usesProxy()
			? new (undici().EnvHttpProxyAgent)({ ...options, requestTls: tls })
			: new (undici().Agent)(options);
		agents.set(key, agent);
	}
	return agent;
}

/** Closes the pooled connections (tests and short-lived scripts; n8n never needs to). */
export async function closeConnections(): Promise<void> {
	poolsClosed++;
	const closing = [...agents.values()].map(async (agent) => await agent.close());
	agents.clear();
	await Promise.all(closing);
}
