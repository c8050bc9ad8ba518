/**
 * The gateway of bench/reply.ts, in a child process: a sandbox with one connected account. Told
 * over IPC to deliver an inbound message to a webhook, it notes the time just before posting; and
 * it tells the parent every send it records, with the time it recorded it. Both times come from
 * this process's clock, so a reply's latency is measured in one place.
 */
import { performance } from 'perf_hooks';

import { startSandbox } from '../sandbox/server';
import type { Sandbox } from '../sandbox/types';

/** What the parent asks. */
export type GatewayCommand =
	| { cmd: 'deliver'; id: number; webhook: string; sender: string; message: string }
	| { cmd: 'account'; id: number };

/** What the gateway tells. */
export type GatewayEvent =
	| { ev: 'ready'; url: string }
	| { ev: 'delivered'; id: number; postedAt: number; status: number; body: string }
	| { ev: 'failed'; id: number; error: string }
	| { ev: 'account'; id: number; webhook: string | undefined }
	| { ev: 'sent'; phone: string; text: string; at: number };

export const GATEWAY_ACCOUNT = {
	clientId: 'demo-client',
	clientSecret: 'demo-secret',
	number: '6281288776713',
} as const;

/** Wall-clock milliseconds with a fraction. */
const now = () => performance.timeOrigin + performance.now();

const tell = (event: GatewayEvent) => process.send?.(event);

async function main(): Promise<void> {
	let told = 0;
	/** The sandbox reads its clock once for every send it records (the ledger's `at`): the moment to tell it. */
	const clock = () => {
		const at = now();
		queueMicrotask(() => {
			const ledger = gateway.ledger();
			for (; told < ledger.length; told++) {
				const { phone, text = '' } = ledger[told];
				tell({ ev: 'sent', phone, text, at });
			}
		});
		return at;
	};
	// Read by `clock` only once a send is recorded, long after this line.
	const gateway: Sandbox = await startSandbox({
		accounts: [
			{
				clientId: GATEWAY_ACCOUNT.clientId,
				clientSecret: GATEWAY_ACCOUNT.clientSecret,
				status: 'authenticated',
				whatsappNumber: GATEWAY_ACCOUNT.number,
			},
		],
		blockLimit: 10_000_000,
		logRequests: false,
		now: clock,
	});
	process.on('message', (command: GatewayCommand) => {
		if (command.cmd === 'account') {
			tell({ ev: 'account', id: command.id, webhook: gateway.accounts()[0].whatsappWebhook });
			return;
		}
		const { id, webhook, sender, message } = command;
		if (gateway.accounts()[0].whatsappWebhook !== webhook) gateway.setWebhook(undefined, webhook);
		const postedAt = now();
		gateway.deliverIncoming({ sender, message }).then(
			({ status, body }) =>
				tell({ ev: 'delivered', id, postedAt, status, body: body.slice(0, 300) }),
			(error: unknown) => tell({ ev: 'failed', id, error: String(error) }),
		);
	});
	process.once('disconnect', () => void gateway.close().then(() => process.exit(0)));
	tell({ ev: 'ready', url: gateway.url });
}

// bench/reply.ts imports this file's types and account; only the forked child runs the gateway.
if (require.main === module)
	main().catch((error: unknown) => {
		console.error(error);
		process.exit(1);
	});
