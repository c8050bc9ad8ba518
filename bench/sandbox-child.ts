/**
 * The sandbox in a child process, for benchmarks: its CPU (JSON parsing, base64 decoding of
 * uploaded files) and its memory are then not counted against the code being measured.
 * Talks to it through its control API (`/__sandbox/...`).
 */
import { spawn, type ChildProcess } from 'child_process';
import { join } from 'path';
import { Agent, request } from 'undici';

import type { LedgerEntry, SandboxStats } from '../sandbox/types';

export interface ChildSandbox {
	url: string;
	reset(): Promise<void>;
	stats(): Promise<SandboxStats>;
	ledger(): Promise<LedgerEntry[]>;
	close(): Promise<void>;
}

const ROOT = join(__dirname, '..');

/** `blockLimit`: messages the account may send before the sandbox refuses (its default: 10,000). */
export async function startChildSandbox({
	blockLimit,
}: { blockLimit?: number } = {}): Promise<ChildSandbox> {
	const child: ChildProcess = spawn(
		process.execPath,
		[
			'--max-old-space-size=4096',
			'-r',
			'ts-node/register/transpile-only',
			join(ROOT, 'sandbox', 'cli.ts'),
			'--port',
			'0',
			...(blockLimit ? ['--block-limit', String(blockLimit)] : []),
		],
		{ cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
	);
	const url = await new Promise<string>((resolve, reject) => {
		let seen = '';
		const onData = (chunk: Buffer) => {
			seen += chunk.toString();
			const match = /listening on (http:\/\/\S+)/.exec(seen);
			if (match) {
				child.stdout?.off('data', onData);
				child.stdout?.resume();
				resolve(match[1]);
			}
		};
		child.stdout?.on('data', onData);
		child.once('exit', (code) =>
			reject(new Error(`The sandbox process exited (code ${code}) before listening`)),
		);
	});
	const agent = new Agent({ keepAliveTimeout: 1000 });

	async function control<T>(method: 'GET' | 'POST', path: string): Promise<T> {
		const response = await request(`${url}/__sandbox/${path}`, {
			method,
			// The sandbox takes control posts as JSON only.
			headers: { 'content-type': 'application/json' },
			dispatcher: agent,
		});
		const text = await response.body.text();
		if (response.statusCode !== 200)
			throw new Error(`Sandbox control ${path}: HTTP ${response.statusCode} ${text}`);
		return JSON.parse(text) as T;
	}

	return {
		url,
		reset: async () => {
			await control('POST', 'reset');
		},
		stats: async () => await control<SandboxStats>('GET', 'stats'),
		ledger: async () => await control<LedgerEntry[]>('GET', 'ledger'),
		close: async () => {
			await agent.close();
			const exited = new Promise((resolve) => child.once('exit', resolve));
			child.kill('SIGTERM');
			await exited;
		},
	};
}
