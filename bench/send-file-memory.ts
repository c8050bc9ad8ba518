/**
 * Memory used by Send File for a large file, in n8n's two binary-data modes:
 *   - memory mode: the file is a base64 string in the item (`binary.data`); the node must send
 *     that string as it is (goal: peak growth <= 1.5 x the base64 size);
 *   - filesystem mode: the file is on disk (`binary.id`); the node must stream it into the
 *     request (goal: peak growth <= 32 MiB whatever the file size);
 *   - url mode (File Source "URL"): the sandbox serves the file and the node streams the
 *     download into the request (goal: the filesystem mode's figures; the run prints the ratio).
 *
 * Each case runs in a fresh worker process (so one case's freed pages never hide another's
 * growth), and the sandbox in one more child process (so its own parsing of a 67 MB body is not
 * counted). In the worker the baseline is taken when n8n starts the Messaging node, after two
 * garbage collections: everything that exists before (the input items, the engine) is not growth.
 * Peak growth is measured until the node ends, as
 *   - RSS: the kernel's high-water mark (VmHWM, reset through /proc/self/clear_refs at the
 *     baseline), else the highest sample;
 *   - `external` (memory outside the JS heap; it already includes `arrayBuffers`, i.e. every
 *     Buffer, so the two are not added) and `heapUsed`: sampled every 2 ms.
 * The sandbox's ledger checks that the file arrived whole (SHA-256).
 *
 * What V8 has not yet collected counts as growth here: the encoder makes short-lived Buffers and
 * strings, and V8 collects them lazily (after some tens of MB). `GC_EVERY_MS=100` in the
 * environment forces a full collection every 100 ms while the node runs, which shows what is
 * really held (slow: for diagnosis, not for the goal).
 *
 * Run: npx ts-node --transpile-only bench/send-file-memory.ts [sizes in MB, default 50] [filesystem-only sizes, default 10,100]
 */
import '../test/harness/env';

import { execFile } from 'child_process';
import { createHash, randomBytes } from 'crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { setFlagsFromString } from 'v8';
import { runInNewContext } from 'vm';

import type { IBinaryData } from 'n8n-workflow';

import { startChildSandbox } from './sandbox-child';

type Mode = 'memory' | 'filesystem' | 'url';
const MiB = 1024 * 1024;
/** GC_EVERY_MS=100: a full garbage collection every 100 ms while the node runs (see main). */
const GC_EVERY_MS = Number(process.env.GC_EVERY_MS ?? 0);

interface WorkerResult {
	mode: Mode;
	fileBytes: number;
	base64Bytes: number;
	sha256: string;
	baselineRss: number;
	rssGrowth: number;
	rssGrowthSource: 'VmHWM' | 'samples';
	externalGrowth: number;
	arrayBuffersGrowth: number;
	heapGrowth: number;
	samples: number;
	nodeMs: number;
	output: Record<string, unknown>;
	/** The same measurement for the 1 KB warm-up send. */
	warmUp: { rssGrowth: number; externalGrowth: number; heapGrowth: number };
}

// ---------------------------------------------------------------------------------------------
// Worker: one case, one process

function gcFunction(): () => void {
	// `--expose-gc` for this process only, without asking the caller to pass Node flags.
	setFlagsFromString('--expose-gc');
	return runInNewContext('gc') as () => void;
}

function readHighWaterRss(): number | undefined {
	try {
		const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
		return match ? Number(match[1]) * 1024 : undefined;
	} catch {
		return undefined;
	}
}

/** Resets the kernel's peak-RSS counter of this process (Linux); false where not possible. */
function resetHighWaterRss(): boolean {
	try {
		writeFileSync('/proc/self/clear_refs', '5');
		return true;
	} catch {
		return false;
	}
}

async function worker(mode: Mode, megabytes: number, sandboxUrl: string): Promise<WorkerResult> {
	const gc = gcFunction();
	const { runWorkflow, sandboxCredential, setBinaryDataMode, singleNodeWorkflow, storeBinary } =
		await import('../test/harness/engine');

	/** Runs one Send File of `binary` (or of a URL) and measures the node's memory growth. */
	async function measureSend(binary: IBinaryData | { url: string }) {
		const parameters = {
			resource: 'message',
			operation: 'sendFile',
			phone: '+62 812-8877-6713',
			caption: 'Large file',
		};
		const workflow =
			'url' in binary
				? singleNodeWorkflow(
						'messaging',
						{
							...parameters,
							fileSource: 'url',
							fileUrl: binary.url,
							downloadOptions: { maxSizeMb: 4096 },
						},
						[{ json: {} }],
					)
				: singleNodeWorkflow('messaging', parameters, [{ json: {}, binary: { data: binary } }]);

		let measuring = false;
		let baseline = process.memoryUsage();
		let peak = { rss: 0, external: 0, arrayBuffers: 0, heap: 0 };
		let samples = 0;
		let hwmReset = false;
		const sample = () => {
			if (!measuring) return;
			const now = process.memoryUsage();
			samples++;
			peak = {
				rss: Math.max(peak.rss, now.rss),
				external: Math.max(peak.external, now.external),
				arrayBuffers: Math.max(peak.arrayBuffers, now.arrayBuffers),
				heap: Math.max(peak.heap, now.heapUsed),
			};
		};
		const timer = setInterval(sample, 2);
		// Diagnosis only: frequent full collections show what is live rather than not yet collected.
		const collector =
			GC_EVERY_MS > 0 ? setInterval(() => measuring && gc(), GC_EVERY_MS) : undefined;

		const run = await runWorkflow(
			workflow,
			sandboxCredential(sandboxUrl, { timeoutSeconds: 300 }),
			{
				onNodeExecuteBefore: (nodeName) => {
					if (nodeName !== 'Node') return;
					gc();
					gc();
					baseline = process.memoryUsage();
					peak = {
						rss: baseline.rss,
						external: baseline.external,
						arrayBuffers: baseline.arrayBuffers,
						heap: baseline.heapUsed,
					};
					hwmReset = resetHighWaterRss();
					measuring = true;
				},
				onNodeExecuteAfter: (nodeName) => {
					if (nodeName !== 'Node') return;
					sample();
					measuring = false;
				},
			},
		);
		clearInterval(timer);
		clearInterval(collector);
		if (run.error) throw run.error;
		const highWater = hwmReset ? readHighWaterRss() : undefined;
		const output = run.output('Node')[0]?.json ?? {};
		return {
			baselineRss: baseline.rss,
			rssGrowth: (highWater ?? peak.rss) - baseline.rss,
			rssGrowthSource: highWater !== undefined ? ('VmHWM' as const) : ('samples' as const),
			externalGrowth: peak.external - baseline.external,
			arrayBuffersGrowth: peak.arrayBuffers - baseline.arrayBuffers,
			heapGrowth: peak.heap - baseline.heapUsed,
			samples,
			nodeMs: run.run.data.resultData.runData.Node[0].executionTime,
			output: { sent: output.sent, fileSize: output.fileSize, fileName: output.fileName },
		};
	}

	if (mode === 'url') {
		// The sandbox serves the file (generated as it is written); the node downloads it while sending.
		const { fileSha256 } = await import('../sandbox/files');
		const fileUrl = (size: number) =>
			`${sandboxUrl}/files/large.bin?size=${size}&type=application/octet-stream`;
		const warmUp = await measureSend({ url: fileUrl(1000) });
		const fileBytes = megabytes * 1_000_000;
		const measured = await measureSend({ url: fileUrl(fileBytes) });
		return {
			mode,
			fileBytes,
			base64Bytes: Math.ceil(fileBytes / 3) * 4,
			sha256: fileSha256(fileBytes),
			...measured,
			warmUp,
		};
	}

	const storage = mkdtempSync(join(tmpdir(), 'send-file-memory-'));
	try {
		await setBinaryDataMode(mode === 'filesystem' ? 'filesystem' : 'memory', storage);
		// A first send of a 1 KB file pays the one-time costs of a process (undici's WASM HTTP
		// parser and connection pool, lazily loaded code); n8n pays them once, not per file.
		const warmUp = await measureSend(
			await storeBinary(randomBytes(1000), { fileName: 'small.bin' }),
		);

		let content: Buffer | undefined = randomBytes(megabytes * 1_000_000);
		const fileBytes = content.length;
		const sha256 = createHash('sha256').update(content).digest('hex');
		const binary = await storeBinary(content, {
			fileName: 'large.bin',
			mimeType: 'application/octet-stream',
		});
		content = undefined;
		const measured = await measureSend(binary);
		return {
			mode,
			fileBytes,
			base64Bytes: Math.ceil(fileBytes / 3) * 4,
			sha256,
			...measured,
			warmUp,
		};
	} finally {
		rmSync(storage, { recursive: true, force: true });
	}
}

// ---------------------------------------------------------------------------------------------
// Main: the sandbox process, one worker process per case, the report

function runWorkerProcess(
	mode: Mode,
	megabytes: number,
	sandboxUrl: string,
): Promise<WorkerResult> {
	return new Promise((resolve, reject) => {
		execFile(
			process.execPath,
			[
				'--max-old-space-size=4096',
				'-r',
				'ts-node/register/transpile-only',
				__filename,
				'--worker',
				mode,
				String(megabytes),
				sandboxUrl,
			],
			{ cwd: join(__dirname, '..'), maxBuffer: 16 * MiB },
			(error, stdout, stderr) => {
				const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
				if (!line)
					return reject(
						new Error(`worker ${mode} ${megabytes} MB failed: ${error?.message ?? ''}\n${stderr}`),
					);
				resolve(JSON.parse(line.slice('RESULT '.length)) as WorkerResult);
			},
		);
	});
}

const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

async function main(): Promise<void> {
	const sizes = (process.argv[2] ?? '50').split(',').map(Number);
	const filesystemOnly = (process.argv[3] ?? '10,100').split(',').filter(Boolean).map(Number);
	const cases: Array<[Mode, number]> = [
		...sizes.flatMap((size): Array<[Mode, number]> => [
			['memory', size],
			['filesystem', size],
			['url', size],
		]),
		...filesystemOnly
			.filter((size) => !sizes.includes(size))
			.map((size): [Mode, number] => ['filesystem', size]),
	];

	const worstBy = new Map<string, number>();
	const sandbox = await startChildSandbox();
	console.log(
		`Send File memory: sandbox in a child process at ${sandbox.url}; one worker process per case`,
	);
	console.log(
		GC_EVERY_MS > 0
			? `DIAGNOSIS: a full GC every ${GC_EVERY_MS} ms while the node runs (shows live memory; times are not meaningful)\n`
			: '',
	);
	try {
		for (const [mode, size] of cases) {
			await sandbox.reset();
			const result = await runWorkerProcess(mode, size, sandbox.url);
			const entry = (await sandbox.ledger()).at(-1);
			const intact = entry?.file?.sha256 === result.sha256 && entry.file.size === result.fileBytes;
			const goal = mode === 'memory' ? 1.5 * result.base64Bytes : 32 * MiB;
			const worst = Math.max(result.rssGrowth, result.externalGrowth + result.heapGrowth);
			worstBy.set(`${mode} ${size}`, worst);
			console.log(
				`${mode} mode, ${(result.fileBytes / 1e6).toFixed(0)} MB file (${mib(result.base64Bytes)} as base64), node ran ${result.nodeMs} ms:`,
			);
			console.log(
				`  peak RSS growth:                      ${mib(result.rssGrowth)} (${result.rssGrowthSource}; baseline RSS ${mib(result.baselineRss)})`,
			);
			console.log(
				`  peak external growth:                 ${mib(result.externalGrowth)} (of which arrayBuffers, i.e. Buffers: ${mib(result.arrayBuffersGrowth)})`,
			);
			console.log(
				`  peak heapUsed growth:                 ${mib(result.heapGrowth)}   (${result.samples} samples)`,
			);
			console.log(
				mode === 'memory'
					? `  growth / base64 size:                 ${(worst / result.base64Bytes).toFixed(2)} x  (max of RSS and external+heapUsed; goal <= 1.5 x)  ${worst <= goal ? 'OK' : 'OVER'}`
					: `  growth against the 32 MiB goal:       ${mib(worst)} of 32 MiB (max of RSS and external+heapUsed)  ${worst <= goal ? 'OK' : 'OVER'}`,
			);
			console.log(
				`  first send of the process (1 KB):    RSS ${mib(result.warmUp.rssGrowth)}, external ${mib(result.warmUp.externalGrowth)}, heap ${mib(result.warmUp.heapGrowth)}  (one-time costs, not counted above)`,
			);
			console.log(
				`  arrived intact (ledger SHA-256):      ${intact ? 'yes' : 'NO'}  output ${JSON.stringify(result.output)}\n`,
			);
		}
		// URL mode against filesystem mode, measured in this run: the same streaming, plus a download.
		for (const size of sizes) {
			const url = worstBy.get(`url ${size}`);
			const filesystem = worstBy.get(`filesystem ${size}`);
			if (url !== undefined && filesystem !== undefined) {
				console.log(
					`url / filesystem peak growth, ${size} MB file: ${(url / filesystem).toFixed(2)} (${mib(url)} / ${mib(filesystem)})`,
				);
			}
		}
	} finally {
		await sandbox.close();
	}
}

if (process.argv[2] === '--worker') {
	const [mode, megabytes, url] = process.argv.slice(3);
	worker(mode as Mode, Number(megabytes), url).then(
		(result) => {
			console.log(`RESULT ${JSON.stringify(result)}`);
			process.exit(0);
		},
		(error: unknown) => {
			console.error(error);
			process.exit(1);
		},
	);
} else {
	main().catch((error: unknown) => {
		console.error(error);
		process.exit(1);
	});
}
