/**
 * `useSandbox()`: the sandbox set-up every engine and transport test file needs, in one call.
 *
 *   const sandbox = useSandbox();            // at the top of a test file (or a describe block)
 *
 * starts a sandbox before the file's (block's) tests and closes it after them, and before every
 * test gives a clean slate: the sandbox forgets its ledger, request log, faults and tokens, and
 * this process forgets its cached tokens and send claims (and n8n's processed-items
 * store is emptied), so every count in a test starts at zero.
 * After the last test the pooled connections are closed, so Jest exits without open handles.
 *
 * The value returned stands for the running sandbox (`sandbox.url`, `sandbox.ledger()`, ...);
 * `sandbox.restart(options)` replaces it with one started with other options for the tests that
 * follow (the next `restart()` without options goes back to the defaults).
 */
import { sharedTokenCache } from '../../nodes/shared/transport';
import { startSandbox } from '../../sandbox/server';
import type { Sandbox, SandboxOptions } from '../../sandbox/types';
import { processedItems } from './processedItems';
import { MemoryTable } from '../../nodes/shared/store';

export interface UsedSandbox extends Sandbox {
	/** Closes the running sandbox and starts one with `options` in its place. */
	restart(options?: SandboxOptions): Promise<void>;
}

export interface UseSandboxSettings {
	/** Reset sandbox and caches before each test (default true). */
	resetEachTest?: boolean;
}

/**
 * Forgets every token and claimed message of this process
 * (the nodes' caches are process-wide), and empties n8n's processed-items store.
 */
function clearProcessCaches(): void {
	sharedTokenCache.clear();
	MemoryTable.forgetAll();
	processedItems.clear();
}

export function useSandbox(
	options: SandboxOptions = {},
	{ resetEachTest = true }: UseSandboxSettings = {},
): UsedSandbox {
	let current: Sandbox | undefined;

	beforeAll(async () => {
		current = await startSandbox(options);
	});
	if (resetEachTest) {
		beforeEach(() => {
			running().reset();
			clearProcessCaches();
		});
	}
	afterAll(async () => {
		await current?.close();
		current = undefined;
	});

	function running(): Sandbox {
		if (!current)
			throw new Error(
				'useSandbox(): the sandbox runs only inside the tests of the file or block that called it',
			);
		return current;
	}

	const restart = async (restartOptions: SandboxOptions = options) => {
		await current?.close();
		current = await startSandbox(restartOptions);
	};

	// Every property is looked up on the sandbox running at the time of the call.
	return new Proxy({} as UsedSandbox, {
		get(_target, key) {
			if (key === 'restart') return restart;
			const sandbox = running();
			const value = Reflect.get(sandbox, key, sandbox) as unknown;
			return typeof value === 'function'
				? (value as (...args: unknown[]) => unknown).bind(sandbox)
				: value;
		},
	});
}
