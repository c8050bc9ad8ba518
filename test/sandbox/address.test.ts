/**
 * One sandbox address everywhere a user reads it: the README, docs/, CONTRIBUTING, the
 * credential's Base URL hint, and what `npm run sandbox` and `npm run n8n` listen on.
 */
import { readFileSync, readdirSync } from 'fs';
import { join } from 'path';

import { SANDBOX_PORT } from '../../sandbox/options';

const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

const TEXTS = [
	'README.md',
	'CONTRIBUTING.md',
	'credentials/MessagingRateApi.credentials.ts',
	...readdirSync(join(ROOT, 'docs'))
		.filter((file) => file.endsWith('.md'))
		.map((file) => `docs/${file}`),
];

/** Every loopback address with a port written in a text, with the file it is in. */
function loopbackPorts(): Array<[string, number]> {
	return TEXTS.flatMap((file) =>
		[...read(file).matchAll(/(?:127\.0\.0\.1|localhost):(\d+)/g)].map((match): [string, number] => [
			file,
			Number(match[1]),
		]),
	);
}

describe('the sandbox address', () => {
	it('is the same port in the README, docs, CONTRIBUTING and the credential hint', () => {
		const found = loopbackPorts();
		expect(found.map(([file]) => file)).toEqual(
			expect.arrayContaining(['README.md', 'credentials/MessagingRateApi.credentials.ts']),
		);
		expect(found.filter(([, port]) => port !== SANDBOX_PORT)).toEqual([]);
	});

	it('is the port npm run sandbox and npm run n8n start it on', () => {
		expect(read('sandbox/cli.ts')).toContain('String(SANDBOX_PORT)');
		expect(read('test/n8n/n8n-dev.ts')).toContain('port: await portOrFree(SANDBOX_PORT)');
	});
});
