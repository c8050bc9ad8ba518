import { readFileSync } from 'fs';
import type { Cluster, Redis, RedisOptions } from 'ioredis';

import { clock } from './clock';

// State shared between executions. Regular mode runs every execution in this process, so its memory
// is exact and atomic: bounded tables. Queue mode's processes all reach n8n's queue Redis, atomic
// through Lua scripts, under this package's own key prefix. Callers bring their tables and scripts.

// The one place that reads the process: no node API tells a node the queue mode or the proxy
// variables, and n8n's package scanner allows it only here.
export function environment(): NodeJS.ProcessEnv {
	return process.env;
}

/** `NAME`, else the file `NAME_FILE` names (Docker secrets), read as @n8n/config's readEnv does. */
function envSetting(env: NodeJS.ProcessEnv, name: string): string | undefined {
	const file = env[`${name}_FILE`];
	const trimmed = (env[name] ?? (file ? readFileSync(file, 'utf8') : undefined))?.trim();
	return trimmed && /^(['"]).*\1$/s.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
}

type SharedState = { readonly kind: 'memory'; readonly where: string } | QueueRedisState;

const PROCESS_MEMORY = { kind: 'memory', where: "this n8n process's memory" } as const;

// As n8n decides: `EXECUTIONS_MODE=queue`, or the process is `n8n worker` / `n8n webhook`, which
// force queue mode whatever the variable says.
export function sharedState(
	env = environment(),
	argv: readonly string[] = process.argv,
): SharedState {
	const [script = '', command = ''] = argv.slice(1);
	const queueMode =
		envSetting(env, 'EXECUTIONS_MODE') === 'queue' ||
		(script.split(/[\\/]/).pop() === 'n8n' && (command === 'worker' || command === 'webhook'));
	return queueMode ? new QueueRedisState(env) : PROCESS_MEMORY;
}

export type RedisScript = { readonly name: string; readonly keys?: number; readonly lua: string };

/** The caller fails closed: it sends nothing unprotected. */
export class SharedStateUnavailable extends Error {
	override readonly name = 'SharedStateUnavailable';
}

const NAMESPACE = 'n8n-nodes-messaging-rate';

export class QueueRedisState {
	readonly kind = 'redis';
	readonly settings: QueueRedisSettings;

	constructor(env: NodeJS.ProcessEnv) {
		this.settings = queueRedisSettings(env);
	}

	get where(): string {
		const { clusterNodes, host, port, db } = this.settings;
		const nodes = clusterNodes.map((node) => `${node.host}:${node.port}`);
		return `n8n's queue Redis (${nodes.length ? `cluster ${nodes.join(',')}` : `${host}:${port}`}, database ${db})`;
	}

	/** Every key of a scope has the same hash tag, so one script may touch several on a cluster. */
	key(scope: string, ...parts: string[]): string {
		return [`${NAMESPACE}:{${scope}}`, ...parts].join(':');
	}

	async run(script: RedisScript, keys: string[], args: Array<string | number>): Promise<unknown> {
		const call = async () => {
			const command = scriptCommand(await queueRedis(this.settings), script);
			return script.keys === undefined
				? await command(keys.length, ...keys, ...args)
				: await command(...keys, ...args);
		};
		return await call().catch((error: unknown) => {
			throw new SharedStateUnavailable(`${this.where} did not answer: ${redisFailure(error)}`);
		});
	}
}

type ScriptCommand = (...keysThenArgs: Array<string | number>) => Promise<unknown>;

/** ioredis defines a script as a method of the client, once per client. */
function scriptCommand(client: Redis | Cluster, script: RedisScript): ScriptCommand {
	const methods = client as unknown as Record<string, ScriptCommand | undefined>;
	if (!methods[script.name])
		client.defineCommand(script.name, { numberOfKeys: script.keys, lua: script.lua });
	return (methods[script.name] as ScriptCommand).bind(client);
}

// n8n's own queue Redis, from its settings. Unlike n8n's client it gives up quickly: a node fails
// closed (nothing is sent unprotected) instead of hanging, and it never ends the process. ioredis
// loads only here, so only in queue mode.

const COMMAND_TIMEOUT_MS = 5_000;

let current: { settings: string; client: Promise<Redis | Cluster> } | undefined;
/** What a command that gave up waiting is about. */
let lastConnectionError: string | undefined;

type QueueRedisSettings = ReturnType<typeof queueRedisSettings>;

function queueRedisSettings(env: NodeJS.ProcessEnv) {
	const text = (name: string, fallback = '') =>
		envSetting(env, `QUEUE_BULL_REDIS_${name}`) ?? fallback;
	const number = (name: string, fallback: number) => {
		const value = Number(text(name) || fallback);
		return Number.isFinite(value) ? value : fallback;
	};
	const flag = (name: string, fallback: boolean) => {
		const value = text(name).toLowerCase();
		return ['true', '1'].includes(value) || (fallback && !['false', '0'].includes(value));
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
		// When set, a cluster client; host and port are then ignored, as by n8n.
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

async function queueRedis(settings: QueueRedisSettings): Promise<Redis | Cluster> {
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
	const options: RedisOptions = {
		username: settings.username || undefined,
		password: settings.password || undefined,
		db: settings.db,
		family: settings.dualStack ? 0 : undefined,
		tls: settings.tls
			? {
					servername: settings.tlsServerName || undefined,
					rejectUnauthorized: settings.tlsValidateCertificate,
				}
			: undefined,
		lazyConnect: true,
		connectTimeout: COMMAND_TIMEOUT_MS,
		commandTimeout: COMMAND_TIMEOUT_MS,
		// A command fails after one failed reconnection instead of waiting for Redis forever.
		maxRetriesPerRequest: 1,
		// Keeps reconnecting in the background (n8n's own client would end the process instead).
		retryStrategy: (times) => Math.min(times * 200, 2_000),
	};
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

function redisFailure(error: unknown): string {
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

// Process memory

// One table per purpose, each with its own byte budget, so that one purpose cannot evict another's
// entries (a burst of test-event deliveries never pushes out an active trigger's memory).

// What V8 keeps per entry besides the key and value (the map's entry, the slot), measured with the
// heap after a full collection, rounded up: a budget is a bound on the heap, not an estimate.
const ENTRY_OVERHEAD_BYTES = 256;

/** Every table of this process. */
const tables = new Set<{ clear(): void }>();

// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use: start-up (CONTRIBUTING)
const lruCache = () => require('lru-cache') as typeof import('lru-cache');

/** lru-cache bounded in bytes, each entry expiring at its own time on the nodes' clock. */
export class MemoryTable<V extends NonNullable<unknown>> {
	/** What a restart of n8n does to this package's memory (the test harness restarts with it). */
	static forgetAll(): void {
		for (const table of tables) table.clear();
	}

	private entries: import('lru-cache').LRUCache<string, V> | undefined;
	/** Since when nothing set here was lost early: cleared or pushed out by the budget. */
	completeSince = clock.now();

	constructor(
		readonly budgetBytes: number,
		private readonly sizeOf: (value: V) => number,
	) {
		tables.add(this);
	}

	get(key: string): V | undefined {
		return this.cache().get(key);
	}

	/** `expiresAt` on the nodes' clock; Infinity: only the budget ends it. */
	set(key: string, value: V, expiresAt: number): void {
		const left = expiresAt - clock.now();
		// lru-cache keeps an entry while its age is at most its ttl: gone at `expiresAt` itself.
		if (left <= 1) this.cache().delete(key);
		else this.cache().set(key, value, { ttl: left === Infinity ? 0 : left - 1 });
	}

	delete(key: string): void {
		this.cache().delete(key);
	}

	size(): { entries: number; bytes: number } {
		return { entries: this.cache().size, bytes: this.cache().calculatedSize };
	}

	clear(): void {
		this.entries?.clear();
		this.completeSince = clock.now();
	}

	private cache() {
		this.entries ??= new (lruCache().LRUCache)<string, V>({
			maxSize: Math.min(this.budgetBytes, Number.MAX_SAFE_INTEGER),
			sizeCalculation: (value, key) => ENTRY_OVERHEAD_BYTES + 2 * key.length + this.sizeOf(value),
			perf: { now: () => clock.now() },
			ttlResolution: 0,
			dispose: (_value, _key, reason) => {
				if (reason === 'evict') this.completeSince = clock.now();
			},
		});
		return this.entries;
	}
}
