/**
 * `npm test`: unit, transport and engine tests; they need nothing but `npm ci`. The tests against a
 * real Redis (`*.queue.test.ts`) run with `npm run test:redis`, real n8n with `npm run test:n8n`.
 */
module.exports = {
	preset: 'ts-jest',
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.ts'],
	testPathIgnorePatterns: [
		'/node_modules/',
		'<rootDir>/test/n8n/',
		'<rootDir>/test/hostile/',
		'\\.queue\\.test\\.ts$',
	],
	transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
	testTimeout: 60000,
	// Most of a test waits on HTTP or timers, not the CPU: a worker per core (jest's default leaves
	// one core free).
	maxWorkers: '100%',
	setupFiles: ['<rootDir>/test/harness/env.ts'],
};
