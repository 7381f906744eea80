#!/usr/bin/env bash
# Benchmarks `connectorgen build` (and `check`, when this build has it) as whole
# processes on synthetic manifests of 10, 1,000, 10,000 and 100,000 operations, then
# `import` of the bundled 3.4 MB OpenAI document, and prints a Markdown table: median wall time (hyperfine) and peak memory (GNU time's
# maximum resident set size) per size, then the in-process stage breakdown at 10,000
# operations (examples/stages.rs) so a regression shows which stage moved; then how
# long the default commands take to print many findings (examples/findings.rs): 6,000
# warnings and 1,000 errors, against the same commands under --quiet or --format json;
# then base mode: a build on a 3.4 MB JSON and a 4 MB YAML provider document exposing ten
# operations, and `import` of the YAML one.
#
# Usage: scripts/bench.sh [OPS...]        e.g. scripts/bench.sh 10 1000
# Environment:
#   SEED=42            synthetic manifest seed (examples/synth.rs)
#   BENCH_DIR=path     keep manifests and outputs there (default: a temp dir, removed)
#   BENCH_REPORT=file  also write the Markdown report to this file
#   STAGES=0           skip the stage breakdown
#   FINDINGS=0         skip the findings timings
#   BASE=0             skip the base-mode timings
# Needs: hyperfine and GNU time (`apt-get install -y hyperfine time`). Takes about
# 5 minutes on 2 cores, most of it at 100,000 operations; the first run also compiles
# the examples (and so the dev-dependencies).
# Progress goes to stderr; the report alone goes to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v hyperfine >/dev/null 2>&1 || missing+=(hyperfine)
[ -x /usr/bin/time ] || missing+=(time)
if ((${#missing[@]})); then
    echo "error: scripts/bench.sh needs ${missing[*]}; install with: apt-get install -y ${missing[*]}" >&2
    exit 2
fi

# Other work on the machine skews wall times: the report shows the load at the start.
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
sizes=("$@")
((${#sizes[@]})) || sizes=(10 1000 10000 100000)
seed=${SEED:-42}

echo "building (release)…" >&2
cargo build --release --quiet --bin connectorgen --example synth --example stages --example findings --example base_bench >&2
target=${CARGO_TARGET_DIR:-target}/release
bin=$target/connectorgen

if [ -n "${BENCH_DIR:-}" ]; then
    work=$BENCH_DIR
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi

has_check=0
"$bin" check --help >/dev/null 2>&1 && has_check=1

# Warm-up and timed runs per size: enough for a stable median, under 10 minutes in all.
runs_for() {
    if (($1 <= 100)); then echo "5 30"
    elif (($1 <= 1000)); then echo "3 20"
    elif (($1 <= 10000)); then echo "1 7"
    else echo "0 3"; fi
}

# Median wall time in ms of one command, from hyperfine's JSON.
median_ms() {
    local json=$1
    grep -o '"median": *[0-9.eE+-]*' "$json" | head -1 | awk -F: '{ printf "%.1f", $2 * 1000 }'
}

# Peak resident memory in MB of one run (GNU time's %M is in KiB).
peak_mb() {
    local kib
    kib=$(/usr/bin/time -f '%M' -o "$work/rss" "$@" >/dev/null 2>&1 && cat "$work/rss")
    awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }'
}

declare -A build_ms build_mb check_ms check_mb mbytes
for n in "${sizes[@]}"; do
    manifest=$work/ops-$n.yaml
    out=$work/out-$n
    "$target/examples/synth" --ops "$n" --seed "$seed" >"$manifest"
    mbytes[$n]=$(awk -v b="$(wc -c <"$manifest")" 'BEGIN { printf "%.2f", b / 1e6 }')
    read -r warmup runs <<<"$(runs_for "$n")"
    echo "== $n operations (${mbytes[$n]} MB): build" >&2
    # A failed build is a broken benchmark, not a slow one: stop here.
    "$bin" build "$manifest" --out "$out" >/dev/null
    hyperfine -N --style basic --warmup "$warmup" --runs "$runs" \
        --export-json "$work/build-$n.json" "$bin build $manifest --out $out" >&2
    build_ms[$n]=$(median_ms "$work/build-$n.json")
    build_mb[$n]=$(peak_mb "$bin" build "$manifest" --out "$out")
    if ((has_check)); then
        echo "== $n operations: check (against the outputs just built)" >&2
        if ! "$bin" check "$manifest" --out "$out" >/dev/null 2>&1; then
            echo "error: check does not pass right after build at $n operations" >&2
            exit 1
        fi
        hyperfine -N --style basic --warmup "$warmup" --runs "$runs" \
            --export-json "$work/check-$n.json" "$bin check $manifest --out $out" >&2
        check_ms[$n]=$(median_ms "$work/check-$n.json")
        check_mb[$n]=$(peak_mb "$bin" check "$manifest" --out "$out")
    fi
done

# The human report of many findings: the default command (every finding counted, the
# first of each code drawn) against the same run printing nothing or JSON. Exit code 1
# (errors) is expected for the errors manifest, hence -i there.
declare -A find_ms find_bytes find_mb
find_rows=()
time_findings() {
    local key=$1 flags=$2
    shift 2
    hyperfine -N --style basic $flags --warmup 1 --runs 10 \
        --export-json "$work/find-$key.json" "$*" >&2
    find_ms[$key]=$(median_ms "$work/find-$key.json")
    find_bytes[$key]=$({ "$@" 2>&1 || true; } | wc -c)
    find_rows+=("$key")
}
if [ "${FINDINGS:-1}" != 0 ]; then
    "$target/examples/findings" --warnings 6000 >"$work/warnings-6000.yaml"
    "$target/examples/findings" --errors 1000 >"$work/errors-1000.yaml"
    find_mb[w]=$(awk -v b="$(wc -c <"$work/warnings-6000.yaml")" 'BEGIN { printf "%.2f", b / 1e6 }')
    find_mb[e]=$(awk -v b="$(wc -c <"$work/errors-1000.yaml")" 'BEGIN { printf "%.2f", b / 1e6 }')
    echo "== findings: 6,000 warnings (${find_mb[w]} MB), 1,000 errors (${find_mb[e]} MB)" >&2
    "$bin" build "$work/warnings-6000.yaml" --out "$work/out-w" >/dev/null 2>&1
    time_findings "build, 6,000 warnings" "" "$bin" build "$work/warnings-6000.yaml" --out "$work/out-w"
    time_findings "build -q, 6,000 warnings" "" "$bin" --quiet build "$work/warnings-6000.yaml" --out "$work/out-w"
    time_findings "check, 6,000 warnings" "" "$bin" check "$work/warnings-6000.yaml" --out "$work/out-w"
    time_findings "check --format json, 6,000 warnings" "" "$bin" check "$work/warnings-6000.yaml" --out "$work/out-w" --format json
    time_findings "build, 1,000 errors" "-i" "$bin" build "$work/errors-1000.yaml" --out "$work/out-e"
    time_findings "check --format json, 1,000 errors" "-i" "$bin" check "$work/errors-1000.yaml" --out "$work/out-e" --format json
fi

# `import` of the largest real document (3.4 MB of JSON, 288 operations), when this
# build has the subcommand.
import_ms=
import_doc=examples/specs/openai/openapi.json
if "$bin" import --help >/dev/null 2>&1 && [ -f "$import_doc" ]; then
    echo "== import $import_doc" >&2
    "$bin" import "$import_doc" -o "$work/imported.yaml" --force -q
    hyperfine -N --style basic --warmup 3 --runs 20 \
        --export-json "$work/import.json" "$bin import $import_doc -o $work/imported.yaml --force -q" >&2
    import_ms=$(median_ms "$work/import.json")
    import_mb=$(peak_mb "$bin" import "$import_doc" -o "$work/imported.yaml" --force -q)
fi

# Base mode: the bundled 3.4 MB OpenAI document as JSON, and as a 4 MB block-style YAML
# copy (examples/base_bench.rs), each with a manifest exposing ten of its operations;
# then `import` of the YAML copy. BASE=0 skips it.
declare -A base_ms base_mb
base_rows=()
if [ "${BASE:-1}" != 0 ]; then
    "$target/examples/base_bench" --out "$work/base" --yaml-bytes 4000000 >&2
    for key in json yaml; do
        echo "== base mode, $key document, 10 operations" >&2
        "$bin" build "$work/base/$key.yaml" --out "$work/base/out-$key" -q
        hyperfine -N --style basic --warmup 2 --runs 15 \
            --export-json "$work/base-$key.json" "$bin build $work/base/$key.yaml --out $work/base/out-$key -q" >&2
        base_ms[$key]=$(median_ms "$work/base-$key.json")
        base_mb[$key]=$(peak_mb "$bin" build "$work/base/$key.yaml" --out "$work/base/out-$key" -q)
        base_rows+=("$key")
    done
    echo "== import of the YAML copy" >&2
    hyperfine -N --style basic --warmup 2 --runs 15 --export-json "$work/base-import.json" \
        "$bin import $work/base/api.yaml -o $work/base/imported.yaml --force -q --dashboard-url https://example.com/keys" >&2
    base_ms[import]=$(median_ms "$work/base-import.json")
fi

report() {
    echo "connectorgen $("$bin" --version | awk '{ print $2 }'), $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo '+changes'), $(nproc) cores (load $load at start), seed $seed, $(date -u +%Y-%m-%d)"
    echo
    if ((has_check)); then
        echo "| operations | manifest MB | build median ms | build peak MB | check median ms | check peak MB | check / build |"
        echo "|---:|---:|---:|---:|---:|---:|---:|"
    else
        echo "| operations | manifest MB | build median ms | build peak MB |"
        echo "|---:|---:|---:|---:|"
    fi
    for n in "${sizes[@]}"; do
        if ((has_check)); then
            ratio=$(awk -v c="${check_ms[$n]}" -v b="${build_ms[$n]}" 'BEGIN { printf "%.2f", c / b }')
            echo "| $n | ${mbytes[$n]} | ${build_ms[$n]} | ${build_mb[$n]} | ${check_ms[$n]} | ${check_mb[$n]} | $ratio |"
        else
            echo "| $n | ${mbytes[$n]} | ${build_ms[$n]} | ${build_mb[$n]} |"
        fi
    done
    if [ -n "${build_ms[10000]:-}" ] && [ -n "${build_ms[100000]:-}" ]; then
        echo
        awk -v a="${build_ms[100000]}" -v b="${build_ms[10000]}" \
            'BEGIN { printf "build at 100,000 operations = %.1f× the 10,000 figure (linear would be 10×)\n", a / b }'
    fi
    if ((!has_check)); then
        echo
        echo "(this connectorgen has no \`check\` subcommand; only build was timed)"
    fi
    if ((${#find_rows[@]})); then
        echo
        echo "Printing findings (examples/findings.rs; 6,000 warnings: ${find_mb[w]} MB, 1,000 errors: ${find_mb[e]} MB):"
        echo
        echo "| command | median ms | bytes printed |"
        echo "|---|---:|---:|"
        for key in "${find_rows[@]}"; do
            echo "| $key | ${find_ms[$key]} | ${find_bytes[$key]} |"
        done
    fi
    if [ -n "$import_ms" ]; then
        echo
        echo "import of $import_doc ($(awk -v b="$(wc -c <"$import_doc")" 'BEGIN { printf "%.1f", b / 1e6 }') MB): median $import_ms ms, peak $import_mb MB"
    fi
    if ((${#base_rows[@]})); then
        echo
        echo "Base mode (examples/base_bench.rs; ten operations exposed):"
        echo
        echo "| base document | MB | build median ms | build peak MB |"
        echo "|---|---:|---:|---:|"
        for key in "${base_rows[@]}"; do
            mb=$(awk -v b="$(wc -c <"$work/base/api.$key")" 'BEGIN { printf "%.1f", b / 1e6 }')
            echo "| OpenAI, $key | $mb | ${base_ms[$key]} | ${base_mb[$key]} |"
        done
        echo
        echo "import of the YAML copy: median ${base_ms[import]} ms"
    fi
    if [ "${STAGES:-1}" != 0 ] && [ -n "${build_ms[10000]:-}" ]; then
        echo
        echo "In-process stages at 10,000 operations (examples/stages.rs):"
        echo
        "$target/examples/stages" "$work/ops-10000.yaml" --runs 5 --out "$work/stages-out"
    fi
}

if [ -n "${BENCH_REPORT:-}" ]; then
    report | tee "$BENCH_REPORT"
else
    report
fi
