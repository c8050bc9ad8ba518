import { readFileSync } from 'fs';
import { basename } from 'path';

/**
 * Whether this n8n process runs in queue mode ("scaling mode"), read the way n8n itself decides:
 * `EXECUTIONS_MODE=queue` (or `EXECUTIONS_MODE_FILE`, as every n8n setting can come from a file),
 * or the process is `n8n worker` / `n8n webhook`, which force queue mode whatever the variable
 * says (n8n 2.40.7 `commands/worker.js`, `commands/webhook.js`). Nothing in the node API tells a
 * node the mode, hence the environment and the command line.
 */
export function inQueueMode(
	env: NodeJS.ProcessEnv = process.env,
	argv: readonly string[] = process.argv,
): boolean {
	if (envSetting(env, 'EXECUTIONS_MODE') === 'queue') return true;
	const [script = '', command = ''] = argv.slice(1);
	return basename(script) === 'n8n' && (command === 'worker' || command === 'webhook');
}

/**
 * One of n8n's settings from the environment: `NAME`, else the content of the file `NAME_FILE`
 * names (Docker secrets), trimmed and unquoted as n8n's own reader does (`@n8n/config` readEnv).
 */
export function envSetting(env: NodeJS.ProcessEnv, name: string): string | undefined {
	let value = env[name];
	const file = env[`${name}_FILE`];
	if (value === undefined && file) value = readFileSync(file, 'utf8');
	if (value === undefined) return undefined;
	const trimmed = value.trim();
	return /^(['"]).*\1$/s.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
}
