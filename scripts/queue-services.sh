#!/usr/bin/env bash
# Redis and PostgreSQL for the n8n queue-mode test (test/n8n/queue.ts), from Debian's packages,
# on loopback only, with all data in a folder the caller names (nothing touches the system's own
# clusters or services).
#
#   queue-services.sh install                      apt-get installs redis-server / postgresql if missing
#   queue-services.sh start <dir> <redisPort> <pgPort>
#                                                  starts both with data under <dir>; waits until they answer;
#                                                  prints REDIS_PORT=, PG_PORT=, PG_USER=, PG_DATABASE= on stdout
#   queue-services.sh stop <dir>                   stops what `start` started in <dir> (by its pid files)
#
# PostgreSQL refuses to run as root: as root the cluster is created and run as the `postgres` user
# (created by Debian's package); as any other user it runs as that user.
# Progress goes to stderr.
set -euo pipefail

log() { printf '[queue-services] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"
	elif command -v sudo >/dev/null; then sudo "$@"
	else die "need root (or sudo) to run: $*"; fi
}

pg_bindir() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
	done
	return 1
}

# Runs a PostgreSQL command as the cluster owner.
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		if command -v runuser >/dev/null; then runuser -u postgres -- "$@"
		else su postgres -s /bin/sh -c "$(printf '%q ' "$@")"; fi
	else "$@"; fi
}

cmd_install() {
	local need=()
	command -v redis-server >/dev/null || [ -x /usr/bin/redis-server ] || need+=(redis-server)
	pg_bindir >/dev/null || need+=(postgresql)
	if [ "${#need[@]}" -gt 0 ]; then
		log "installing ${need[*]} (apt-get)"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get update >&2
		# policy-rc.d-less containers may try to start the services: harmless, we never use them.
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >&2
	fi
	command -v redis-server >/dev/null || die "redis-server still missing"
	pg_bindir >/dev/null || die "PostgreSQL (initdb, pg_ctl) still missing under /usr/lib/postgresql/*/bin"
	if [ "$(id -u)" = 0 ]; then id postgres >/dev/null 2>&1 || die "user postgres missing (Debian's postgresql package creates it)"; fi
	log "redis: $(redis-server --version | head -n1)"
	log "postgres: $("$(pg_bindir)/postgres" --version)"
}

wait_for() { # <what> <seconds> <command...>
	local what=$1 secs=$2; shift 2
	local i
	for ((i = 0; i < secs * 5; i++)); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.2
	done
	die "$what did not come up within ${secs}s"
}

cmd_start() {
	local dir=$1 redis_port=$2 pg_port=$3
	[ -d "$dir" ] || die "no such folder: $dir"
	cmd_install
	local bindir; bindir=$(pg_bindir)

	# --- Redis: no persistence, loopback, pid file in <dir> ---
	mkdir -p "$dir/redis"
	redis-server --port "$redis_port" --bind 127.0.0.1 --protected-mode yes \
		--save '' --appendonly no --dir "$dir/redis" \
		--daemonize yes --pidfile "$dir/redis/redis.pid" --logfile "$dir/redis/redis.log" >&2
	wait_for "redis on 127.0.0.1:$redis_port" 20 redis-cli -h 127.0.0.1 -p "$redis_port" ping
	log "redis up on 127.0.0.1:$redis_port (pid $(cat "$dir/redis/redis.pid"))"

	# --- PostgreSQL: own cluster in <dir>/pg, trust auth on loopback only ---
	chmod 755 "$dir"
	mkdir -p "$dir/pg"
	[ "$(id -u)" = 0 ] && chown postgres: "$dir/pg"
	as_pg "$bindir/initdb" -D "$dir/pg/data" -U postgres -A trust -E UTF8 --no-locale >"$dir/pg-initdb.log" 2>&1 \
		|| { tail -n 30 "$dir/pg-initdb.log" >&2; die "initdb failed"; }
	as_pg "$bindir/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/postgres.log" -w -t 60 \
		-o "-p $pg_port -c listen_addresses=127.0.0.1 -k $dir/pg -c max_connections=100 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
		start >&2 || { tail -n 30 "$dir/pg/postgres.log" >&2; die "postgres did not start"; }
	as_pg "$bindir/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -v ON_ERROR_STOP=1 -qc "CREATE DATABASE n8n" >&2
	log "postgres up on 127.0.0.1:$pg_port (data $dir/pg/data)"

	echo "REDIS_PORT=$redis_port"
	echo "PG_PORT=$pg_port"
	echo "PG_USER=postgres"
	echo "PG_DATABASE=n8n"
}

cmd_stop() {
	local dir=$1
	local bindir; bindir=$(pg_bindir || true)
	if [ -f "$dir/pg/data/postmaster.pid" ] && [ -n "$bindir" ]; then
		as_pg "$bindir/pg_ctl" -D "$dir/pg/data" -m fast -w -t 30 stop >&2 || log "pg_ctl stop failed"
	fi
	if [ -f "$dir/redis/redis.pid" ]; then
		local pid; pid=$(cat "$dir/redis/redis.pid")
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid" || true
			for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -0 "$pid" 2>/dev/null && kill -9 "$pid" || true
		fi
	fi
	log "stopped services in $dir"
}

case "${1:-}" in
	install) cmd_install ;;
	start) [ $# -eq 4 ] || die "usage: $0 start <dir> <redisPort> <pgPort>"; cmd_start "$2" "$3" "$4" ;;
	stop) [ $# -eq 2 ] || die "usage: $0 stop <dir>"; cmd_stop "$2" ;;
	*) die "usage: $0 install | start <dir> <redisPort> <pgPort> | stop <dir>" ;;
esac
