/**
 * The hostile-input suite (`npm run test:hostile`): worst-case inputs from senders and servers,
 * with time measured as ratios in one run (test/harness/hostile.ts). One file at a time, so that the
 * timings of one file do not disturb another's.
 */
const base = require('./jest.config');

module.exports = {
	...base,
	roots: ['<rootDir>/test/hostile'],
	testPathIgnorePatterns: ['/node_modules/'],
	maxWorkers: 1,
	testTimeout: 300000,
};
