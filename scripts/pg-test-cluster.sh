#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests and CI.
#   scripts/pg-test-cluster.sh start DIR [PORT]   create (if absent) and start; prints the URL last
#   scripts/pg-test-cluster.sh stop DIR           stop it (fast shutdown)
# DIR holds the data (DIR/data), the log (DIR/server.log) and the unix socket. The server
# listens on 127.0.0.1:PORT (default: the first free port from 55432; a cluster already running
# keeps its port) with trust auth for the superuser `troupe`; database
# `troupe_test` belongs to it. initdb refuses root, so as root the server runs as the OS user
# `postgres` (created if missing); then every directory above DIR must be searchable by it.
set -euo pipefail

usage() { echo "usage: $0 start DIR [PORT] | stop DIR" >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1 dir=$2 port=${3:-}

# Whether something already listens on a local TCP port.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The newest installed server (Debian: /usr/lib/postgresql/<major>/bin), else whatever is on PATH.
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
pg() { if [ -n "$bin" ]; then "$bin/$1" "${@:2}"; else "$@"; fi; }

# Run a server-side command as the cluster's owner: ourselves, or `postgres` when we are root.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then (cd "$dir" && runuser -u postgres -- "$@"); else "$@"; fi
}
owner_pg() { if [ -n "$bin" ]; then as_owner "$bin/$1" "${@:2}"; else as_owner "$@"; fi; }

case $cmd in
start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)  # absolute: it is written into the config
    if [ "$(id -u)" -eq 0 ]; then
        id postgres >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin postgres
        chown postgres "$dir"
        if ! runuser -u postgres -- test -w "$dir"; then
            echo "$0: user postgres cannot reach $dir; make its parent directories searchable" >&2
            exit 1
        fi
    fi
    chmod 700 "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        owner_pg initdb -D "$dir/data" -U troupe --auth=trust --encoding=UTF8 --locale=C >&2
        # Test settings: many connections (each test store has its own pool), but fsync and
        # synchronous commit stay on, since durability is what some tests measure.
        cat >>"$dir/data/postgresql.conf" <<CONF

# pg-test-cluster.sh
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
max_connections = 500
shared_buffers = 256MB
fsync = on
synchronous_commit = on
timezone = 'UTC'
CONF
    fi
    if owner_pg pg_ctl -D "$dir/data" status >/dev/null 2>&1; then
        # Already running: its port is the fourth line of postmaster.pid.
        port=$(sed -n 4p "$dir/data/postmaster.pid")
    else
        if [ -z "$port" ]; then
            port=55432
            while port_in_use "$port"; do port=$((port + 1)); done
        fi
        owner_pg pg_ctl -D "$dir/data" -l "$dir/server.log" -o "-p $port" -w -t 60 start >&2 ||
            { tail -n 20 "$dir/server.log" >&2; exit 1; }
    fi
    for _ in $(seq 1 60); do
        pg pg_isready -q -h 127.0.0.1 -p "$port" && break
        sleep 1
    done
    pg pg_isready -h 127.0.0.1 -p "$port" >&2 || { tail -n 20 "$dir/server.log" >&2; exit 1; }
    psql=(pg psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U troupe -d postgres -At)
    if [ -z "$("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'troupe_test'")" ]; then
        "${psql[@]}" -c "CREATE DATABASE troupe_test OWNER troupe"
    fi
    echo "postgres://troupe@127.0.0.1:$port/troupe_test"
    ;;
stop)
    dir=$(cd "$dir" && pwd)
    if owner_pg pg_ctl -D "$dir/data" status >/dev/null 2>&1; then
        owner_pg pg_ctl -D "$dir/data" -m fast -w stop >&2
    fi
    ;;
*) usage ;;
esac
