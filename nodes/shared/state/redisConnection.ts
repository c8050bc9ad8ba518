import type { Cluster, Redis, RedisOptions } from 'ioredis';

import { envSetting, environment } from '../environment';

// n8n's own queue Redis, from its settings, under this package's key prefix. Unlike n8n's client it
// gives up quickly: a node fails closed (nothing is sent unprotected) instead of hanging, and it
// never ends the process. ioredis loads only here, so only in queue mode.

const COMMAND_TIMEOUT_MS = 5_000;

let current: { settings: string; client: Promise<Redis | Cluster> } | undefined;
/** What a command that gave up waiting is about. */
let lastConnectionError: string | undefined;

export interface QueueRedisSettings {
	host: string;
	port: number;
	db: number;
	username: string;
	password: string;
	tls: boolean;
	tlsServerName: string;
	tlsValidateCertificate: boolean;
	/** When set, a cluster client; host and port are then ignored, as by n8n. */
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

export function redisFailure(error: unknown): string {
	const message = error instanceof Error ? error.message : String(error);
	return /max retries per request/i.test(message) && lastConnectionError
		? lastConnectionError
		: message;
}

export async function closeQueueRedis(): Promise<void> {
	const client = current?.client;
	current = undefined;
	if (client) (await client).disconnect();
}
