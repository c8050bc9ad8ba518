/**
 * The editor (Playwright + Debian's chromium, n8n 2.x only: the selectors are 2.x's): the Messaging
 * node's panel with its Resource and Operation options, the rates-to-chat example's canvas;
 * screenshots in test-artifacts/n8n/ (messaging-node-panel.png is the one to show).
 */
import { copyFileSync, existsSync, writeFileSync } from 'fs';
import { join } from 'path';
import { resources } from '../../../nodes/Messaging/Messaging.node';
import { inspectNode, isExpectedExternal, screenshotWorkflowIn, withEditor } from '../editor';
import { ARTIFACTS_DIR, log, type ScenarioContext } from '../lib';

// What the editor must show, from the resource definitions (a new operation needs no edit here).
const RESOURCE_NAMES = resources.map((r) => r.option.name);
const MESSAGE_OPERATIONS = resources
	.find((r) => r.option.value === 'message')!
	.operations.map((o) => o.name);

export async function editorShowsTheMessagingPanel(t: ScenarioContext): Promise<void> {
	if (!t.options.editor || t.target.major < 2) {
		log(
			`editor scenario not run for ${t.target.label} (${t.options.editor ? "the editor selectors are n8n 2.x's" : '--no-editor'})`,
		);
		return;
	}
	const { report, server: srv } = t;
	const ed = await report.timed('editor session', () =>
		withEditor(srv, async (session) => {
			const messaging = await report.timed('editor: Messaging node panel', () =>
				inspectNode(session, srv, {
					search: 'Messaging',
					itemName: 'Messaging',
					action: 'Send a file',
					screenshotPrefix: 'messaging-node',
				}),
			);
			const example = await report.timed('editor: rates-to-chat example canvas', () =>
				screenshotWorkflowIn(session, srv, 'DailyRatesToChat', 'example-daily-rates-to-chat'),
			);
			return {
				messaging,
				example,
				externalRequests: session.externalRequests,
				errors: session.errors,
			};
		}),
	);
	const m = ed.messaging;
	// After a Manual Trigger the panel lists regular nodes only, so the search shows Messaging (not the trigger).
	report.check(
		'editor: node search for "Messaging" finds the Messaging node',
		m.searchResults.includes('Messaging'),
		m.searchResults,
	);
	report.check(
		'editor: Messaging offers its actions (Send a text message, Send a file, ...)',
		m.actions.includes('Send a text message') && m.actions.includes('Send a file'),
		m.actions,
	);
	report.check(
		`editor: Resource options render: ${RESOURCE_NAMES.join(', ')}`,
		JSON.stringify(m.resourceOptions) === JSON.stringify(RESOURCE_NAMES),
		m.resourceOptions,
	);
	report.check(
		`editor: Operation options render for Message: ${MESSAGE_OPERATIONS.join(', ')}`,
		JSON.stringify(m.operationOptions) === JSON.stringify(MESSAGE_OPERATIONS),
		m.operationOptions,
	);
	report.check(
		'editor: action "Send a file" selected Message / Send File',
		m.resourceSelected === 'Message' && m.operationSelected === 'Send File',
		{
			title: m.nodeTitle,
			resource: m.resourceSelected,
			operation: m.operationSelected,
		},
	);
	const labels = m.parameters.map((p) => p.label);
	report.check(
		'editor: Send File parameters render (Credential, Phone Number, File Source, Caption)',
		['Phone Number', 'File Source', 'Caption'].every((l) => labels.includes(l)) &&
			labels.some((l) => /credential/i.test(l)),
		labels,
	);
	const best = m.screenshots.find((p) => p.endsWith('-2-resource.png')) ?? m.screenshots[0];
	if (best) copyFileSync(best, join(ARTIFACTS_DIR, 'messaging-node-panel.png'));
	report.check(
		'editor: screenshot test-artifacts/n8n/messaging-node-panel.png saved',
		existsSync(join(ARTIFACTS_DIR, 'messaging-node-panel.png')),
		m.screenshots,
	);
	report.check(
		'editor: the rates-to-chat example renders its 4 nodes',
		ed.example.nodeCount === 4,
		ed.example,
	);
	const unexpected = ed.externalRequests.filter((u) => !isExpectedExternal(u));
	report.check('editor: no unexpected requests outside n8n', unexpected.length === 0, unexpected);
	if (ed.errors.length) log(`browser errors (informational): ${ed.errors.slice(0, 5).join(' | ')}`);
	writeFileSync(join(ARTIFACTS_DIR, 'e2e-editor.json'), JSON.stringify(ed, null, 2));
}
