import type { Cluster, Redis, RedisOptions } from 'ioredis';

import { envSetting, environment } from '../environment';

/**
 * The connection to the Redis that n8n's queue mode already runs, made from n8n's own settings
 * (`QUEUE_BULL_REDIS_*`, each also as `<NAME>_FILE`): the same server, database and credentials
 * as n8n's queue, with a key prefix of this package's own (`sharedState.ts`). No Redis of the
 * package's own, and none at all outside queue mode.
 *
 * ioredis is the client n8n itself uses (5.x); it is loaded only here, on first use, so a process
 * that is not in queue mode never loads it. Unlike n8n's own client, this one gives up quickly:
 * a command waits at most `COMMAND_TIMEOUT_MS` and is not retried across reconnections, so a node
 * fails (closed: nothing is sent unprotected) instead of hanging, and it never ends the process.
 */

/** Longest wait for one command (and for a connection) before the node gives up on Redis. */
const COMMAND_TIMEOUT_MS = 5_000;

/** One client per process (per connection settings: tests change them). */
let current: { settings: string; client: Promise<Redis | Cluster> } | undefined;
/** The client's last connection error (`connect ECONNREFUSED …`): what a failed command is about. */
let lastConnectionError: string | undefined;

/** n8n's queue Redis settings, as n8n reads them (`@n8n/config` scaling-mode config). */
export interface QueueRedisSettings {
	host: string;
	port: number;
	db: number;
	username: string;
	password: string;
	tls: boolean;
	tlsServerName: string;
	tlsValidateCertificate: boolean;
	/** `host:port` pairs; when set, a cluster client (host and port are then ignored, as by n8n). */
	clusterNodes: Array<{ host: string; port: number }>;
	dualStack: boolean;
}

export function queueRedisSettings(env: NodeJS.ProcessEnv = environment()): QueueRedisSettings {
	const text = (name: string, fallback = '') =>
		envSetting(env, `QUEUE_BULL_REDIS_${name}`) ?? fallback;
	const number = (name: string, fallback: number) => {
		const value = Number(text(name) || fallback);
		return Number.isFinite(value) ? value : fallback;
	};
	const flag = (name: string, fallback: boolean) => {
		const value = text(name).toLowerCase();
		return value === 'true' || value === '1'
			? true
			: value === 'false' || value === '0'
				? false
				: fallback;
	};
	return {
		host: text('HOST', 'localhost'),
		port: number('PORT', 6379),
		db: number('DB', 0),
		username: text('USERNAME'),
		password: text('PASSWORD'),
		tls: flag('TLS', false),
		tlsServerName: text('TLS_SERVERNAME'),
		tlsValidateCertificate: flag('TLS_VALIDATE_CERTIFICATE', true),
		clusterNodes: text('CLUSTER_NODES')
			.split(',')
			.map((pair) => pair.trim())
			.filter(Boolean)
			.map((pair) => {
				const [host, port] = pair.split(':');
				return { host, port: Number(port) || 6379 };
			}),
		dualStack: flag('DUALSTACK', false),
	};
}

/** Where the connection goes, for error messages: never the password. */
export function describeQueueRedis(settings: QueueRedisSettings): string {
	const where = settings.clusterNodes.length
		? `cluster ${settings.clusterNodes.map((n) => `${n.host}:${n.port}`).join(',')}`
		: `${settings.host}:${settings.port}`;
	return `${where}, database ${settings.db}`;
}

function clientOptions(settings: QueueRedisSettings): RedisOptions {
	const options: RedisOptions = {
		username: settings.username || undefined,
		password: settings.password || undefined,
		db: settings.db,
		lazyConnect: true,
		connectTimeout: COMMAND_TIMEOUT_MS,
		commandTimeout: COMMAND_TIMEOUT_MS,
		// A command fails after one failed reconnection instead of waiting for Redis forever.
		maxRetriesPerRequest: 1,
		// Keeps reconnecting in the background (n8n's own client would end the process instead).
		retryStrategy: (times) => Math.min(times * 200, 2_000),
	};
	if (settings.dualStack) options.family = 0;
	if (settings.tls)
		options.tls = {
			servername: settings.tlsServerName || undefined,
			rejectUnauthorized: settings.tlsValidateCertificate,
		};
	return options;
}

/** The process's client for n8n's queue Redis, created (and ioredis loaded) on first use. */
export async function queueRedis(
	settings: QueueRedisSettings = queueRedisSettings(),
): Promise<Redis | Cluster> {
	const key = JSON.stringify(settings);
	if (current?.settings !== key) {
		const previous = current?.client;
		current = { settings: key, client: connect(settings) };
		previous?.then((client) => client.disconnect()).catch(() => undefined);
	}
	return await current.client;
}

async function connect(settings: QueueRedisSettings): Promise<Redis | Cluster> {
	const { default: IORedis, Cluster: IOCluster } = await import('ioredis');
	const options = clientOptions(settings);
	const client = settings.clusterNodes.length
		? new IOCluster(settings.clusterNodes, {
				redisOptions: options,
				lazyConnect: true,
				clusterRetryStrategy: (times) => Math.min(times * 200, 2_000),
			})
		: new IORedis({ ...options, host: settings.host, port: settings.port });
	// Connection errors reach the commands that wait on them; unhandled, ioredis would print each.
	client.on('error', (error: Error) => {
		lastConnectionError = error.message;
	});
	client.on('ready', () => {
		lastConnectionError = undefined;
	});
	return client;
}

/** Why a command failed, in words: the connection's own error when the command gave up waiting for one. */
export function redisFailure(error: unknown): string {
	const message = error instanceof Error ? error.message : String(error);
	return /max retries per request/i.test(message) && lastConnectionError
		? lastConnectionError
		: message;
}

/** Closes the process's client (tests; a node never needs to). */
export async function closeQueueRedis(): Promise<void> {
	const client = current?.client;
	current = undefined;
	if (client) (await client).disconnect();
}
