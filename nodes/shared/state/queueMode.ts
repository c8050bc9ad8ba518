import { commandLine, envSetting, environment } from '../environment';

// As n8n decides: `EXECUTIONS_MODE=queue`, or the process is `n8n worker` / `n8n webhook`, which
// force queue mode whatever the variable says. No node API tells a node the mode.
export function inQueueMode(
	env: NodeJS.ProcessEnv = environment(),
	argv: readonly string[] = commandLine(),
): boolean {
	if (envSetting(env, 'EXECUTIONS_MODE') === 'queue') return true;
	const [script = '', command = ''] = argv.slice(1);
	return script.split(/[\\/]/).pop() === 'n8n' && (command === 'worker' || command === 'webhook');
}
