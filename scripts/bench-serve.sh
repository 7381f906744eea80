#!/usr/bin/env bash
# Issue 44's serve benchmark: `connectorgen serve --http` on examples/manifests/video.yaml
# against the reference provider (examples/reference_provider.rs), driven by rmcp's client
# (examples/serve_load.rs), with its ledger in SQLite (the state folder), in PostgreSQL on
# loopback TCP, and in the same PostgreSQL behind a proxy that delays every chunk
# (examples/delay_proxy.rs). Prints one Markdown table:
#   - goal 1: a free read (listVideos) in READ_SESSIONS sessions, alone and beside
#     PAID_SESSIONS sessions of paid calls (createVideo under --no-consent, every prompt
#     new, so each call claims); its p50/p95 on each store;
#   - goal 5: free reads/s at MANY_SESSIONS sessions (the load generator on the same
#     machine), and each server's peak RSS (VmHWM in /proc/PID/status).
# Each store gets a server of its own and an empty ledger (a new state folder, a new
# database) and a provider of its own, seeded with 20 videos, so every listVideos answers a
# full page whatever the paid calls add.
#
# Usage: scripts/bench-serve.sh
# Environment:
#   CONNECTORGEN_BIN=path  the serve binary to measure (default: this tree's release build;
#                          the provider, proxy and load generator are always this tree's)
#   BENCH_SECONDS=15       each phase's measured window
#   BENCH_WARMUP=2         load run before each window, not counted
#   READ_SESSIONS=1        sessions of free reads in goal 1's phases
#   PAID_SESSIONS=4        sessions of paid calls beside them
#   MANY_SESSIONS=32       sessions of free reads for goal 5
#   DELAY_MS=10            the proxy's delay each way (a round trip: twice this)
#   PG_BIN=dir             PostgreSQL's programs (default: the newest /usr/lib/postgresql/*/bin)
#   BENCH_REPORT=file      also write the report to this file
# Needs: PostgreSQL's programs (initdb, pg_ctl, createdb), jq, curl, GNU time. Takes about 3 minutes.
# Everything listens on 127.0.0.1 only; every process and folder it made is removed on exit.
# Progress goes to stderr; the report alone goes to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

window=${BENCH_SECONDS:-15}
warmup=${BENCH_WARMUP:-2}
read_sessions=${READ_SESSIONS:-1}
paid_sessions=${PAID_SESSIONS:-4}
many_sessions=${MANY_SESSIONS:-32}
delay=${DELAY_MS:-10}
pg_bin=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}

missing=()
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v curl >/dev/null 2>&1 || missing+=(curl)
[ -x /usr/bin/time ] || missing+=(time)
[ -x "$pg_bin/initdb" ] || missing+=(postgresql)
if ((${#missing[@]})); then
    echo "error: scripts/bench-serve.sh needs ${missing[*]}; install with: apt-get install -y ${missing[*]}" >&2
    exit 2
fi

echo "building (release)…" >&2
cargo build --release --quiet --bin connectorgen --example reference_provider \
    --example serve_load --example delay_proxy >&2
target=${CARGO_TARGET_DIR:-target}/release
bin=${CONNECTORGEN_BIN:-$target/connectorgen}

# Other work on the machine skews every figure: the report gives the load at both ends.
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

work=$(mktemp -d)
# PostgreSQL's folder apart: as root, initdb and postgres run as the postgres user, who
# cannot enter the 0700 work folder.
pg=$(mktemp -d)
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ -f "$pg/data/postmaster.pid" ]; then
        as_pg "$pg_bin/pg_ctl" -D "$pg/data" -m immediate stop >/dev/null 2>&1 || true
    fi
    rm -rf "$work" "$pg"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A PostgreSQL program, as the postgres user when this script runs as root (initdb and
# postgres refuse to run as root).
as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Waits (bounded: 60 s) until `file` holds a line matching `pattern` and prints it; fails
# when process `pid` ends first.
wait_line() {
    local file=$1 pattern=$2 pid=$3 line
    for _ in $(seq 600); do
        line=$(grep -m1 -E "$pattern" "$file" 2>/dev/null || true)
        if [ -n "$line" ]; then
            echo "$line"
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "error: process $pid ended before saying /$pattern/:" >&2
            cat "$file" >&2
            return 1
        fi
        sleep 0.1
    done
    echo "error: no /$pattern/ in $file within 60 s" >&2
    return 1
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The provider (one per server, so that what one server's paid calls made is not in the
# next one's listVideos), accepting any credential, seeded with a full page of videos: its
# pid, URL and token in `provider_pid`, `provider` and `token`.
start_provider() {
    local line
    "$target/examples/reference_provider" --port 0 --accept-any-credential >"$work/provider-$1.out" 2>&1 &
    provider_pid=$!
    pids+=("$provider_pid")
    line=$(wait_line "$work/provider-$1.out" 'listening on' "$provider_pid")
    provider=$(sed -E 's/.*listening on ([^ ]+) \(token ([^)]+)\).*/\1/' <<<"$line")
    token=$(sed -E 's/.*listening on ([^ ]+) \(token ([^)]+)\).*/\2/' <<<"$line")
    for i in $(seq 20); do
        curl -fsS -o /dev/null -X POST -H 'content-type: application/json' \
            -d "{\"prompt\":\"seed $i\"}" "$provider/v1/videos"
    done
}

# A throwaway PostgreSQL on 127.0.0.1 (trust authentication, as the tests' cluster:
# fsync and synchronous commit off, so that the figures are the server's, not the disk's).
echo "starting PostgreSQL ($pg_bin)…" >&2
[ "$(id -u)" = 0 ] && chown postgres: "$pg"
as_pg "$pg_bin/initdb" -D "$pg/data" -U postgres -A trust -E UTF8 --no-sync >/dev/null
pg_port=$(free_port)
as_pg "$pg_bin/pg_ctl" -D "$pg/data" -l "$pg/server.log" -w -o \
    "-c listen_addresses=127.0.0.1 -p $pg_port -k $pg -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start >/dev/null
database() {
    "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U postgres "$1"
    echo "postgres://postgres@127.0.0.1:$2/$1"
}

# The proxy in front of it.
"$target/examples/delay_proxy" --to "127.0.0.1:$pg_port" --each-way-ms "$delay" >"$work/proxy.out" 2>&1 &
pids+=($!)
proxy_port=$(wait_line "$work/proxy.out" '^listening' "$!" | sed -E 's/.*:([0-9]+)$/\1/')

# serve under test: its pid and URL in `serve_pid` and `serve_url`.
start_serve() {
    local name=$1
    shift
    start_provider "$name"
    VIDGEN_TOKEN=$token "$bin" serve examples/manifests/video.yaml --http 127.0.0.1:0 \
        --base-url "$provider" --state "$work/state-$name" --no-consent "$@" \
        >/dev/null 2>"$work/serve-$name.log" &
    serve_pid=$!
    pids+=("$serve_pid")
    wait_line "$work/serve-$name.log" '"event":"listening"' "$serve_pid" >/dev/null
    serve_url=$(jq -Rr 'fromjson? | select(.event == "listening") | .url' "$work/serve-$name.log" | head -1)
}

declare -A peak_kib
# Ends the server, after reading its peak resident memory.
stop_serve() {
    local name=$1
    peak_kib[$name]=$(awk '/^VmHWM:/ { print $2 }' "/proc/$serve_pid/status")
    kill "$serve_pid" "$provider_pid"
    wait "$serve_pid" "$provider_pid" 2>/dev/null || true
}

# User + system CPU time of a process so far, in clock ticks.
cpu_ticks() {
    awk '{ print $14 + $15 }' "/proc/$1/stat"
}
hz=$(getconf CLK_TCK)

declare -A cores provider_cores client_cores instance
phases=()
# One phase: the load generator against the running server; its JSON in $work/PHASE.json.
phase() {
    local name=$1 of=$2 reads=$3 paid=$4 before after p_before p_after took
    echo "== $name: $reads read and $paid paid sessions, ${window} s" >&2
    before=$(cpu_ticks "$serve_pid")
    p_before=$(cpu_ticks "$provider_pid")
    took=$(date +%s.%N)
    /usr/bin/time -f '%U %S' -o "$work/$name.time" \
        "$target/examples/serve_load" --url "$serve_url" --read-sessions "$reads" \
        --paid-sessions "$paid" --seconds "$window" --warmup-seconds "$warmup" \
        --tag "$name" >"$work/$name.json"
    took=$(awk -v a="$took" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
    after=$(cpu_ticks "$serve_pid")
    p_after=$(cpu_ticks "$provider_pid")
    # Cores each process used over the phase (warm-up and drain included): near 0 is a
    # process waiting; the three together near 2, the machine full.
    cores[$name]=$(awk -v t=$((after - before)) -v hz="$hz" -v s="$took" 'BEGIN { printf "%.2f", t / hz / s }')
    provider_cores[$name]=$(awk -v t=$((p_after - p_before)) -v hz="$hz" -v s="$took" 'BEGIN { printf "%.2f", t / hz / s }')
    client_cores[$name]=$(awk -v s="$took" '{ printf "%.2f", ($1 + $2) / s }' "$work/$name.time")
    instance[$name]=$of
    phases+=("$name")
}

start_serve many
phase "SQLite, $many_sessions sessions of reads" many "$many_sessions" 0
stop_serve many

start_serve sqlite
phase "SQLite, alone" sqlite "$read_sessions" 0
phase "SQLite, beside paid calls" sqlite "$read_sessions" "$paid_sessions"
stop_serve sqlite

start_serve postgres --ledger "$(database bench_direct "$pg_port")"
phase "PostgreSQL, alone" postgres "$read_sessions" 0
phase "PostgreSQL, beside paid calls" postgres "$read_sessions" "$paid_sessions"
stop_serve postgres

start_serve proxied --ledger "$(database bench_proxied "$proxy_port")"
phase "PostgreSQL +$((2 * delay)) ms, alone" proxied "$read_sessions" 0
phase "PostgreSQL +$((2 * delay)) ms, beside paid calls" proxied "$read_sessions" "$paid_sessions"
stop_serve proxied

load_end=$(cut -d' ' -f1-3 /proc/loadavg)

field() {
    jq -r "$2 // \"\"" "$work/$1.json"
}

report() {
    echo "serve: $bin ($("$bin" --version)), load generator and provider of $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, load $load_start at start and $load_end at the end, $(date -u '+%Y-%m-%d %H:%M') UTC"
    echo "windows of ${window} s after ${warmup} s of warm-up; proxy: +${delay} ms each way (+$((2 * delay)) ms per round trip)"
    echo
    echo "| phase | reads | read p50 ms | read p95 ms | read p99 ms | read max ms | reads/s | paid calls | paid/s | paid p50 ms | errors | serve cores | provider cores | load generator cores | serve peak RSS MiB |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    local name errors
    for name in "${phases[@]}"; do
        errors=$(($(field "$name" .reads.errors) + $(field "$name" .paid.errors)))
        echo "| $name | $(field "$name" .reads.count) | $(field "$name" .reads.p50Ms) | $(field "$name" .reads.p95Ms) | $(field "$name" .reads.p99Ms) | $(field "$name" .reads.maxMs) | $(field "$name" .reads.perSecond) | $(field "$name" .paid.count) | $(field "$name" .paid.perSecond) | $(field "$name" .paid.p50Ms) | $errors | ${cores[$name]} | ${provider_cores[$name]} | ${client_cores[$name]} | $(awk -v k="${peak_kib[${instance[$name]}]}" 'BEGIN { printf "%.1f", k / 1024 }') |"
    done
    for name in "${phases[@]}"; do
        for kind in reads paid; do
            local first
            first=$(field "$name" ".$kind.firstError")
            if [ -n "$first" ]; then
                echo
                echo "first $kind error in \"$name\": $first"
            fi
        done
        if [ "$(field "$name" .drained)" = false ]; then
            echo
            echo "\"$name\": calls still unanswered 120 s after the window closed"
        fi
    done
    local direct proxied
    direct="PostgreSQL, beside paid calls"
    proxied="PostgreSQL +$((2 * delay)) ms, beside paid calls"
    echo
    awk -v a="$(field "$proxied" .reads.p50Ms)" -v b="$(field "$direct" .reads.p50Ms)" \
        -v c="$(field "$proxied" .reads.p95Ms)" -v d="$(field "$direct" .reads.p95Ms)" \
        'BEGIN { printf "goal 1: the free read beside paid calls, PostgreSQL behind the proxy minus direct: p50 %+.2f ms, p95 %+.2f ms (goal: within 5 ms)\n", a - b, c - d }'
    echo "goal 5: $(field "SQLite, $many_sessions sessions of reads" .reads.perSecond) free reads/s at $many_sessions sessions; peak RSS of that server $(awk -v k="${peak_kib[many]}" 'BEGIN { printf "%.1f", k / 1024 }') MiB"
}

if [ -n "${BENCH_REPORT:-}" ]; then
    report | tee "$BENCH_REPORT"
else
    report
fi
