/**
 * `npm run test:mutation` (StrykerJS): the tests that can catch a changed hold, through n8n's engine
 * against the sandbox. Not the cross-cutting suites, which read the sources (Stryker instruments
 * them) rather than run them.
 */
const base = require('./jest.config');

module.exports = {
	...base,
	testPathIgnorePatterns: [...base.testPathIgnorePatterns, '<rootDir>/test/cross-cutting/'],
};
