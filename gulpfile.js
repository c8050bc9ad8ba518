/**
 * Copies what the build does not compile: the icons to dist/icons (the nodes reference
 * `file:../../icons/x.svg` from dist/nodes/<Node>/, the credential `file:../icons/x.svg` from
 * dist/credentials/, as n8n's current starter lays them out) and the codex files next to the nodes.
 */
const { src, dest, parallel } = require('gulp');

function copyIcons() {
	return src('icons/*.svg').pipe(dest('dist/icons'));
}

function copyCodex() {
	return src('nodes/**/*.node.json').pipe(dest('dist/nodes'));
}

exports['build:icons'] = parallel(copyIcons, copyCodex);
