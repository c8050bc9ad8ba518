/**
 * Copies what the build does not compile: the icons to dist/icons (the nodes reference
 * `file:../../icons/x.svg` from dist/nodes/<Node>/, the credential `file:../icons/x.svg` from
 * dist/credentials/, as n8n's current starter lays them out). The codex files (`*.node.json`) are
 * emitted by tsc (tsconfig.json includes them), as in n8n's `n8n-node build`: both builds give the
 * same dist/ (test/cross-cutting/nodeCliBuild.test.ts).
 */
const { src, dest } = require('gulp');

function copyIcons() {
	return src('icons/*.svg').pipe(dest('dist/icons'));
}

exports['build:icons'] = copyIcons;
