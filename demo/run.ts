/**
 * `npm run demo`: starts the sandbox (a local stand-in for the gateway), then runs every
 * workflow in examples/ through n8n's real execution engine against it, and prints what each
 * node produced and what the "gateway" received. No account or network needed.
 */
import '../test/harness/env';

import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';

import { startSandbox } from '../sandbox/server';
import { messagingRateApiTest } from '../nodes/shared/credentialTest';
import type { Sandbox } from '../sandbox/types';
import { runWorkflow, sandboxCredential, type WorkflowJson } from '../test/harness/engine';
import { ACCOUNT_TRIGGER_TYPE, PollHarness, type PollOutcome } from '../test/harness/pollEngine';

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
		// The engine alone runs what starts from a Manual Trigger, and the account trigger's story
		// (its polls, played below). The others wait for a webhook, a poll or a chat (AI Agent) and
		// need a running n8n: `npm run n8n`, or import them there.
		const manualTrigger = workflow.nodes.find((n) => n.type === 'n8n-nodes-base.manualTrigger');
		if (workflow.nodes.some((n) => n.type === ACCOUNT_TRIGGER_TYPE)) {
			console.log(`Workflow "${workflow.name ?? file}" (examples/${file})`);
			if (!(await playAccountStory(workflow, sandbox, credential))) failures++;
			console.log('');
			continue;
		}
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
	process.exit(failures ? 1 : 0);
}

/**
 * The Messaging Account Trigger's story, polled as n8n would: the workflow is activated, the
 * phone is logged out and the gateway shows a QR code, the next poll hands Send Email the code
 * (in the engine Send Email only shows the message), the phone scans it, the next poll says so.
 */
async function playAccountStory(
	workflow: WorkflowJson,
	sandbox: Sandbox,
	credential: ReturnType<typeof sandboxCredential>,
): Promise<boolean> {
	const trigger = new PollHarness({
		triggerType: ACCOUNT_TRIGGER_TYPE,
		workflow,
		credentials: credential,
	});
	const show = (step: string, outcome: PollOutcome) => {
		const execution = outcome.execution;
		if (!execution) {
			console.log(`  ${step}: ${outcome.returned ? 'nothing new (memory saved)' : 'nothing new'}`);
			return;
		}
		console.log(`  ${step}: ${execution.triggerItems.length} event(s)`);
		for (const item of execution.triggerItems)
			console.log(
				`    ${summarize(item.json)}${item.binary ? `  [binary: ${Object.keys(item.binary).join(', ')}]` : ''}`,
			);
		for (const node of workflow.nodes.filter((n) => n.type !== ACCOUNT_TRIGGER_TYPE))
			for (const item of execution.output(node.name))
				console.log(`    ${node.name}: ${summarize({ ...item.json, html: undefined })}`);
	};
	show('activated (the first poll remembers the account: connected)', await trigger.activate());
	sandbox.logout(undefined, { showQr: true });
	const needed = await trigger.poll();
	show('the phone was logged out; the gateway shows a QR code; next poll', needed);
	show('next poll, same QR code', await trigger.poll());
	sandbox.scan();
	show('the phone scanned the code; next poll', await trigger.poll());
	const errors = trigger.executions.filter((execution) => execution.error);
	for (const { error } of errors) console.log(`  FAILED: ${error?.message}`);
	return errors.length === 0 && (needed.execution?.triggerItems.length ?? 0) > 0;
}

function summarize(json: object): string {
	const text = JSON.stringify(json);
	return text.length > 220 ? `${text.slice(0, 220)}…` : text;
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
