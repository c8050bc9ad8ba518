import { readFileSync } from 'fs';

/**
 * The one module that reads the process around the nodes: its environment variables, its command
 * line, and the files n8n's `*_FILE` settings name. No node API exposes these, and two features
 * need them: queue mode (n8n's `EXECUTIONS_MODE` and `QUEUE_BULL_REDIS_*` settings, and whether
 * this process is `n8n worker` / `n8n webhook`) and the proxy variables (`HTTPS_PROXY`,
 * `NO_PROXY`, ...) for the package's own HTTP client. n8n's package scanner forbids `process`
 * and `fs` in a node; this file is the one exception its lint allows (scripts/scanLint.mjs).
 */
export function environment(): NodeJS.ProcessEnv {
	return process.env;
}

/** This process's command line (`process.argv`). */
export function commandLine(): readonly string[] {
	return process.argv;
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
