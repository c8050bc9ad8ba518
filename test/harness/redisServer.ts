/**
 * A Redis of a test's (or bench's) own: Debian's `redis-server` on a free loopback port, no
 * persistence, data in a temporary folder; stopped by the caller. `useQueueMode()` points this
 * process's nodes at it the way n8n's queue mode does (`EXECUTIONS_MODE=queue` and
 * `QUEUE_BULL_REDIS_*`), for the tests of one file.
 */
import { spawn, spawnSync, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync } from 'fs';
import { createConnection, createServer } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';

import { closeQueueRedis } from '../../nodes/shared/store';

export interface RedisServer {
	port: number;
	/** Stops the server (its data is gone: no persistence). */
	stop(): Promise<void>;
	/** Starts it again on the same port (empty). */
	start(): Promise<void>;
	/** Stops it for good and removes its folder. */
	close(): Promise<void>;
	/** Runs one command through redis-cli and returns its raw output. */
	cli(...args: string[]): Promise<string>;
}

async function freePort(): Promise<number> {
	return await new Promise((resolve, reject) => {
		const server = createServer();
		server.on('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const address = server.address();
			server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
		});
	});
}

async function answers(port: number): Promise<boolean> {
	return await new Promise((resolve) => {
		const socket = createConnection({ host: '127.0.0.1', port });
		socket.setTimeout(500);
		socket.once('connect', () => socket.write('PING\r\n'));
		socket.once('data', (data) => {
			socket.destroy();
			resolve(data.toString().startsWith('+PONG'));
		});
		socket.once('error', () => resolve(false));
		socket.once('timeout', () => {
			socket.destroy();
			resolve(false);
		});
	});
}

/** A missing server is a clear failure, never a skip. */
function assertInstalled(): void {
	const found = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
	if (found.error)
		throw new Error(
			"redis-server is not installed: these tests need Debian's redis-server (apt-get install redis-server); .ci/run installs it",
		);
}

export async function startRedisServer(): Promise<RedisServer> {
	assertInstalled();
	const port = await freePort();
	const dir = mkdtempSync(join(tmpdir(), 'redis-test-'));
	let child: ChildProcess | undefined;
	const start = async () => {
		child = spawn(
			'redis-server',
			[
				'--port',
				String(port),
				'--bind',
				'127.0.0.1',
				'--save',
				'',
				'--appendonly',
				'no',
				'--dir',
				dir,
			],
			{ stdio: 'ignore' },
		);
		for (let i = 0; i < 100; i++) {
			if (await answers(port)) return;
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
		throw new Error(`redis-server did not answer on port ${port}`);
	};
	const stop = async () => {
		const running = child;
		child = undefined;
		if (!running || running.exitCode !== null) return;
		await new Promise<void>((resolve) => {
			running.once('exit', () => resolve());
			running.kill('SIGTERM');
		});
	};
	await start();
	return {
		port,
		start,
		stop,
		async close() {
			await stop();
			rmSync(dir, { recursive: true, force: true });
		},
		cli: async (...args) =>
			await new Promise((resolve, reject) => {
				const cli = spawn('redis-cli', ['-p', String(port), ...args]);
				let out = '';
				cli.stdout.on('data', (data: Buffer) => (out += data.toString()));
				cli.on('error', reject);
				cli.on('exit', () => resolve(out.trim()));
			}),
	};
}

/**
 * For the tests of one file: a Redis server, and this process in queue mode pointing at it (as
 * an n8n worker would be); everything restored after the file's last test.
 */
export function useQueueMode(): { redis(): RedisServer } {
	let server: RedisServer | undefined;
	const saved = { mode: process.env.EXECUTIONS_MODE, port: process.env.QUEUE_BULL_REDIS_PORT };
	beforeAll(async () => {
		server = await startRedisServer();
		process.env.EXECUTIONS_MODE = 'queue';
		process.env.QUEUE_BULL_REDIS_HOST = '127.0.0.1';
		process.env.QUEUE_BULL_REDIS_PORT = String(server.port);
	});
	beforeEach(async () => {
		await server?.cli('FLUSHALL');
	});
	afterAll(async () => {
		await closeQueueRedis();
		await server?.close();
		const restore = (name: string, value: string | undefined) => {
			if (value === undefined) delete process.env[name];
			else process.env[name] = value;
		};
		restore('EXECUTIONS_MODE', saved.mode);
		restore('QUEUE_BULL_REDIS_PORT', saved.port);
		delete process.env.QUEUE_BULL_REDIS_HOST;
	});
	return {
		redis() {
			if (!server) throw new Error('useQueueMode(): the server starts in beforeAll');
			return server;
		},
	};
}
