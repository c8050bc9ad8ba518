/**
 * Start-up: n8n loads every installed node at each start (and each queue worker does). Loading
 * the package's five nodes and its credential loads no library an operation needs only when it
 * runs (undici, the phone metadata, the QR encoder, the MIME and Content-Disposition readers,
 * ioredis): those load on first use (a `require` inside the function). `npm run bench:startup`
 * measures the time and heap; this test checks what is loaded, in a fresh process.
 */
import { execFileSync } from 'child_process';
import { readFileSync } from 'fs';
import { join } from 'path';

const ROOT = join(__dirname, '..', '..');

/** The package.json `n8n` entries as their TypeScript sources. */
function sources(): string[] {
	const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
		n8n: { nodes: string[]; credentials: string[] };
	};
	return [...pkg.n8n.nodes, ...pkg.n8n.credentials].map((file) =>
		join(ROOT, file.replace(/^dist\//, '').replace(/\.js$/, '.ts')),
	);
}

/** The packages under node_modules a fresh process loads, after n8n-workflow (n8n has it loaded), by requiring `files` and running `then`. */
function packagesLoaded(files: string[], then = ''): string[] {
	const script = `
require('n8n-workflow');
const before = new Set(Object.keys(require.cache));
for (const file of ${JSON.stringify(files)}) for (const value of Object.values(require(file)))
	if (typeof value === 'function' && value.prototype) void new value().description;
${then}
const names = new Set();
for (const path of Object.keys(require.cache)) {
	if (before.has(path)) continue;
	const match = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(path.slice(path.lastIndexOf('node_modules')));
	if (match) names.add(match[1]);
}
process.stdout.write(JSON.stringify([...names]));`;
	const out = execFileSync(
		process.execPath,
		['-r', 'ts-node/register/transpile-only', '-e', script],
		{ cwd: ROOT, encoding: 'utf8' },
	);
	return JSON.parse(out) as string[];
}

const ON_FIRST_USE = [
	'undici',
	'libphonenumber-js',
	'qrcode',
	'mime-types',
	'content-disposition',
	'ioredis',
];

describe('start-up', () => {
	it('loading the nodes and the credential loads none of the libraries operations load on first use', () => {
		const loaded = packagesLoaded(sources());
		expect(loaded.filter((name) => ON_FIRST_USE.includes(name))).toEqual([]);
	}, 60_000);

	it('a phone number read and a file name looked up load their libraries then', () => {
		const loaded = packagesLoaded(
			sources(),
			`const { normalizePhone } = require(${JSON.stringify(join(ROOT, 'nodes/shared/phone.ts'))});
if (!('phone' in normalizePhone('+62 812-8877-6713'))) throw new Error('not read');
const { extensionFor } = require(${JSON.stringify(join(ROOT, 'nodes/shared/fileName.ts'))});
void extensionFor('application/x-7z-compressed');`,
		);
		expect(loaded).toEqual(expect.arrayContaining(['libphonenumber-js', 'mime-types']));
	}, 60_000);
});
