/**
 * `npm run n8n`: real n8n (2.40.x) with this package loaded, for clicking around.
 *
 * Builds and packs the package, installs the tarball into a fresh n8n user folder, starts a sandbox
 * gateway (127.0.0.1), imports a "Sandbox" credential pointing at it plus the workflows in
 * examples/, starts `n8n start`, prints the editor's address and the owner login, and stays up until
 * Ctrl-C (then stops n8n and the sandbox and deletes the user folder unless --keep).
 *
 * Options:  --port=5678 (default 5678, else a free port if taken)   --keep (keep the user folder)
 *           --no-build (pack the current dist/ as it is)
 */
import { existsSync, readFileSync, readdirSync, rmSync } from 'fs';
import { join } from 'path';
import { SANDBOX_PORT } from '../../sandbox/options';
import { startSandbox } from '../../sandbox/server';
import { PLAYGROUND_ACCOUNTS } from '../../sandbox/state';
import {
	OWNER,
	REPO_ROOT,
	ensureInstall,
	freePort,
	importCredential,
	importWorkflow,
	installPackageIntoN8n,
	log,
	makeUserFolder,
	messagingRateCredential,
	packPackage,
	startN8n,
	type N8nServer,
	type WorkflowJson,
} from './lib';

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(`--${name}`);
const opt = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];

async function portOrFree(wanted: number): Promise<number> {
	const { createServer } = await import('net');
	const free = await new Promise<boolean>((res) => {
		const s = createServer();
		s.once('error', () => res(false));
		s.listen(wanted, '127.0.0.1', () => s.close(() => res(true)));
	});
	return free ? wanted : await freePort();
}

async function main(): Promise<void> {
	ensureInstall();
	log('building and packing the package');
	const tgz = await packPackage({ build: !flag('no-build') });
	const userFolder = makeUserFolder('n8n-dev-');
	log(`user folder ${userFolder}`);
	await installPackageIntoN8n(userFolder, tgz);

	// Two accounts: "Sandbox" is connected (sends work), "Sandbox (logged out)" shows a QR code.
	// On the documented port, so that the address the README and the credential give works.
	const sandbox = await startSandbox({
		host: '127.0.0.1',
		port: await portOrFree(SANDBOX_PORT),
		accounts: PLAYGROUND_ACCOUNTS,
	});
	const sandboxNote =
		sandbox.port === SANDBOX_PORT
			? ''
			: `   (port ${SANDBOX_PORT} was taken: this run's sandbox is here, and both credentials point here)`;
	log(`sandbox ${sandbox.url} (accounts demo-client, connected, and qr-client, logged out)`);
	// n8n preselects the newest credential in a new node: the connected one is imported last.
	await importCredential(
		userFolder,
		messagingRateCredential({
			id: 'sandbox-qr-credential',
			name: 'Sandbox (logged out)',
			baseUrl: sandbox.url,
			clientId: 'qr-client',
			clientSecret: 'qr-secret',
		}),
	);
	await importCredential(
		userFolder,
		messagingRateCredential({
			id: 'sandbox-credential',
			name: 'Sandbox',
			baseUrl: sandbox.url,
			clientId: 'demo-client',
			clientSecret: 'demo-secret',
		}),
	);
	const examplesDir = join(REPO_ROOT, 'examples');
	const examples = existsSync(examplesDir)
		? readdirSync(examplesDir).filter((f) => f.endsWith('.json'))
		: [];
	for (const f of examples) {
		const wf = JSON.parse(readFileSync(join(examplesDir, f), 'utf8')) as WorkflowJson;
		await importWorkflow(userFolder, wf);
	}

	const port = await portOrFree(Number(opt('port') ?? 5678));
	// Set once n8n has started; shutdown() may run before that.
	// eslint-disable-next-line prefer-const -- assigned below, after shutdown() that reads it is defined
	let server: N8nServer | undefined;
	let stopping = false;
	const shutdown = async (code: number) => {
		if (stopping) return;
		stopping = true;
		log('stopping n8n and the sandbox');
		try {
			await server?.stop();
			await sandbox.close();
		} finally {
			if (!flag('keep')) rmSync(userFolder, { recursive: true, force: true });
			else log(`kept ${userFolder}`);
			process.exit(code);
		}
	};
	process.on('SIGINT', () => void shutdown(0));
	process.on('SIGTERM', () => void shutdown(0));

	server = await startN8n(userFolder, { port });
	server.process.on('exit', (code) => {
		if (!stopping) {
			log(`n8n exited unexpectedly (${code}); last log lines:\n${server?.logs(40) ?? ''}`);
			void shutdown(1);
		}
	});

	const lines = [
		'',
		`  n8n (with n8n-nodes-messaging-rate) is running:  ${server.url}/`,
		`  log in as:      ${OWNER.email}  /  ${OWNER.password}`,
		`  sandbox:        ${sandbox.url}${sandboxNote}`,
		`  phone:          ${sandbox.url}/__sandbox/phone  (the person in the chat: what the accounts sent,`,
		`                  Send and Wait's answer buttons, a box to write to the account, the QR code to scan)`,
		`  credentials:    "Sandbox" (Messaging & Rate API) -> the sandbox, account connected`,
		`                  "Sandbox (logged out)" -> the same sandbox, an account waiting for a QR scan:`,
		`                  Messaging → Session → Get QR Code shows the QR image (Binary tab); scan it on the phone page`,
		`  workflows:      ${examples.length ? examples.join(', ') : '(none)'}`,
		`  webhook base:   ${server.url}/webhook/  (the sandbox posts messages written on the phone page there once a Messaging Trigger is published (2.x) or activated (1.x), or listens for a test event)`,
		`  n8n log:        ${server.logFile}`,
		'',
		'  Press Ctrl-C to stop.',
		'',
	];
	console.log(lines.join('\n'));
}

main().catch((e: unknown) => {
	console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
	process.exit(1);
});
