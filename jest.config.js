/** Unit, transport and engine tests. Real-n8n tests live in test/n8n and run with `npm run test:n8n`. */
module.exports = {
	preset: 'ts-jest',
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.ts'],
	testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/n8n/', '<rootDir>/test/hostile/'],
	transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
	testTimeout: 60000,
	setupFiles: ['<rootDir>/test/harness/env.ts'],
};
