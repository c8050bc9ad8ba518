/**
 * The Currency Rate Trigger under `n8n start`: examples/usd-alert-to-chat.json, polling every minute
 * (the example polls every 15 minutes; only Poll Times is changed), is activated: its first poll
 * sets the baseline and starts nothing; the sandbox moves the BCA USD sell rate by +0.8 %; the next
 * tick starts one execution whose trigger item is that move and whose Messaging node sends the
 * alert; the tick after that starts nothing (never twice for the same move).
 */
import { ratesFor } from '../../../sandbox/rates';
import {
	NODE_TYPES,
	getExecution,
	listExecutions,
	nodesOf,
	waitForExecution,
	type ScenarioContext,
} from '../lib';

const EXAMPLE_ID = 'UsdAlertToChat';
const TRIGGER_TYPE = NODE_TYPES.currencyRateTrigger;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function currencyRateTriggerFiresOnMove(t: ScenarioContext): Promise<void> {
	const { report, server: srv, sandbox: sb } = t;
	const { wf } = t.workflow(EXAMPLE_ID);
	const trigger = nodesOf(wf).find((n) => n.type === TRIGGER_TYPE);
	if (!report.check('examples/usd-alert-to-chat.json has a Currency Rate Trigger', !!trigger))
		return;
	const everyMinute = {
		...wf,
		nodes: wf.nodes.map((node) =>
			(node as { type: string }).type === TRIGGER_TYPE
				? {
						...node,
						parameters: {
							...(node as { parameters: object }).parameters,
							pollTimes: { item: [{ mode: 'everyMinute' }] },
						},
					}
				: node,
		),
	};
	await t.importWorkflow(everyMinute as typeof wf);

	const original = ratesFor('bca')!.find((row) => row.name === 'USD')!;
	const ledgerBefore = sb.ledger().length;
	const ratesRequests = () =>
		sb
			.requests()
			.filter((r) => r.path === '/api/rate/1.0/get' && r.params?.currency_id_provider === 'bca')
			.length;
	const requestsBefore = ratesRequests();
	const activatedAt = new Date(Date.now() - 1000);
	const act = await report.timed('activate usd-alert-to-chat (every minute)', () =>
		srv.activateWorkflow(EXAMPLE_ID),
	);
	try {
		report.check(
			'activate: publication "published"',
			act.publication?.status === 'published' ||
				(act.publication === undefined && act.active === true),
			act.publication,
		);
		// The first poll runs at activation: one rates request, and no execution (baseline). n8n's
		// every-minute tick fires at a random second of each minute, so one may fall inside this wait.
		const deadline = Date.now() + 20_000;
		while (ratesRequests() === requestsBefore && Date.now() < deadline) await sleep(250);
		await sleep(1500);
		const mayHaveTicked = Math.ceil((Date.now() - activatedAt.getTime()) / 60_000);
		const polls = ratesRequests() - requestsBefore;
		report.check(
			'activation ran the first poll: one rates request (plus one per minute of waiting)',
			polls >= 1 && polls <= 1 + mayHaveTicked,
			{ requests: polls, secondsWaited: Math.round((Date.now() - activatedAt.getTime()) / 1000) },
		);
		report.check(
			'the first poll started no execution (it sets the baseline)',
			(await listExecutions(srv, { workflowId: EXAMPLE_ID })).filter(
				(e) => new Date(e.startedAt) >= activatedAt,
			).length === 0,
		);

		const moved = sb.moveRate({ provider: 'bca', currency: 'USD', percent: 0.8 });
		const movedAt = new Date();
		const exec = await report.timed('execution after the move (next minute tick)', () =>
			waitForExecution(srv, { workflowId: EXAMPLE_ID }, { after: activatedAt, timeoutMs: 100_000 }),
		);
		report.check(
			'one successful trigger execution after the move',
			exec.status === 'success' && exec.mode === 'trigger',
			{ id: exec.id, status: exec.status, mode: exec.mode },
		);
		const full = await getExecution(srv, exec.id);
		const item =
			full.data?.resultData.runData[trigger!.name]?.[0]?.data?.main?.[0]?.[0]?.json ?? {};
		report.check(
			'trigger item: BCA USD sell moved, previous and current values from the sandbox',
			item.provider === 'bca' &&
				item.currency === 'USD' &&
				item.event === 'moved' &&
				item.field === 'sell' &&
				item.previousValue === Number(original.rate_sell) &&
				item.currentValue === Number(moved.rate_sell),
			item,
		);
		const sent = sb.ledger().slice(ledgerBefore);
		const percent =
			((Number(moved.rate_sell) - Number(original.rate_sell)) / Number(original.rate_sell)) * 100;
		report.check(
			'Send Alert sent one message with the move',
			sent.length === 1 &&
				sent[0].text ===
					`BCA USD sell rate moved +${percent.toFixed(2)}%: ${Number(original.rate_sell).toFixed(2)} → ${Number(moved.rate_sell).toFixed(2)} IDR`,
			sent,
		);

		// The next tick sees the same rate: nothing new.
		const requestsAfterEvent = ratesRequests();
		const tickDeadline = Date.now() + 75_000;
		while (ratesRequests() === requestsAfterEvent && Date.now() < tickDeadline) await sleep(500);
		await sleep(3000);
		const executions = (await listExecutions(srv, { workflowId: EXAMPLE_ID })).filter(
			(e) => new Date(e.startedAt) >= activatedAt,
		);
		report.check(
			'the next tick polled again and started nothing (never twice for one move)',
			ratesRequests() > requestsAfterEvent &&
				executions.length === 1 &&
				sb.ledger().length - ledgerBefore === 1,
			{
				executions: executions.map((e) => `${e.id}:${e.status}`),
				sent: sb.ledger().length - ledgerBefore,
				secondsSinceMove: Math.round((Date.now() - movedAt.getTime()) / 1000),
			},
		);
	} finally {
		await srv.deactivateWorkflow(EXAMPLE_ID);
		// Put the rate back for the scenarios that follow.
		sb.moveRate({
			provider: 'bca',
			currency: 'USD',
			buy: Number(original.rate_buy),
			sell: Number(original.rate_sell),
			average: Number(original.rate_avg),
		});
	}
}
