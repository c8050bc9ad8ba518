import { readFileSync } from 'fs';

// The one module that reads the process (environment, command line, `*_FILE` files): queue mode and
// the proxy variables need it, no node API gives them, and the scanner allows it only here.
export function environment(): NodeJS.ProcessEnv {
	return process.env;
}

export function commandLine(): readonly string[] {
	return process.argv;
}

/** `NAME`, else the file `NAME_FILE` names (Docker secrets), read as @n8n/config's readEnv does. */
export function envSetting(env: NodeJS.ProcessEnv, name: string): string | undefined {
	let value = env[name];
	const file = env[`${name}_FILE`];
	if (value === undefined && file) value = readFileSync(file, 'utf8');
	if (value === undefined) return undefined;
	const trimmed = value.trim();
	return /^(['"]).*\1$/s.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
}
