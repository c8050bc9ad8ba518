/**
 * Every workflow in examples/ with a Manual Trigger, through `n8n execute`: it succeeds, each of
 * this package's nodes produces items without errors, sends reach the sandbox; the rates-to-chat
 * example's table and the exact text it sends.
 */
import {
	executeWithGenericChecks,
	hasManualTrigger,
	nodeOutput,
	type N8nRun,
	type ScenarioContext,
} from '../lib';

/** The text the "Send to Chat" node of daily-rates-to-chat.json builds from the rate table (its expression, in plain TS). */
function expectedRatesText(t: RateTable): string {
	return (
		`${t.provider.toUpperCase()} exchange rates, ${t.fetchedAt.slice(0, 10)} (${t.baseCurrency} per unit, buy / sell):\n` +
		t.currencies
			.map((code) => `${code}: ${t.rates[code].buy.toFixed(2)} / ${t.rates[code].sell.toFixed(2)}`)
			.join('\n')
	);
}

interface RateTable {
	provider: string;
	fetchedAt: string;
	baseCurrency: string;
	currencies: string[];
	rates: Record<string, { buy: number; sell: number }>;
}

export async function examplesRunUnderExecute(t: ScenarioContext): Promise<void> {
	const examples = t.workflows.filter((w) => w.file.startsWith('examples/'));
	t.report.check(
		'examples/ holds at least one workflow',
		examples.length > 0,
		examples.map((e) => e.file),
	);
	const runs: Record<string, N8nRun | undefined> = {};
	for (const { wf } of examples)
		if (hasManualTrigger(wf)) runs[wf.id] = await executeWithGenericChecks(t, wf.id);

	await t.report.section('rates-to-chat example', async () => {
		const run = runs.DailyRatesToChat;
		if (!t.report.check('examples/daily-rates-to-chat.json was run', !!run)) return;
		const table = nodeOutput(run, 'Get Rates');
		const rt = table[0] as unknown as RateTable;
		t.report.check(
			'Get Rates: one item, BCA, USD/EUR/SGD with numeric buy/sell in IDR',
			table.length === 1 &&
				rt.provider === 'bca' &&
				rt.baseCurrency === 'IDR' &&
				JSON.stringify(rt.currencies) === JSON.stringify(['USD', 'EUR', 'SGD']) &&
				rt.currencies.every(
					(c) =>
						typeof rt.rates[c]?.buy === 'number' &&
						typeof rt.rates[c]?.sell === 'number' &&
						rt.rates[c].buy > 0,
				),
			table[0],
		);
		const sent = nodeOutput(run, 'Send to Chat');
		t.report.check(
			`Send to Chat: sent:true to ${t.account.number} with a message id`,
			sent.length === 1 &&
				sent[0].sent === true &&
				sent[0].phone === t.account.number &&
				typeof sent[0].id === 'string',
			sent[0],
		);
		const entry = t.sandbox.ledger().find((e) => e.kind === 'text' && e.id === sent[0]?.id);
		const want = rt ? expectedRatesText(rt) : '';
		t.report.check(
			'sandbox ledger: the rates text message, exactly as the workflow builds it',
			!!entry && entry.phone === t.account.number && entry.text === want,
			{
				ledger: entry,
				expected: want,
			},
		);
		t.report.check(
			'the text lists USD, EUR and SGD lines',
			/\nUSD: [\d.]+ \/ [\d.]+\nEUR: [\d.]+ \/ [\d.]+\nSGD: [\d.]+ \/ [\d.]+$/.test(
				entry?.text ?? '',
			),
			entry?.text,
		);
	});
}
