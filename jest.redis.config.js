/**
 * `npm run test:redis`: the tests of queue mode's shared state against a real Redis (Debian's
 * `redis-server`, started by each file on a free port). Without the server they fail, saying so.
 */
const base = require('./jest.config');

module.exports = {
	...base,
	testMatch: ['**/*.queue.test.ts'],
	testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/n8n/', '<rootDir>/test/hostile/'],
};
