/**
 * `npm run demo`: starts the sandbox (a local stand-in for the gateway), then runs every
 * workflow in examples/ through n8n's real execution engine against it, and prints what each
 * node produced and what the "gateway" received. No account or network needed.
 */
import '../test/harness/env';

import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';

import { startSandbox } from '../sandbox/server';
import { messagingRateApiTest } from '../nodes/shared/credential';
import { closeConnections } from '../nodes/shared/transport';
import { runWorkflow, sandboxCredential, type WorkflowJson } from '../test/harness/engine';

const EXAMPLES = join(__dirname, '..', 'examples');

async function main() {
	const sandbox = await startSandbox({ port: Number(process.env.DEMO_PORT ?? 0) });
	const credential = sandboxCredential(sandbox.url);
	console.log(
		`Sandbox gateway at ${sandbox.url} (client id "demo-client"; the secret stays in the credential)\n`,
	);

	const test = await messagingRateApiTest.call({} as never, {
		id: 'demo',
		name: 'Sandbox',
		type: 'messagingRateApi',
		data: credential.messagingRateApi,
	});
	console.log(`Credential test: ${test.status} - ${test.message}\n`);

	let failures = test.status === 'OK' ? 0 : 1;
	for (const file of readdirSync(EXAMPLES)
		.filter((f) => f.endsWith('.json'))
		.sort()) {
		const workflow = JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')) as WorkflowJson;
		// The engine alone runs what starts from a Manual Trigger. The others wait for a webhook, a poll
		// or a chat (AI Agent) and need a running n8n: `npm run n8n`, or import them there.
		const manualTrigger = workflow.nodes.find((n) => n.type === 'n8n-nodes-base.manualTrigger');
		if (!manualTrigger) {
			console.log(
				`Workflow "${workflow.name ?? file}" (examples/${file}): starts from a trigger, import it into n8n to try it\n`,
			);
			continue;
		}
		console.log(`Workflow "${workflow.name ?? file}" (examples/${file})`);
		const before = sandbox.ledger().length;
		const run = await runWorkflow(workflow, credential, { startNode: manualTrigger.name });
		for (const node of workflow.nodes) {
			const items = run.output(node.name);
			if (!run.run.data.resultData.runData[node.name]) continue;
			console.log(`  ${node.name} (${node.type.split('.').pop()}): ${items.length} item(s)`);
			for (const item of items.slice(0, 3))
				console.log(
					`    ${summarize(item.json)}${item.binary ? `  [binary: ${Object.keys(item.binary).join(', ')}]` : ''}`,
				);
			if (items.length > 3) console.log(`    … ${items.length - 3} more`);
		}
		if (run.error) {
			failures++;
			console.log(`  FAILED: ${run.error.message}`);
		}
		const received = sandbox.ledger().slice(before);
		console.log(`  The gateway recorded ${received.length} message(s):`);
		for (const entry of received) {
			const what =
				entry.kind === 'text'
					? JSON.stringify(entry.text)
					: `file ${entry.file?.filename} (${entry.file?.mimeType}, ${entry.file?.size} bytes)`;
			console.log(`    → ${entry.phone}: ${what}  [id ${entry.id}]`);
		}
		console.log('');
	}

	console.log(
		`Requests the gateway answered: ${sandbox.requests().length}; tokens issued: messaging ${sandbox.stats().tokensIssued.wa}, rates ${sandbox.stats().tokensIssued.rate}`,
	);
	await sandbox.close();
	await closeConnections();
	process.exit(failures ? 1 : 0);
}

function summarize(json: object): string {
	const text = JSON.stringify(json);
	return text.length > 220 ? `${text.slice(0, 220)}…` : text;
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
