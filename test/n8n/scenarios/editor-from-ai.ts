/**
 * A model fills the Currency Rate tool's Provider (issue 15, item 8), in the editor, n8n 2.x only:
 * the Currency Rate Tool under an AI Agent with Provider set to the documented `$fromAI` line
 * shows that expression in its panel, and "Execute step" asks for the value a model would give
 * ("provider"); with "bni" typed in, the rates request the sandbox receives is BNI's and the
 * output shows BNI's rates. Screenshots: docs/.images/currency-rate-tool-from-ai.png (the panel)
 * and currency-rate-tool-from-ai-test.png (the value asked for), written with --doc-images.
 */
import { docImage, openNodePanel, openWorkflow, withEditor } from '../editor';
import { PACKAGE_NAME, log, type ScenarioContext } from '../lib';

/** The expression docs/currency-rate.md gives for a model to fill the Provider. */
const PROVIDER_FROM_AI =
	"{{ $fromAI('provider', 'Rate provider code: bca, bni, bri, cimb, kmk', 'string') }}";

const RATES_PATH = '/api/rate/1.0/get';

export async function editorFillsProviderFromAi(t: ScenarioContext): Promise<void> {
	if (!t.options.editor || t.target.major < 2) {
		log(
			`editor $fromAI scenario not run for ${t.target.label} (${t.options.editor ? "the editor selectors are n8n 2.x's" : '--no-editor'})`,
		);
		return;
	}
	const { report, server: srv, sandbox } = t;
	const created = await srv.rest<{ id: string }>('POST', '/workflows', {
		name: 'Editor: a model picks the rate provider',
		active: false,
		settings: {},
		nodes: [
			{
				id: 'agent',
				name: 'AI Agent',
				type: '@n8n/n8n-nodes-langchain.agent',
				typeVersion: 2,
				position: [0, 0],
				parameters: {},
			},
			{
				id: 'rates',
				name: 'Exchange rates',
				type: `${PACKAGE_NAME}.currencyRateTool`,
				typeVersion: 1,
				position: [100, 240],
				parameters: {
					resource: 'rate',
					operation: 'get',
					provider: `=${PROVIDER_FROM_AI}`,
					currencies: 'USD',
				},
				credentials: { messagingRateApi: { ...t.credential } },
			},
		],
		connections: {
			'Exchange rates': { ai_tool: [[{ node: 'AI Agent', type: 'ai_tool', index: 0 }]] },
		},
	});

	const before = sandbox.requests().length;
	try {
		const seen = await report.timed(
			'editor: Currency Rate Tool with Provider from $fromAI → Execute step',
			() =>
				withEditor(srv, async (s) => {
					const { page } = s;
					await openWorkflow(page, srv, created.id);
					await openNodePanel(page, 'Exchange rates');
					const providerField = (
						(await page.getByTestId('parameter-input-provider').first().textContent()) ?? ''
					)
						.replace(/\s+/g, ' ')
						.trim();
					await docImage(s, 'currency-rate-tool-from-ai');
					await page.getByTestId('node-execute-button').first().click();
					const modal = page.getByTestId('fromAiParameters-modal').first();
					await modal.waitFor({ timeout: 30_000 });
					const asked = (
						(await page.getByTestId('from-ai-parameters-modal-inputs').first().textContent()) ?? ''
					)
						.replace(/\s+/g, ' ')
						.trim();
					await page
						.locator('[data-test-id="fromAiParameters-modal"] input[name="query.provider"]')
						.first()
						.fill('bni');
					await docImage(s, 'currency-rate-tool-from-ai-test');
					await page
						.locator(
							'[data-test-id="fromAiParameters-modal"] [data-test-id="execute-workflow-button"]',
						)
						.first()
						.click();
					await page.getByTestId('node-run-status-success').first().waitFor({ timeout: 60_000 });
					await page.getByTestId('radio-button-json').last().click();
					await page.waitForTimeout(500);
					const output = (
						(await page.getByTestId('output-panel').first().textContent()) ?? ''
					).replace(/\s+/g, ' ');
					return { providerField, asked, output };
				}),
		);
		const rateRequests = sandbox
			.requests()
			.slice(before)
			.filter((request) => request.path === RATES_PATH);
		report.check(
			'editor: Provider shows the $fromAI expression (the model fills it)',
			seen.providerField.includes("$fromAI('provider'"),
			{ providerField: seen.providerField },
		);
		report.check(
			'editor: Execute step asks for "provider", the value a model would give',
			/provider/.test(seen.asked),
			{ asked: seen.asked },
		);
		report.check(
			'editor: with "bni" as the model\'s value, the sandbox got one rates request for provider bni',
			rateRequests.length === 1 && rateRequests[0].params?.currency_id_provider === 'bni',
			rateRequests.map((request) => request.params),
		);
		report.check(
			"editor: the output shows BNI's USD rate",
			/"provider": ?"bni"/.test(seen.output) && /"currency": ?"USD"/.test(seen.output),
			{ output: seen.output.slice(0, 600) },
		);
	} finally {
		await srv
			.rest('POST', `/workflows/${created.id}/archive`)
			.catch((error: unknown) => log(`could not archive the $fromAI workflow: ${String(error)}`));
	}
}
