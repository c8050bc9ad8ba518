/**
 * `npm run test:mutation [module…]`: StrykerJS over the modules that hold the package's promises,
 * one module at a time, each against the tests that can catch a change in it (through n8n's engine
 * against the sandbox). Per-test coverage and an incremental file per module
 * (reports/stryker/<module>.json), so that a module runs again in minutes once its mutants are
 * known. Without arguments: every module. The HTML report is reports/mutation/<module>.html.
 */
import { spawnSync } from 'child_process';
import { join } from 'path';

const ROOT = join(__dirname, '..');

const REPEAT_TESTS = [
	'test/nodes/Messaging/helpers/idempotency.test.ts',
	'test/nodes/Messaging/helpers/repeats.test.ts',
	'test/nodes/Messaging/helpers/sending.test.ts',
	'test/nodes/Messaging/shapes.test.ts',
	'test/nodes/Messaging/message/sendAndWait.test.ts',
	'test/nodes/Messaging/helpers/idempotency.queue.test.ts',
	'test/nodes/Messaging/message/sendAndWait.chat.queue.test.ts',
];

/** What each hold is, its files, and the tests that pin it. */
export const MODULES: Record<string, { mutate: string[]; tests: string[] }> = {
	repeats: {
		mutate: ['nodes/Messaging/helpers/idempotency.ts'],
		tests: REPEAT_TESTS,
	},
	cause: {
		mutate: ['nodes/Messaging/helpers/cause.ts'],
		tests: REPEAT_TESTS,
	},
	claims: {
		mutate: ['nodes/Messaging/helpers/sendClaims.ts'],
		tests: REPEAT_TESTS,
	},
	answers: {
		mutate: ['nodes/shared/transport/envelope.ts', 'nodes/shared/transport/index.ts'],
		tests: [
			'test/nodes/shared/transport/',
			'test/nodes/Messaging/message/sendText.test.ts',
			'test/nodes/Messaging/account/',
			'test/nodes/CurrencyRate/rate/get.test.ts',
			// Certificates refused, and taken with Ignore SSL Issues.
			'test/nodes/shared/credentialTest.test.ts',
			// A Stop pressed before a request leaves, and a file source that breaks off mid-request.
			'test/nodes/Messaging/helpers/sending.test.ts',
			'test/nodes/Messaging/helpers/download.test.ts',
			// Answers too large, too slow or lost, proxies, secrets in every place a server echoes them.
			'test/hostile/transport.test.ts',
			'test/hostile/secrets.test.ts',
			'test/hostile/errorTexts.test.ts',
		],
	},
	phone: {
		mutate: ['nodes/shared/phone.ts'],
		tests: ['test/nodes/shared/phone', 'test/nodes/Messaging/message/sendText.test.ts'],
	},
	privateAddresses: {
		mutate: ['nodes/Messaging/helpers/privateAddresses.ts'],
		tests: [
			'test/nodes/Messaging/helpers/egress.test.ts',
			'test/nodes/Messaging/helpers/download.test.ts',
		],
	},
	sendAndWait: {
		mutate: ['nodes/Messaging/helpers/waitAndResume.ts', 'nodes/shared/chatWaits.ts'],
		tests: ['test/nodes/Messaging/message/sendAndWait'],
	},
	trigger: {
		mutate: ['nodes/MessagingTrigger/receive.ts'],
		// The chat tests reach its resume of a waiting Send and Wait.
		tests: ['test/nodes/MessagingTrigger/', 'test/nodes/Messaging/message/sendAndWait.chat'],
	},
};

const args = process.argv.slice(2);
// Flags go to Stryker: `--force` tests every mutant again. An incremental run has reported as
// surviving mutants that a fresh run kills, so scores for the record come from `--force`. A flag
// with a value is written as one word (`--concurrency=1`).
const flags = args.filter((arg) => arg.startsWith('--'));
const asked = args.filter((arg) => !arg.startsWith('--'));
const unknown = asked.filter((name) => !(name in MODULES));
if (unknown.length) {
	console.error(
		`Unknown module ${unknown.join(', ')}; the modules: ${Object.keys(MODULES).join(', ')}`,
	);
	process.exit(2);
}
let failed = false;
for (const name of asked.length ? asked : Object.keys(MODULES)) {
	const { mutate, tests } = MODULES[name];
	console.log(`\n== ${name}: ${mutate.join(', ')}`);
	const run = spawnSync(
		'npx',
		[
			'stryker',
			'run',
			'--mutate',
			mutate.join(','),
			'--incrementalFile',
			`reports/stryker/${name}.json`,
			...flags,
		],
		{
			cwd: ROOT,
			stdio: 'inherit',
			env: { ...process.env, MUTATION_TESTS: tests.join(','), MUTATION_REPORT: name },
		},
	);
	failed ||= run.status !== 0;
}
process.exit(failed ? 1 : 0);
