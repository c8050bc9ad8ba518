/** Sandbox options with every default filled in, so the rest of the code never guesses. */
import { DEFAULT_ACCOUNTS } from './state';
import type { SandboxAccount, SandboxOptions } from './types';

/** Where `npm run sandbox` and `npm run n8n` put the sandbox: the address the README, docs and credential give. */
export const SANDBOX_PORT = 8069;

export interface ResolvedOptions extends SandboxOptions {
	port: number;
	host: string;
	accounts: SandboxAccount[];
	tokenTtlMs: number;
	tokenExpiresInField: boolean;
	qrAsDataUri: boolean;
	flatWebhookPayload: boolean;
	blockLimit: number;
	logRequests: boolean;
}

export function resolveOptions(options: SandboxOptions = {}): ResolvedOptions {
	return {
		...options,
		port: options.port ?? 0,
		host: options.host ?? '127.0.0.1',
		accounts: options.accounts ?? DEFAULT_ACCOUNTS,
		tokenTtlMs: options.tokenTtlMs ?? 3_600_000,
		tokenExpiresInField: options.tokenExpiresInField ?? false,
		qrAsDataUri: options.qrAsDataUri ?? false,
		flatWebhookPayload: options.flatWebhookPayload ?? false,
		blockLimit: options.blockLimit ?? 10_000,
		logRequests: options.logRequests ?? true,
	};
}

/** Check Number's answer: the configured list, else the "ends in 0000" convention. */
export function isRegisteredNumber(options: ResolvedOptions, phone: string): boolean {
	if (options.unregisteredNumbers) return !options.unregisteredNumbers.includes(phone);
	return !phone.endsWith('0000');
}
