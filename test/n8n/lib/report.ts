/**
 * What a real-n8n run found: named checks (pass/fail with a detail), timings and facts, written
 * to test-artifacts/n8n/<name>-summary.json and printed as "N passed, M failed".
 * Shared by e2e.ts, queue.ts and smoke.ts; scenarios record through it.
 */
import { mkdirSync, writeFileSync } from 'fs';
import { join } from 'path';
import { ARTIFACTS_DIR, log } from './util';

export interface CheckResult {
	check: string;
	ok: boolean;
	detail?: string;
}

export class Report {
	readonly checks: CheckResult[] = [];
	readonly timings: Record<string, number> = {};
	readonly facts: Record<string, unknown> = {};

	/** `name` names the summary file; `prefix` goes before every check and timing name (e.g. the n8n version). */
	constructor(
		readonly name: string,
		private readonly prefix = '',
		private readonly parent?: Report,
	) {}

	/** A view that records into this report with an extra prefix (one per n8n version). */
	scoped(prefix: string): Report {
		return new Report(this.name, this.prefix + prefix, this.parent ?? this);
	}

	private get root(): Report {
		return this.parent ?? this;
	}

	/** Records one check; returns `ok` so a caller can stop early. */
	check(name: string, ok: boolean, detail?: unknown): boolean {
		const d =
			detail === undefined
				? undefined
				: typeof detail === 'string'
					? detail
					: JSON.stringify(detail);
		const full = this.prefix + name;
		this.root.checks.push({ check: full, ok, detail: d });
		log(
			`${ok ? 'PASS' : 'FAIL'} ${full}${d && (!ok || d.length < 400) ? ` — ${d.slice(0, ok ? 400 : 2000)}` : ''}`,
		);
		return ok;
	}

	async timed<T>(name: string, fn: () => Promise<T>): Promise<T> {
		const t = Date.now();
		const full = this.prefix + name;
		try {
			return await fn();
		} finally {
			this.root.timings[full] = Date.now() - t;
			log(`${full}: ${this.root.timings[full]} ms`);
		}
	}

	/** Runs `fn`; an exception becomes one failed check instead of ending the run. */
	async section(name: string, fn: () => Promise<void>): Promise<void> {
		try {
			await fn();
		} catch (e) {
			this.check(
				`${name}: completed without an exception`,
				false,
				e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e),
			);
		}
	}

	fact(name: string, value: unknown): void {
		this.root.facts[this.prefix + name] = value;
	}

	get failed(): CheckResult[] {
		return this.root.checks.filter((c) => !c.ok);
	}

	/** Writes test-artifacts/n8n/<name>-summary.json, prints every check and the totals. Returns the exit code. */
	summarise(extra: Record<string, unknown> = {}): number {
		const root = this.root;
		const failed = this.failed;
		mkdirSync(ARTIFACTS_DIR, { recursive: true });
		writeFileSync(
			join(ARTIFACTS_DIR, `${root.name}-summary.json`),
			JSON.stringify(
				{
					passed: root.checks.length - failed.length,
					failed: failed.length,
					timingsMs: root.timings,
					facts: root.facts,
					...extra,
					checks: root.checks,
				},
				null,
				2,
			),
		);
		// A failure's detail is repeated here: CI's log may keep only the end.
		for (const c of root.checks)
			console.log(
				`${c.ok ? 'PASS' : 'FAIL'}  ${c.check}${!c.ok && c.detail ? ` — ${c.detail.slice(0, 2000)}` : ''}`,
			);
		console.log(`timings (ms): ${JSON.stringify(root.timings)}`);
		console.log(`${root.checks.length - failed.length} passed, ${failed.length} failed`);
		return failed.length || root.checks.length === 0 ? 1 : 0;
	}
}
