import { commandLine, envSetting, environment } from '../environment';

/**
 * Whether this n8n process runs in queue mode ("scaling mode"), read the way n8n itself decides:
 * `EXECUTIONS_MODE=queue` (or `EXECUTIONS_MODE_FILE`, as every n8n setting can come from a file),
 * or the process is `n8n worker` / `n8n webhook`, which force queue mode whatever the variable
 * says (n8n 2.40.7 `commands/worker.js`, `commands/webhook.js`). Nothing in the node API tells a
 * node the mode, hence the environment and the command line (read in ../environment.ts).
 */
export function inQueueMode(
	env: NodeJS.ProcessEnv = environment(),
	argv: readonly string[] = commandLine(),
): boolean {
	if (envSetting(env, 'EXECUTIONS_MODE') === 'queue') return true;
	const [script = '', command = ''] = argv.slice(1);
	return script.split(/[\\/]/).pop() === 'n8n' && (command === 'worker' || command === 'webhook');
}
