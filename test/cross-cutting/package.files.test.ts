/**
 * `npm run package` (scripts/package.ts) refuses a tarball that lacks a file n8n loads: what plain
 * `npm pack` produces when the repository's ignore-scripts skips the build, and a tarball missing
 * one codex file or icon. The real run of the README's command is in the real-n8n tests.
 */
import { readFileSync, readdirSync } from 'fs';
import { join } from 'path';
import { missingFiles, requiredFiles } from '../../scripts/package';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Parameters<
	typeof missingFiles
>[0];
const icons = readdirSync(join(root, 'icons')).filter((f) => f.endsWith('.svg'));

describe('npm run package: the files a complete package holds', () => {
	it('lists every node and credential of the n8n block, each codex file and every icon', () => {
		const required = requiredFiles(pkg, icons);
		expect(required).toEqual(
			expect.arrayContaining([
				'dist/nodes/Messaging/Messaging.node.js',
				'dist/nodes/Messaging/Messaging.node.json',
				'dist/nodes/MessagingAccountTrigger/MessagingAccountTrigger.node.js',
				'dist/credentials/MessagingRateApi.credentials.js',
				'dist/icons/messaging.svg',
			]),
		);
		expect(required).toHaveLength(1 + 5 * 2 + 1 + icons.length);
	});

	it('refuses what plain npm pack gives without the build (LICENSE, README.md, package.json)', () => {
		const missing = missingFiles(pkg, icons, ['LICENSE', 'README.md', 'package.json']);
		expect(missing).toEqual(requiredFiles(pkg, icons).filter((f) => f !== 'package.json'));
	});

	it('names the one codex file a tarball lacks', () => {
		const listing = requiredFiles(pkg, icons).filter(
			(f) => f !== 'dist/nodes/CurrencyRate/CurrencyRate.node.json',
		);
		expect(missingFiles(pkg, icons, listing)).toEqual([
			'dist/nodes/CurrencyRate/CurrencyRate.node.json',
		]);
		expect(missingFiles(pkg, icons, requiredFiles(pkg, icons))).toEqual([]);
	});

	it('refuses a package.json whose n8n block names no node', () => {
		expect(missingFiles({ ...pkg, n8n: { credentials: [] } }, [], ['package.json'])).toEqual([
			'package.json: "n8n".nodes (empty)',
			'package.json: "n8n".credentials (empty)',
		]);
	});
});
