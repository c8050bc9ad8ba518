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

// Regular mode runs every execution in this process, so its memory is exact and atomic; queue
// mode's processes all reach n8n's queue Redis, atomic through Lua scripts, under this package's
// own key prefix. Callers bring their own tables and scripts.

export type SharedState = ProcessMemory | QueueRedisState;

export interface ProcessMemory {
	readonly kind: 'memory';
	readonly where: string;
}

const PROCESS_MEMORY: ProcessMemory = { kind: 'memory', where: "this n8n process's memory" };

export function sharedState(
	env: NodeJS.ProcessEnv = environment(),
	argv: readonly string[] = commandLine(),
): SharedState {
	return inQueueMode(env, argv) ? new QueueRedisState(env) : PROCESS_MEMORY;
}

export interface RedisScript {
	readonly name: string;
	readonly keys?: number;
	readonly lua: string;
}

/** The caller fails closed: it sends nothing unprotected. */
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

	/** Every key of a scope has the same hash tag, so one script may touch several on a cluster. */
	key(scope: string, ...parts: string[]): string {
		return [`${NAMESPACE}:{${scope}}`, ...parts].join(':');
	}

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
