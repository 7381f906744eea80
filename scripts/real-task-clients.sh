#!/usr/bin/env bash
# The consent-gated task cancel against the real MCP tasks clients (issue 43): the official
# TypeScript one (@modelcontextprotocol/ext-tasks) and FastMCP's (fastmcp-tasks), each
# driving `connectorgen serve` and the reference provider on loopback. What each script
# checks: tests/clients/README.md.
#
#   scripts/real-task-clients.sh            # after: cargo build --bin connectorgen --example reference_provider
#
# Env: CONNECTORGEN (default target/debug/connectorgen), REFERENCE_PROVIDER (default
# target/debug/examples/reference_provider), REAL_TASK_CLIENTS_CACHE (where the clients are
# installed; default ${XDG_CACHE_HOME:-~/.cache}/connectorgen-real-task-clients),
# KEEP_WORK=1 keeps the logs and state folders. Needs node >= 20 with npm, and python3 >= 3.10.
# Exits non-zero when an install, a server or an expectation of either script fails.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
clients="$root/tests/clients"
connectorgen=${CONNECTORGEN:-$root/target/debug/connectorgen}
provider_bin=${REFERENCE_PROVIDER:-$root/target/debug/examples/reference_provider}
cache=${REAL_TASK_CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/connectorgen-real-task-clients}
manifest="$clients/../cases/valid/job-tasks.yaml"
# The manifest's service is VidGen: its credential variable is VIDGEN_TOKEN; the reference
# provider accepts this token (its --token).
token=vg_reference_token

say() { printf 'real-task-clients: %s\n' "$*"; }
die() { say "FAIL $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

for bin in "$connectorgen" "$provider_bin"; do
  [ -x "$bin" ] || die "$bin is missing: cargo build --locked --bin connectorgen --example reference_provider"
done
command -v node >/dev/null && command -v npm >/dev/null || die "node and npm are needed (node >= 20)"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' \
  || die "node >= 20 is needed, found $(node --version)"
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
  || die "python3 >= 3.10 is needed, found $(python3 --version 2>&1)"

# ---- the clients, installed once per lockfile into the cache (outside the repository) ----
mkdir -p "$cache"
digest() { cat "$@" | sha256sum | cut -c1-16; }

node_dir="$cache/node-$(digest "$clients/package.json" "$clients/package-lock.json" <(node --version))"
if [ ! -f "$node_dir/.installed" ]; then
  started=$(now)
  tmp=$(mktemp -d "$cache/.node.XXXXXX")
  cp "$clients/package.json" "$clients/package-lock.json" "$tmp/"
  (cd "$tmp" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) || { rm -rf "$tmp"; die "npm ci failed"; }
  touch "$tmp/.installed"
  if ! mv -T "$tmp" "$node_dir" 2>/dev/null; then rm -rf "$tmp"; fi  # another run got there first
  say "installed the TypeScript client (npm ci) in $node_dir in $(since "$started")"
else
  say "the TypeScript client is installed in $node_dir"
fi

py_dir="$cache/python-$(digest "$clients/requirements.txt" <(python3 --version 2>&1))"
if [ ! -f "$py_dir/.installed" ]; then
  started=$(now)
  tmp=$(mktemp -d "$cache/.python.XXXXXX")
  python3 -m venv "$tmp/venv" || { rm -rf "$tmp"; die "python3 -m venv failed"; }
  "$tmp/venv/bin/pip" install --disable-pip-version-check --quiet -r "$clients/requirements.txt" \
    || { rm -rf "$tmp"; die "pip install -r requirements.txt failed"; }
  touch "$tmp/.installed"
  # A moved venv works when its interpreter is called by path, as below (only its console
  # scripts' first lines still name the folder it was made in).
  if ! mv -T "$tmp" "$py_dir" 2>/dev/null; then rm -rf "$tmp"; fi
  say "installed FastMCP's tasks client (pip) in $py_dir in $(since "$started")"
else
  say "FastMCP's tasks client is installed in $py_dir"
fi

# ---- the reference provider and serve, on free loopback ports ------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/real-task-clients.XXXXXX")
pids=()
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [ "${KEEP_WORK:-}" = 1 ]; then say "logs and state kept in $work"; else rm -rf "$work"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits (at most 15 s) for the first match of REGEX in FILE while PID lives; prints it.
await_line() {
  local file=$1 regex=$2 pid=$3 deadline=$((SECONDS + 15)) found
  while [ "$SECONDS" -lt "$deadline" ]; do
    found=$(grep -o -m1 -E "$regex" "$file" 2>/dev/null || true)
    if [ -n "$found" ]; then printf '%s\n' "$found"; return 0; fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

"$provider_bin" --port 0 --token "$token" --complete-after-polls 0 \
  >"$work/provider.out" 2>"$work/provider.err" </dev/null &
pids+=($!)
provider_url=$(await_line "$work/provider.out" 'http://127\.0\.0\.1:[0-9]+' "${pids[-1]}") \
  || { cat "$work/provider.err" >&2; die "the reference provider did not start"; }

mkdir -m 700 "$work/state" "$work/state-stdio"
VIDGEN_TOKEN=$token "$connectorgen" serve "$manifest" --http 127.0.0.1:0 \
  --base-url "$provider_url" --state "$work/state" >"$work/serve.out" 2>"$work/serve.err" </dev/null &
pids+=($!)
mcp_url=$(await_line "$work/serve.err" 'http://127\.0\.0\.1:[0-9]+/mcp' "${pids[-1]}") \
  || { cat "$work/serve.err" >&2; die "serve --http did not start"; }
say "reference provider at $provider_url, serve at $mcp_url (manifest tests/cases/valid/job-tasks.yaml)"

# ---- the two clients ---------------------------------------------------------------------
failed=()
export MCP_URL="$mcp_url" PROVIDER_URL="$provider_url"

started=$(now)
# Beside its own node_modules, so that the client's imports resolve to the locked install.
cp "$clients/ts-tasks.mjs" "$work/"
ln -s "$node_dir/node_modules" "$work/node_modules"
if node "$work/ts-tasks.mjs"; then
  say "ts-tasks.mjs passed in $(since "$started")"
else
  failed+=(ts-tasks.mjs)
  say "ts-tasks.mjs FAILED in $(since "$started")"
fi

started=$(now)
if CONNECTORGEN="$connectorgen" MANIFEST="$manifest" STDIO_STATE="$work/state-stdio" VIDGEN_TOKEN=$token \
  "$py_dir/venv/bin/python" "$clients/fastmcp_tasks.py"; then
  say "fastmcp_tasks.py passed in $(since "$started")"
else
  failed+=(fastmcp_tasks.py)
  say "fastmcp_tasks.py FAILED in $(since "$started")"
fi

say "provider counters at the end: $(curl -s --max-time 5 "$provider_url/_counters" 2>/dev/null || echo '(unavailable)')"
if [ "${#failed[@]}" -gt 0 ]; then
  say "the last lines serve wrote:" >&2
  tail -n 20 "$work/serve.err" >&2
  die "${failed[*]}"
fi
say "both clients passed"
