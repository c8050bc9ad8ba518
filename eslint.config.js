/**
 * Two kinds of rules:
 *   - typescript-eslint's `recommended` set over every TypeScript folder (nodes, credentials,
 *     sandbox, test, bench, demo, scripts);
 *   - n8n's lint rules for community packages, both generations, exactly where n8n applies them:
 *     eslint-plugin-n8n-nodes-base (the `community` set on package.json, the `credentials` set on
 *     credentials/, the `nodes` set on nodes/) and @n8n/eslint-plugin-community-nodes
 *     (`recommendedWithoutN8nCloudSupport`, the set for packages with runtime dependencies:
 *     `recommended` adds n8n Cloud's rules, which allow no runtime dependencies).
 * No inline disables in nodes/ and credentials/: n8n's package scanner ignores them. Its own lint
 * legs run in `npm run lint:scan` (scripts/scanLint.mjs), with their allow-list and its reasons.
 */
const n8nNodesBase = require('eslint-plugin-n8n-nodes-base');
const { configs: communityNodes } = require('@n8n/eslint-plugin-community-nodes');
const tsParser = require('@typescript-eslint/parser');
const tseslint = require('typescript-eslint');

const plugins = { 'n8n-nodes-base': n8nNodesBase };

module.exports = [
	{
		ignores: [
			'dist/**',
			'node_modules/**',
			'coverage/**',
			'test-artifacts/**',
			'test/n8n/installs/**',
			'test/n8n/fixtures/**',
			'**/*.js',
		],
	},
	...tseslint.configs.recommended.map((config) => ({ ...config, files: ['**/*.ts'] })),
	{
		files: ['**/*.ts'],
		rules: {
			// A leading underscore marks a name kept on purpose (a parameter n8n passes, a field left out of a rest copy).
			'@typescript-eslint/no-unused-vars': [
				'error',
				{ argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
			],
		},
	},
	{
		files: ['package.json'],
		languageOptions: { parser: tsParser, parserOptions: { extraFileExtensions: ['.json'] } },
		plugins,
		rules: n8nNodesBase.configs.community.rules,
	},
	{
		files: ['credentials/**/*.ts'],
		languageOptions: { parser: tsParser, parserOptions: { sourceType: 'module' } },
		plugins,
		rules: {
			...n8nNodesBase.configs.credentials.rules,
			// Meant for n8n's own repository (slugs such as "httpRequest"); a community package links a full URL.
			'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
		},
	},
	{
		files: ['nodes/**/*.ts'],
		languageOptions: { parser: tsParser, parserOptions: { sourceType: 'module' } },
		plugins,
		rules: {
			...n8nNodesBase.configs.nodes.rules,
			// As n8n's scanner and `n8n-node lint` set them: inputs and outputs are NodeConnectionTypes.Main.
			'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
			'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
		},
	},
	{
		...communityNodes.recommendedWithoutN8nCloudSupport,
		files: ['nodes/**/*.ts', 'credentials/**/*.ts', 'package.json'],
		languageOptions: {
			parser: tsParser,
			parserOptions: { sourceType: 'module', extraFileExtensions: ['.json'] },
		},
	},
	{
		files: ['package.json'],
		rules: {
			// JSON has no line comments, so this one is here: the package has four runtime dependencies
			// (undici, libphonenumber-js, mime-types, qrcode; the README says why each), which rules it out of
			// n8n Cloud, hence recommendedWithoutN8nCloudSupport; this rule (in both of the plugin's sets)
			// would forbid them all.
			'@n8n/community-nodes/no-runtime-dependencies': 'off',
		},
	},
];
