/**
 * n8n's lint rules for community packages (eslint-plugin-n8n-nodes-base): the `community`
 * set on package.json, the `credentials` set on credentials/, the `nodes` set on nodes/.
 */
const n8nNodesBase = require('eslint-plugin-n8n-nodes-base');
const tsParser = require('@typescript-eslint/parser');

const plugins = { 'n8n-nodes-base': n8nNodesBase };

module.exports = [
	{ ignores: ['dist/**', 'node_modules/**', 'test/**', 'sandbox/**', 'bench/**', 'demo/**', '**/*.js'] },
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
		rules: n8nNodesBase.configs.nodes.rules,
	},
];
