/**
 * `npm test` is quiet by default: the failures tests cause on purpose are logged by n8n's engine
 * through n8n's logger, which test/harness/env.ts silences unless TEST_VERBOSE=1. Two engine test
 * files (errors on purpose; the first one's n8n store brings n8n's logger up) run in a child jest,
 * once as is and once verbose.
 */
import { spawnSync } from 'child_process';
import { join } from 'path';

const ROOT = join(__dirname, '..', '..');

function consoleBlocks(env: NodeJS.ProcessEnv): number {
	const run = spawnSync(
		process.execPath,
		[
			join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
			'-i',
			'test/nodes/Messaging/helpers/idempotency.test.ts',
			'test/nodes/Messaging/message/sendText.test.ts',
			'-t',
			'bad|refused|fails|error',
		],
		{ cwd: ROOT, encoding: 'utf8', env },
	);
	expect(run.status).toBe(0);
	return (run.stdout + run.stderr).split('\n').filter((line) => /^\s+console\./.test(line)).length;
}

describe('npm test', () => {
	it('prints no log lines of the code under test by default, and prints them with TEST_VERBOSE=1', () => {
		// This process's own setting (test/harness/env.ts) must not decide the child's.
		const { TEST_VERBOSE: _verbose, N8N_LOG_LEVEL: _level, ...env } = process.env;
		expect(consoleBlocks(env)).toBe(0);
		expect(consoleBlocks({ ...env, TEST_VERBOSE: '1' })).toBeGreaterThan(10);
	}, 120_000);
});
