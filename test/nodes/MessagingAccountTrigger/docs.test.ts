/**
 * docs/messaging-account-trigger.md against the node: every event's example output has exactly
 * the fields the trigger really outputs for that event (each event played against the sandbox),
 * and the documented defaults are the node's.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import type { INodeProperties } from 'n8n-workflow';

import { MessagingAccountTrigger } from '../../../nodes/MessagingAccountTrigger/MessagingAccountTrigger.node';
import { GATEWAY_DOWN, accountTrigger, itemsOf } from '../../harness/accountTriggerNode';
import { useSandbox } from '../../harness/useSandbox';

const sandbox = useSandbox();
const DOCS = readFileSync(
	join(__dirname, '..', '..', '..', 'docs', 'messaging-account-trigger.md'),
	'utf8',
);

/** The first JSON example under a `### <heading>`. */
function documentedOutput(heading: string): Record<string, unknown> {
	const start = DOCS.indexOf(`### ${heading}\n`);
	expect(start).toBeGreaterThan(-1);
	const block = /```json\n([\s\S]+?)\n```/.exec(DOCS.slice(start));
	return JSON.parse(block![1]) as Record<string, unknown>;
}

/** Each event, really fired: the JSON of its item. */
async function firedOutputs(): Promise<Record<string, Record<string, unknown>>> {
	sandbox.setUsage({ limit: 200, used: 100 });
	sandbox.setWebhook(undefined, 'https://n8n.example.com/webhook/a');
	const trigger = accountTrigger(sandbox, {
		events: ['disconnected', 'qrCodeNeeded', 'webhookChanged', 'usageLimit', 'gatewayUnreachable'],
		accountNumber: '+62 812-8877-6713',
		failedPolls: 1,
	});
	await trigger.activate();
	sandbox.logout(undefined, { showQr: true });
	sandbox.setWebhook(undefined, 'https://crm.example.org:8443/hooks/wa');
	sandbox.setUsage({ used: 185 });
	const outputs: Record<string, Record<string, unknown>> = {};
	for (const { json } of itemsOf(await trigger.poll())) outputs[String(json.event)] = json;
	sandbox.addFaults(GATEWAY_DOWN);
	for (const { json } of itemsOf(await trigger.poll())) outputs[String(json.event)] = json;
	return outputs;
}

describe('docs/messaging-account-trigger.md', () => {
	it('shows for every event exactly the fields the trigger outputs', async () => {
		const fired = await firedOutputs();
		const keys = (json: object) => Object.keys(json).sort();
		for (const [heading, event] of [
			['Disconnected', 'disconnected'],
			['QR Code Needed', 'qrCodeNeeded'],
			['Webhook Changed', 'webhookChanged'],
			['Usage Limit Running Out', 'usageLow'],
			['Gateway Unreachable', 'gatewayUnreachable'],
		]) {
			const documented = documentedOutput(heading);
			expect({ event, keys: keys(documented) }).toEqual({ event, keys: keys(fired[event]) });
			expect(documented.event).toBe(event);
		}
	});

	it('states the defaults the node has', () => {
		const properties = new MessagingAccountTrigger().description.properties;
		const options = properties.find((p) => p.name === 'options')!.options as INodeProperties[];
		const option = (name: string) => options.find((o) => o.name === name)!.default;
		const field = (name: string) => properties.find((p) => p.name === name)!.default;
		expect(DOCS).toContain(
			`at most **QR Codes per Disconnection** items (${String(option('qrCodesPerDisconnection'))})`,
		);
		expect(DOCS).toContain(
			`least **Minutes Between QR Codes** (${String(option('minutesBetweenQrCodes'))}) apart`,
		);
		expect(DOCS).toContain(`(Percentage Left, default ${String(field('usagePercent'))})`);
		expect(DOCS).toContain(`(Messages Left, default ${String(field('usageCount'))})`);
		expect(DOCS).toContain(`in a row without an answer (default ${String(field('failedPolls'))})`);
		expect(DOCS).toContain(
			`The binary field of the QR image (default \`${String(option('qrBinaryPropertyName'))}\`)`,
		);
	});
});
