/**
 * Copies the icons next to the built files that reference them: each node's `file:x.svg`
 * is resolved relative to its own folder in dist/nodes, the credential's `file:../icons/x.svg`
 * relative to dist/credentials.
 */
const { src, dest, parallel } = require('gulp');

const nodeIcons = {
	Messaging: ['messaging.svg', 'messaging.dark.svg'],
	MessagingTrigger: ['messaging.svg', 'messaging.dark.svg'],
	CurrencyRate: ['currencyRate.svg', 'currencyRate.dark.svg'],
	CurrencyRateTrigger: ['currencyRate.svg', 'currencyRate.dark.svg'],
};

const copyNodeIcons = Object.entries(nodeIcons).map(([node, files]) => {
	const copy = () => src(files.map((file) => `icons/${file}`)).pipe(dest(`dist/nodes/${node}`));
	copy.displayName = `icons:${node}`;
	return copy;
});

function copySharedIcons() {
	return src('icons/*.svg').pipe(dest('dist/icons'));
}

function copyCodex() {
	return src('nodes/**/*.node.json').pipe(dest('dist/nodes'));
}

exports['build:icons'] = parallel(...copyNodeIcons, copySharedIcons, copyCodex);
