import type { Cluster, Redis } from 'ioredis';

import { inQueueMode } from './queueMode';
import { commandLine, environment } from '../environment';
import {
	describeQueueRedis,
	queueRedis,
	queueRedisSettings,
	redisFailure,
	type QueueRedisSettings,
} from './redisConnection';

/**
 * Where state that outlives one execution is shared, decided per process from n8n's own mode:
 *
 * - **memory** (regular mode): every execution runs in this one n8n process, so its memory is
 *   exact and atomic (one event loop); each purpose keeps its own `MemoryTable`.
 * - **redis** (queue mode: main, workers and webhook processes): n8n's queue Redis, the one
 *   place all of them reach; atomic through Lua scripts. Keys carry this package's own prefix,
 *   never n8n's (`bull`, `n8n`).
 *
 * What is kept is each user's business (outbound claims in Messaging, repeated deliveries in the
 * trigger, account caps): they bring their memory tables and their scripts; this file only says
 * which of the two applies and runs scripts.
 */

export type SharedState = ProcessMemory | QueueRedisState;

export interface ProcessMemory {
	readonly kind: 'memory';
	readonly where: string;
}

const PROCESS_MEMORY: ProcessMemory = { kind: 'memory', where: "this n8n process's memory" };

/** Memory in regular mode, n8n's queue Redis in queue mode (read at each call: cheap, and tests switch). */
export function sharedState(
	env: NodeJS.ProcessEnv = environment(),
	argv: readonly string[] = commandLine(),
): SharedState {
	return inQueueMode(env, argv) ? new QueueRedisState(env) : PROCESS_MEMORY;
}

/** A Lua script of a feature, run atomically by Redis (sent once per client, then by its SHA). */
export interface RedisScript {
	/** A command name, unique in the package. */
	readonly name: string;
	/** How many of the arguments are keys; omitted when it varies (then every call says). */
	readonly keys?: number;
	readonly lua: string;
}

/** n8n's queue Redis could not be used: the caller fails closed (sends nothing unprotected). */
export class SharedStateUnavailable extends Error {
	override readonly name = 'SharedStateUnavailable';
}

const NAMESPACE = 'n8n-nodes-messaging-rate';

export class QueueRedisState {
	readonly kind = 'redis';
	private readonly settings: QueueRedisSettings;

	constructor(env: NodeJS.ProcessEnv = environment()) {
		this.settings = queueRedisSettings(env);
	}

	get where(): string {
		return `n8n's queue Redis (${describeQueueRedis(this.settings)})`;
	}

	/**
	 * A key of `scope` (e.g. one workflow's node): every key of a scope has the same hash tag, so
	 * one script may touch several of them on a Redis cluster too.
	 */
	key(scope: string, ...parts: string[]): string {
		return [`${NAMESPACE}:{${scope}}`, ...parts].join(':');
	}

	/** Runs `script`; any failure (unreachable, timeout, refused) is `SharedStateUnavailable`. */
	async run(script: RedisScript, keys: string[], args: Array<string | number>): Promise<unknown> {
		// Shared state knows no n8n node: its callers fail their items (or answer the request) with it.
		const call = async () => {
			const client = await queueRedis(this.settings);
			const command = scriptCommand(client, script);
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

const defined = new WeakMap<Redis | Cluster, Set<string>>();

function scriptCommand(client: Redis | Cluster, script: RedisScript): ScriptCommand {
	let names = defined.get(client);
	if (!names) {
		names = new Set();
		defined.set(client, names);
	}
	if (!names.has(script.name)) {
		client.defineCommand(script.name, { numberOfKeys: script.keys, lua: script.lua });
		names.add(script.name);
	}
	const command = (client as unknown as Record<string, ScriptCommand>)[script.name];
	return command.bind(client);
}
