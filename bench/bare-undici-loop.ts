/**
 * The limit for `npm run bench:n8n`: the requests a Send Text branch makes, sent by a bare undici
 * loop and nothing else, run by bench/n8n-mapped.ts in a separate process on n8n's own Node
 * (24), against the same sandbox, in the same run. The same phones and texts as the branches'
 * Code node, one token fetched first (n8n's Send Text runs reuse the process's cached token),
 * `parallel` requests in flight; a warm-up round, then `rounds` timed rounds.
 *
 * Prints one line of JSON: `{ "msPerItem": [round, …] }`.
 * Run: node -r ts-node/register/transpile-only bench/bare-undici-loop.ts <url> <items> <parallel> <rounds>
 */
import { performance } from 'perf_hooks';
import { Agent, request } from 'undici';

const [url, itemsArg, parallelArg, roundsArg] = process.argv.slice(2);
const ITEMS = Number(itemsArg);
const PARALLEL = Number(parallelArg);
const ROUNDS = Number(roundsArg);
const SECRET = 'demo-secret';
const VERSION = '16.0.1.3';

async function main(): Promise<void> {
	const agent = new Agent({ keepAliveTimeout: 10_000 });
	const tokenAnswer = await request(`${url}/api/wa/authentication`, {
		method: 'GET',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ params: { client_id: 'demo-client', client_secret: SECRET } }),
		dispatcher: agent,
	});
	const token = ((await tokenAnswer.body.json()) as { result: { token: string } }).result.token;

	const round = async (count: number): Promise<number> => {
		const started = performance.now();
		let next = 0;
		const worker = async () => {
			while (next < count) {
				const i = next++;
				const body = JSON.stringify({
					params: {
						method: 'sendMessage',
						client_secret: SECRET,
						version: VERSION,
						phone: `62812${10_000_000 + i}`,
						body: `Order ${i} is ready for pick-up`,
					},
				});
				const response = await request(`${url}/api/wa/2.0/post`, {
					method: 'POST',
					headers: {
						'content-type': 'application/json',
						'authorization': `Bearer ${token}`,
						'content-length': String(Buffer.byteLength(body)),
					},
					body,
					dispatcher: agent,
				});
				const answer = (await response.body.json()) as {
					result?: { message?: { sent?: boolean } };
				};
				if (answer.result?.message?.sent !== true) throw new Error(`bare loop: item ${i} not sent`);
			}
		};
		await Promise.all(Array.from({ length: PARALLEL }, worker));
		return (performance.now() - started) / count;
	};

	await round(Math.min(ITEMS, 200));
	const msPerItem: number[] = [];
	for (let r = 0; r < ROUNDS; r++) msPerItem.push(await round(ITEMS));
	await agent.close();
	process.stdout.write(`${JSON.stringify({ msPerItem })}\n`);
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
