/**
 * Process and file helpers shared by the real-n8n modules: paths, logging, free ports, running a
 * command with a time limit.
 */
import { spawn } from 'child_process';
import { mkdtempSync } from 'fs';
import { createServer } from 'net';
import { tmpdir } from 'os';
import { join, resolve } from 'path';

export const REPO_ROOT = resolve(__dirname, '..', '..', '..');
export const ARTIFACTS_DIR = join(REPO_ROOT, 'test-artifacts', 'n8n');

export function log(msg: string): void {
	process.stderr.write(`[n8n-e2e ${new Date().toISOString().slice(11, 23)}] ${msg}\n`);
}

export function sleep(ms: number): Promise<void> {
	return new Promise((r) => setTimeout(r, ms));
}

/** A fresh temp folder (e.g. a user folder for one n8n instance: n8n's data goes to <folder>/.n8n). */
export function tempFolder(prefix: string): string {
	return mkdtempSync(join(tmpdir(), prefix));
}

/** A TCP port that was free a moment ago. */
export async function freePort(): Promise<number> {
	return await new Promise((res, rej) => {
		const srv = createServer();
		srv.unref();
		srv.on('error', rej);
		srv.listen(0, '127.0.0.1', () => {
			const addr = srv.address();
			const port = typeof addr === 'object' && addr ? addr.port : 0;
			srv.close(() => res(port));
		});
	});
}

export interface RunResult {
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	ms: number;
}

/** Runs a command to its end (killed after timeoutMs), collecting its output. */
export function runCommand(
	cmd: string,
	args: string[],
	opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<RunResult> {
	const started = Date.now();
	return new Promise((res, rej) => {
		const child = spawn(cmd, args, {
			cwd: opts.cwd,
			env: opts.env ?? process.env,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let stdout = '';
		let stderr = '';
		child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
		child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
		const timer = opts.timeoutMs
			? setTimeout(() => {
					stderr += `\n[n8n-e2e] timed out after ${opts.timeoutMs} ms, killing pid ${child.pid}`;
					child.kill('SIGKILL');
				}, opts.timeoutMs)
			: undefined;
		child.on('error', rej);
		child.on('close', (code, signal) => {
			if (timer) clearTimeout(timer);
			res({ code, signal, stdout, stderr, ms: Date.now() - started });
		});
	});
}

export function mustSucceed(what: string, r: RunResult): RunResult {
	if (r.code !== 0) {
		throw new Error(
			`${what} failed (exit ${r.code ?? r.signal}) after ${r.ms} ms\n--- stdout ---\n${tail(r.stdout)}\n--- stderr ---\n${tail(r.stderr)}`,
		);
	}
	return r;
}

function tail(s: string, lines = 60): string {
	return s.split('\n').slice(-lines).join('\n');
}

/** The environment without the calling npm's exported configuration (npm_*) and the driver's Node/ts-node settings. */
export function cleanEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = { ...base };
	for (const k of Object.keys(env)) {
		if (k === 'NODE_OPTIONS' || k.startsWith('TS_NODE_') || k.startsWith('npm_')) delete env[k];
	}
	return env;
}
