/**
 * The tests StrykerJS runs against a mutant (`npm run test:mutation`, scripts/mutation.ts): those
 * that pin the module under test, given in MUTATION_TESTS (files, folders ending in "/", or a
 * prefix of file names), through n8n's engine against the sandbox.
 */
const base = require('./jest.config');

const given = (process.env.MUTATION_TESTS ?? '').split(',').filter(Boolean);

module.exports = {
	...base,
	testSequencer: '<rootDir>/scripts/fastestFirst.mjs',
	// A queue-mode or hostile test named here runs too (a queue test starts its own redis-server).
	testPathIgnorePatterns: base.testPathIgnorePatterns.filter(
		(pattern) => !pattern.includes('queue') && !pattern.includes('hostile'),
	),
	testMatch: given.length
		? given.map((path) =>
				path.endsWith('/')
					? `<rootDir>/${path}**/*.test.ts`
					: path.endsWith('.ts')
						? `<rootDir>/${path}`
						: `<rootDir>/${path}*.test.ts`,
			)
		: base.testMatch,
};
