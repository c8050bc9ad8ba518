import type { Dispatcher } from 'undici';

import { environment } from '../environment';
import { onFirstUse } from '../onFirstUse';

const undici = onFirstUse(
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use (onFirstUse.ts)
	() => require('undici') as typeof import('undici'),
);

// One undici Agent per TLS setting and proxy environment, shared by the process, so the cap on
// sockets per origin holds whatever the parallelism.
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
/** A pool kept from before a `closeConnections` is closed: its holder checks this first. */
let poolsClosed = 0;

export function poolGeneration(): number {
	return poolsClosed;
}

export interface PoolSettings {
	readonly allowUnauthorizedCerts: boolean;
	readonly connectTimeoutMs: number;
}

function proxyEnvironment(): string {
	return PROXY_VARIABLES.map((name) => environment()[name] ?? '').join('\n');
}

function usesProxy(): boolean {
	return PROXY_VARIABLES.slice(0, 4).some((name) => Boolean(environment()[name]));
}

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

export async function closeConnections(): Promise<void> {
	poolsClosed++;
	const closing = [...agents.values()].map(async (agent) => await agent.close());
	agents.clear();
	await Promise.all(closing);
}
