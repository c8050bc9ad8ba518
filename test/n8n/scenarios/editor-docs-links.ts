/**
 * The editor as a newcomer meets the nodes (issue 15, items 1, 2 and 6), n8n 2.x only:
 * - every node's "Docs" link (top right of its panel) leads to the node's own heading in docs/:
 *   the href the editor renders is read from the panel and its anchor is looked up among the
 *   GitHub heading anchors of the target Markdown file;
 * - the canvas shows what each node does (`Send Text`, `BCA · USD → IDR`), evaluated by the
 *   editor itself;
 * - the phone number's guidance is visible under the field, not only on hover.
 * Screenshots: docs/.images/canvas-subtitles.png and docs/.images/messaging-panel-hints.png
 * (written with --doc-images).
 */
import { packageNodeDescriptions, repositoryTarget } from '../../../scripts/docs';
import {
	canvasSubtitles,
	closeNodePanel,
	docImage,
	operationDocsLink,
	openNodePanel,
	openWorkflow,
	panelDocsLink,
	withEditor,
} from '../editor';
import { PACKAGE_NAME, log, type ScenarioContext } from '../lib';

/** Parameters that make each node show something on the canvas; other nodes keep their defaults. */
const PARAMETERS: Record<string, Record<string, unknown>> = {
	messaging: {
		resource: 'message',
		operation: 'sendText',
		phone: '+62 812-8877-6713',
		text: 'Today: {{ $json.convertedAmount }} IDR',
	},
	currencyRate: {
		resource: 'rate',
		operation: 'convert',
		provider: 'bca',
		fromCurrency: 'USD',
		toCurrency: 'IDR',
		amount: 100,
	},
	messagingTrigger: { accountNumber: '+62 812-8877-6713' },
};
/** The operation each panel opens on above, and the docs heading its notice must link. */
const OPERATION_SECTIONS: Record<string, string> = {
	'Messaging': 'Message → Send Text',
	'Currency Rate': 'Rate → Convert',
};
const EXPECTED_SUBTITLES: Record<string, string> = {
	messaging: 'Send Text',
	currencyRate: 'BCA · USD → IDR',
};

export async function editorDocsLinksHintsAndSubtitles(t: ScenarioContext): Promise<void> {
	if (!t.options.editor || t.target.major < 2) {
		log(
			`editor docs-link scenario not run for ${t.target.label} (${t.options.editor ? "the editor selectors are n8n 2.x's" : '--no-editor'})`,
		);
		return;
	}
	const { report, server: srv } = t;
	const descriptions = packageNodeDescriptions().map(({ description }) => description);
	const isTrigger = (description: (typeof descriptions)[number]) =>
		description.group.includes('trigger');
	// Triggers in a column left of the Manual Trigger, the other nodes right of it: one screen.
	const column = (description: (typeof descriptions)[number]) =>
		descriptions.filter((d) => isTrigger(d) === isTrigger(description));
	const nodes = descriptions.map((description, index) => ({
		description,
		node: {
			id: `docs-node-${index}`,
			name: description.displayName,
			type: `${PACKAGE_NAME}.${description.name}`,
			typeVersion: 1,
			position: [
				isTrigger(description) ? -360 : 360,
				(column(description).indexOf(description) - (column(description).length - 1) / 2) * 220,
			],
			parameters: PARAMETERS[description.name] ?? {},
			...(description.credentials?.length
				? { credentials: { [description.credentials[0].name]: { ...t.credential } } }
				: {}),
		},
	}));
	const regular = nodes.filter(({ description }) => !isTrigger(description));
	const created = await srv.rest<{ id: string }>('POST', '/workflows', {
		name: 'Editor: every node of the package',
		active: false,
		settings: {},
		nodes: [
			{
				id: 'manual',
				name: 'Manual',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			...nodes.map((n) => n.node),
		],
		connections: {
			Manual: { main: [regular.map(({ node }) => ({ node: node.name, type: 'main', index: 0 }))] },
		},
	});

	const seen = await report.timed('editor: every node panel of the package', () =>
		withEditor(srv, async (s) => {
			await openWorkflow(s.page, srv, created.id);
			await s.page.getByTestId('canvas-node').first().waitFor({ timeout: 60_000 });
			await s.page.waitForTimeout(800);
			const subtitles = await canvasSubtitles(s.page);
			await docImage(s, 'canvas-subtitles');
			const docs: Record<string, string | undefined> = {};
			const operationDocs: Record<string, string | null> = {};
			let phoneHintVisible = false;
			for (const { node } of nodes) {
				await openNodePanel(s.page, node.name);
				docs[node.name] = await panelDocsLink(s.page);
				if (node.name in OPERATION_SECTIONS) {
					// The notice at the top of the operation's fields: "…: its fields, … in the docs".
					operationDocs[node.name] = (await operationDocsLink(s.page)) ?? null;
				}
				if (node.name === 'Messaging') {
					const hint = s.page.getByText('Include the country code, e.g. +62 812-8877-6713', {
						exact: false,
					});
					phoneHintVisible = (await hint.count()) > 0 && (await hint.first().isVisible());
					await docImage(s, 'messaging-panel-hints');
				}
				await closeNodePanel(s.page);
			}
			return {
				subtitles,
				docs,
				operationDocs,
				phoneHintVisible,
				externalRequests: s.externalRequests,
			};
		}),
	);

	for (const { description, node } of nodes) {
		const href = seen.docs[node.name];
		const target = href === undefined ? undefined : repositoryTarget(href);
		report.check(
			`editor: ${description.displayName}'s Docs link is its documentationUrl as written (no tracking query after the #anchor)`,
			href !== undefined && href === description.documentationUrl && !href.includes('?'),
			{ href, documentationUrl: description.documentationUrl },
		);
		report.check(
			`editor: ${description.displayName}'s Docs link lands on the heading "${description.displayName}" of ${target?.file ?? '?'} (GitHub anchor #${target?.anchor ?? '?'})`,
			target?.heading === description.displayName,
			{ href, target },
		);
	}
	for (const [name, heading] of Object.entries(OPERATION_SECTIONS)) {
		const href = seen.operationDocs[name] ?? undefined;
		const target = href === undefined ? undefined : repositoryTarget(href);
		report.check(
			`editor: ${name}'s panel links its operation's own section "${heading}" (${target?.file ?? '?'}#${target?.anchor ?? '?'})`,
			target?.heading === heading,
			{ href, target },
		);
	}
	for (const [type, expected] of Object.entries(EXPECTED_SUBTITLES)) {
		const name = nodes.find(({ description }) => description.name === type)?.node.name ?? type;
		report.check(
			`editor: the canvas shows "${expected}" under ${name}`,
			seen.subtitles[name] === expected,
			seen.subtitles,
		);
	}
	report.check(
		'editor: Phone Number shows its country-code hint without hovering',
		seen.phoneHintVisible,
	);
	await srv
		.rest('POST', `/workflows/${created.id}/archive`)
		.catch((error: unknown) => log(`could not archive the docs-link workflow: ${String(error)}`));
}
