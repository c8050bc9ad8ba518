/**
 * Fault soak: 2,000 sends through n8n's engine (Messaging version 2 → Send Text, Continue On
 * Fail, 8 in parallel) while the sandbox injects a 10 % mix of faults into the sends. Then every
 * output item is audited against the sandbox's ledger and one table is printed. Then the same
 * 2,000 items run again without faults, as n8n's Retry or a re-run would (Skip Repeats Within, on
 * by default in version 2): what was sent or may have been delivered is skipped, what certainly
 * was not is sent now, and nothing is in the ledger twice (a second table).
 *
 * Run: npm run test:soak   (exits 1 if a must-be-0 row is not 0)
 */
import '../test/harness/env';
import { startSandbox } from '../sandbox/server';
import type { FaultKind } from '../sandbox/types';
import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../test/harness/engine';
import { sendOptions } from '../test/harness/sendOptions';

const SENDS = Number(process.env.SOAK_SENDS ?? 2000);
const PARALLEL = 8;
const SECRET = 'demo-secret';
const FAULTS: FaultKind[] = [
	'http429',
	'html503',
	'dropBeforeProcessing',
	'dropAfterProcessing',
	'slow',
	'expireToken',
	'sentFalse',
	'http500AfterProcessing',
	'http503AfterProcessing',
	'rpcErrorAfterProcessing',
];
/**
 * The faults whose answer does not show the gateway did not act (WRITE_ANSWERS): the only ones
 * that may leave a send "may have been delivered". A 503 page and a drop before processing look
 * the same to a client as the ones after it.
 */
const HIDE_THE_OUTCOME: ReadonlySet<FaultKind> = new Set([
	'html503',
	'dropBeforeProcessing',
	'dropAfterProcessing',
	'slow',
	'http500AfterProcessing',
	'http503AfterProcessing',
	'rpcErrorAfterProcessing',
]);

async function main() {
	const sandbox = await startSandbox();
	sandbox.addFaults([
		{
			kinds: FAULTS,
			probability: 0.1,
			seed: Number(process.env.SOAK_SEED ?? 7),
			match: { rpcMethod: 'sendMessage' },
			retryAfterSeconds: 1,
			delayMs: 3_000, // past the credential's 2 s timeout
		},
	]);

	const items = Array.from({ length: SENDS }, (_, i) => ({
		phone: `+62 812 ${String(1000_0000 + i)}`,
		text: `soak-${i}`,
	}));
	const workflow = singleNodeWorkflow(
		'messaging',
		{
			resource: 'message',
			operation: 'sendText',
			phone: '={{ $json.phone }}',
			text: '={{ $json.text }}',
			// Pacing off (version 2 pauses 2–6 s between messages): the soak is about faults.
			options: sendOptions({ parallel: PARALLEL }),
		},
		items,
		{ continueOnFail: true, typeVersion: 1 },
	);
	const started = Date.now();
	const run = await runWorkflow(workflow, sandboxCredential(sandbox.url, { timeoutSeconds: 2 }));
	const seconds = (Date.now() - started) / 1000;
	await new Promise((resolve) => setTimeout(resolve, 3_500)); // let slow answers finish

	const output = run.output('Node');
	const ledger = sandbox.ledger();
	const requests = sandbox.requests();
	const recordedCount = new Map<string, number>();
	for (const entry of ledger)
		recordedCount.set(entry.text ?? '', (recordedCount.get(entry.text ?? '') ?? 0) + 1);
	const faultsByText = new Map<string, FaultKind[]>();
	for (const r of requests) {
		const text = typeof r.params?.body === 'string' ? r.params.body : undefined;
		if (text && r.fault) faultsByText.set(text, [...(faultsByText.get(text) ?? []), r.fault]);
	}
	const tokens = new Set(
		requests.map((r) => r.authorization?.replace(/^Bearer /, '')).filter((t): t is string => !!t),
	);

	const rows = {
		sentRecordedOnce: 0,
		failedNotRecorded: 0,
		maybeDeliveredRecorded: 0,
		maybeDeliveredNotRecorded: 0,
		maybeDeliveredWithoutCause: 0,
		notMaybeAfterHiddenOutcome: 0,
		sentButNotRecorded: 0,
		failedButRecordedWithoutWarning: 0,
		recordedTwice: 0,
		lost: 0,
		secretsInOutput: 0,
	};
	const byItem = new Map<number, (typeof output)[number]>();
	for (const item of output) {
		const paired = item.pairedItem;
		const index = typeof paired === 'object' && !Array.isArray(paired) ? paired.item : -1;
		byItem.set(index, item);
	}
	for (let i = 0; i < SENDS; i++) {
		const text = `soak-${i}`;
		const recorded = recordedCount.get(text) ?? 0;
		if (recorded > 1) rows.recordedTwice++;
		const item = byItem.get(i);
		if (!item) {
			rows.lost++;
			continue;
		}
		const json = item.json;
		const maybe = (json.details as { deliveryUnknown?: unknown } | undefined)?.deliveryUnknown;
		const causes = faultsByText.get(text) ?? [];
		if (maybe !== true && causes.some((cause) => HIDE_THE_OUTCOME.has(cause)))
			rows.notMaybeAfterHiddenOutcome++;
		const serialized = JSON.stringify(item);
		if (serialized.includes(SECRET) || [...tokens].some((t) => serialized.includes(t)))
			rows.secretsInOutput++;
		if (json.sent === true) {
			if (recorded === 1) rows.sentRecordedOnce++;
			else rows.sentButNotRecorded++;
		} else if (maybe === true) {
			if (recorded) rows.maybeDeliveredRecorded++;
			else rows.maybeDeliveredNotRecorded++;
			if (!causes.some((cause) => HIDE_THE_OUTCOME.has(cause))) rows.maybeDeliveredWithoutCause++;
			// The warning must be in the message people read and alert on, not only in the description.
			if (!/the message may have been delivered/.test(String(json.error)))
				rows.maybeDeliveredWithoutCause++;
		} else if (recorded === 0) rows.failedNotRecorded++;
		else rows.failedButRecordedWithoutWarning++;
	}

	const faultCounts = new Map<string, number>();
	for (const r of requests)
		if (r.fault) faultCounts.set(r.fault, (faultCounts.get(r.fault) ?? 0) + 1);

	const table: Array<[string, number, string]> = [
		['sent, recorded once', rows.sentRecordedOnce, ''],
		['failed, not recorded', rows.failedNotRecorded, ''],
		[
			'failed, error says "may have been delivered", recorded',
			rows.maybeDeliveredRecorded,
			'drop-after / timeout / 500, 503, error after processing',
		],
		[
			'failed, error says "may have been delivered", not recorded',
			rows.maybeDeliveredNotRecorded,
			'drop-before / 503 page look the same to a client',
		],
		[
			'"may have been delivered" without a fault that hides the outcome',
			rows.maybeDeliveredWithoutCause,
			'must be 0',
		],
		[
			'sent or "not sent" after a fault that hides the outcome',
			rows.notMaybeAfterHiddenOutcome,
			'must be 0',
		],
		['output says sent, ledger has no record', rows.sentButNotRecorded, 'must be 0'],
		['failed without warning, but recorded', rows.failedButRecordedWithoutWarning, 'must be 0'],
		['recorded twice', rows.recordedTwice, 'must be 0'],
		['lost (no output item)', rows.lost, 'must be 0'],
		['secrets or tokens in output or errors', rows.secretsInOutput, 'must be 0'],
	];
	console.log(
		`\nFault soak: ${SENDS} sends, ${PARALLEL} parallel, ${seconds.toFixed(1)} s, ${output.length} output items`,
	);
	console.log(`Faults injected: ${[...faultCounts].map(([k, v]) => `${k} ${v}`).join(', ')}`);
	console.log(`Token requests: ${sandbox.stats().tokensIssued.wa}\n`);
	const width = Math.max(...table.map(([label]) => label.length));
	console.log(`${'outcome'.padEnd(width)} | ${'items'.padStart(5)} | note`);
	console.log(`${'-'.repeat(width)}-|-------|-----------`);
	for (const [label, count, note] of table)
		console.log(`${label.padEnd(width)} | ${String(count).padStart(5)} | ${note}`);
	const total = table.slice(0, 4).reduce((sum, [, n]) => sum + n, 0);
	console.log(`\naccounted for: ${total} of ${SENDS}`);

	// The same items again, faults off: the re-run sends exactly what certainly was not sent.
	const certainlyNotSent = new Set<number>();
	const kept = new Set<number>();
	for (let i = 0; i < SENDS; i++) {
		const json = byItem.get(i)?.json;
		if (json?.sent === true || (json?.details as { deliveryUnknown?: unknown })?.deliveryUnknown)
			kept.add(i);
		else certainlyNotSent.add(i);
	}
	sandbox.clearFaults();
	const ledgerBefore = sandbox.ledger().length;
	const rerun = await runWorkflow(workflow, sandboxCredential(sandbox.url, { timeoutSeconds: 2 }));
	const again = new Map<number, (typeof output)[number]>();
	for (const item of rerun.output('Node')) {
		const paired = item.pairedItem;
		again.set(typeof paired === 'object' && !Array.isArray(paired) ? paired.item : -1, item);
	}
	const sentNow = new Set(
		sandbox
			.ledger()
			.slice(ledgerBefore)
			.map((entry) => Number((entry.text ?? '').replace('soak-', ''))),
	);
	const finalCount = new Map<string, number>();
	for (const entry of sandbox.ledger())
		finalCount.set(entry.text ?? '', (finalCount.get(entry.text ?? '') ?? 0) + 1);
	const rerunRows: Array<[string, number, string]> = [
		[
			'skipped: sent or may have been delivered by the first run',
			[...kept].filter((i) => again.get(i)?.json.skipped === true).length,
			`of ${kept.size}`,
		],
		[
			'sent now: certainly not sent by the first run',
			[...certainlyNotSent].filter((i) => sentNow.has(i) && again.get(i)?.json.sent === true)
				.length,
			`of ${certainlyNotSent.size}`,
		],
		[
			'kept yet sent now, or certainly not sent yet not sent now',
			[...kept].filter((i) => sentNow.has(i)).length +
				[...certainlyNotSent].filter((i) => !sentNow.has(i)).length,
			'must be 0',
		],
		[
			'recorded twice after both runs',
			[...finalCount.values()].filter((n) => n > 1).length,
			'must be 0',
		],
	];
	console.log(`
The same ${SENDS} items again, no faults (Skip Repeats Within, 8 h):
`);
	for (const [label, count, note] of rerunRows)
		console.log(`${label.padEnd(width)} | ${String(count).padStart(5)} | ${note}`);

	await sandbox.close();
	const mustBeZero = [...table, ...rerunRows]
		.filter(([, , note]) => note === 'must be 0')
		.some(([, n]) => n !== 0);
	const rerunComplete = rerunRows[0][1] === kept.size && rerunRows[1][1] === certainlyNotSent.size;
	if (mustBeZero || total !== SENDS || run.error || rerun.error || !rerunComplete) {
		console.error('SOAK FAILED', run.error?.message ?? '');
		process.exit(1);
	}
	console.log('1 passed, 0 failed');
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
