// StrykerJS, run per module by `npm run test:mutation` (scripts/mutation.ts), which names the
// files to mutate and, through MUTATION_TESTS, the tests that pin them (jest.mutation.config.js).
const report = process.env.MUTATION_REPORT ?? 'all';

export default {
	testRunner: 'jest',
	jest: { configFile: 'jest.mutation.config.js', enableFindRelatedTests: false },
	coverageAnalysis: 'perTest',
	incremental: true,
	// A static mutant (a constant's value) needs every test run again: too slow for two cores.
	ignoreStatic: true,
	concurrency: 2,
	timeoutMS: 20_000,
	dryRunTimeoutMinutes: 20,
	reporters: ['clear-text', 'progress', 'html', 'json'],
	htmlReporter: { fileName: `reports/mutation/${report}.html` },
	jsonReporter: { fileName: `reports/mutation/${report}.json` },
	thresholds: { high: 90, low: 85, break: null },
	tempDirName: '.stryker-tmp',
};
