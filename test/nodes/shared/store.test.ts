/**
 * Where state shared between executions lives (nodes/shared/state/): queue mode read as n8n reads
 * it, and the connection to n8n's queue Redis made from n8n's own settings.
 */
import { mkdtempSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

import { QueueRedisState, sharedState } from '../../../nodes/shared/store';

const N8N = ['/usr/local/bin/node', '/usr/local/lib/node_modules/n8n/bin/n8n'];
const inQueueMode = (env: NodeJS.ProcessEnv, argv: string[]) =>
	sharedState(env, argv).kind === 'redis';
const queueRedisSettings = (env: NodeJS.ProcessEnv) => new QueueRedisState(env).settings;

describe('queue mode', () => {
	it.each([
		[{ EXECUTIONS_MODE: 'queue' }, [...N8N, 'start'], true],
		[{ EXECUTIONS_MODE: '"queue"' }, [...N8N, 'start'], true],
		[{}, [...N8N, 'worker', '--concurrency=5'], true],
		[{}, [...N8N, 'webhook'], true],
		[{ EXECUTIONS_MODE: 'regular' }, [...N8N, 'worker'], true],
		[{}, [...N8N, 'start'], false],
		[{ EXECUTIONS_MODE: 'regular' }, [...N8N], false],
		[{}, ['/usr/bin/node', '/srv/app/worker.js', 'worker'], false],
	])('%j with %j: %s', (env, argv, expected) => {
		expect(inQueueMode(env, argv)).toBe(expected);
	});

	it('reads EXECUTIONS_MODE_FILE as n8n does (Docker secrets)', () => {
		const file = join(mkdtempSync(join(tmpdir(), 'mode-')), 'mode');
		writeFileSync(file, 'queue\n');
		expect(inQueueMode({ EXECUTIONS_MODE_FILE: file }, [...N8N, 'start'])).toBe(true);
	});

	it('picks memory in regular mode and the queue Redis in queue mode', () => {
		expect(sharedState({}, [...N8N, 'start']).kind).toBe('memory');
		expect(sharedState({}, [...N8N, 'worker']).kind).toBe('redis');
	});
});

describe("n8n's queue Redis settings", () => {
	it("has n8n's defaults", () => {
		expect(queueRedisSettings({})).toEqual({
			host: 'localhost',
			port: 6379,
			db: 0,
			username: '',
			password: '',
			tls: false,
			tlsServerName: '',
			tlsValidateCertificate: true,
			clusterNodes: [],
			dualStack: false,
		});
	});

	it('reads every QUEUE_BULL_REDIS_* setting, also from its _FILE, and never shows the password', () => {
		const file = join(mkdtempSync(join(tmpdir(), 'redis-')), 'password');
		writeFileSync(file, 's3cr3t-redis-pass\n');
		const state = new QueueRedisState({
			QUEUE_BULL_REDIS_HOST: 'redis.internal',
			QUEUE_BULL_REDIS_PORT: '6380',
			QUEUE_BULL_REDIS_DB: '2',
			QUEUE_BULL_REDIS_USERNAME: 'n8n',
			QUEUE_BULL_REDIS_PASSWORD_FILE: file,
			QUEUE_BULL_REDIS_TLS: 'true',
			QUEUE_BULL_REDIS_TLS_VALIDATE_CERTIFICATE: 'false',
			QUEUE_BULL_REDIS_DUALSTACK: '1',
		});
		expect(state.settings).toMatchObject({
			host: 'redis.internal',
			port: 6380,
			db: 2,
			username: 'n8n',
			password: 's3cr3t-redis-pass',
			tls: true,
			tlsValidateCertificate: false,
			dualStack: true,
		});
		expect(state.where).toBe("n8n's queue Redis (redis.internal:6380, database 2)");
	});

	it('a cluster: QUEUE_BULL_REDIS_CLUSTER_NODES', () => {
		const state = new QueueRedisState({ QUEUE_BULL_REDIS_CLUSTER_NODES: 'r1:7000, r2:7001,r3' });
		expect(state.settings.clusterNodes).toEqual([
			{ host: 'r1', port: 7000 },
			{ host: 'r2', port: 7001 },
			{ host: 'r3', port: 6379 },
		]);
		expect(state.where).toBe("n8n's queue Redis (cluster r1:7000,r2:7001,r3:6379, database 0)");
	});
});
