/**
 * Runs the sandbox as a standalone server for manual tries and real-n8n runs:
 *   npm run sandbox -- --port 8069      (or PORT=8069 npm run sandbox; 8069 is the default)
 *   [--block-limit N]                   messages an account may send (default 10,000)
 *   [--allow-host NAME[,NAME…]]         names it answers besides 127.0.0.1, localhost and [::1]
 * Stays up until Ctrl-C.
 */
import { CONTROL_PATHS } from './control';
import { SANDBOX_PORT } from './options';
import { startSandbox } from './server';
import { PLAYGROUND_ACCOUNTS } from './state';

function argValue(name: string): string | undefined {
	const args = process.argv.slice(2);
	const index = args.indexOf(`--${name}`);
	if (index >= 0) return args[index + 1];
	const inline = args.find((arg) => arg.startsWith(`--${name}=`));
	return inline?.slice(name.length + 3);
}

function chosenPort(): number {
	const raw = argValue('port') ?? process.env.PORT ?? String(SANDBOX_PORT);
	const port = Number(raw);
	if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`Invalid port: ${raw}`);
	return port;
}

async function main(): Promise<void> {
	const sandbox = await startSandbox({
		port: chosenPort(),
		host: argValue('host') ?? '127.0.0.1',
		accounts: PLAYGROUND_ACCOUNTS,
		// Messages an account may send before the gateway refuses (benchmarks send 100,000 in one run).
		...(argValue('block-limit') ? { blockLimit: Number(argValue('block-limit')) } : {}),
		...(argValue('allow-host') ? { allowedHosts: argValue('allow-host')?.split(',') } : {}),
	});
	console.log(`Sandbox listening on ${sandbox.url}`);
	console.log('Accounts (client id / client secret):');
	for (const account of sandbox.accounts()) {
		const state =
			account.status === 'authenticated'
				? 'connected: sends work'
				: 'logged out: Get QR Code shows a QR image';
		console.log(`  ${account.clientId} / ${account.clientSecret}   (${state})`);
	}
	console.log(
		`The phone (scan a QR code, read what the accounts sent, answer Send and Wait, write to an account as a person): open ${sandbox.url}/__sandbox/phone`,
	);
	console.log('Control API:');
	for (const route of CONTROL_PATHS) console.log(`  ${route}`);
	console.log('Press Ctrl-C to stop.');

	const stop = () => {
		sandbox.close().then(
			() => process.exit(0),
			() => process.exit(1),
		);
	};
	process.once('SIGINT', stop);
	process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
	console.error(error instanceof Error ? error.message : error);
	process.exit(1);
});
