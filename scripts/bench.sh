#!/usr/bin/env bash
# Benchmarks `connectorgen build` (and `check`) as whole processes side by side with the
# reference of issue 22 (the seed's connector template in plain JS: ../shared/bench/ref,
# reading the same manifest YAML, and the registry JSON) and the bare YAML parse floor
# (examples/parse_floor.rs: read the file, run the YAML event parser, exit), on the
# shared synthetic manifests of 10, 1,000, 10,000 and 100,000 operations
# (../shared/bench/synth.py and registry2manifest.py). The commands of a size run
# interleaved, round after round (scripts/side_by_side.py), and the report gives each
# median, the peak memory (maximum RSS) and the ratios: on a busy machine the ratios are
# the robust figures. Then how long the default commands take to print many findings
# (examples/findings.rs), `import` of OpenAI's 3.4 MB document (read from the team's
# ../shared/provider-docs/project/, which the repository does not carry), base mode (a
# build on a 3.4 MB JSON and a 4 MB YAML provider document exposing ten operations, and
# `import` of the YAML one), and the in-process stage breakdown at 10,000 operations
# (examples/stages.rs) so a regression shows which stage moved.
#
# Usage: scripts/bench.sh [OPS...]        e.g. scripts/bench.sh 10 1000
# Environment:
#   SEED=42            synthetic manifest seed
#   BENCH_SHARED=path  the shared benchmark folder (default ../shared/bench, else
#                      /work/shared/bench)
#   BENCH_DIR=path     keep manifests and outputs there (default: a temp dir, removed)
#   BENCH_REPORT=file  also write the Markdown report to this file
#   STAGES=0           skip the stage breakdown
#   FINDINGS=0         skip the findings timings
#   BASE=0             skip the base-mode timings
# Needs: node and npm (the reference; `npm ci` fetches js-yaml 4.1.0), python3, hyperfine
# and GNU time. Takes about 10 minutes on 2 cores, most of it at 100,000 operations.
# Progress goes to stderr; the report alone goes to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

# The shared benchmark inputs and the reference (synth.py, registry2manifest.py, ref/).
shared=${BENCH_SHARED:-../shared/bench}
[ -f "$shared/synth.py" ] || shared=/work/shared/bench

missing=()
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
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
cargo build --release --quiet --bin connectorgen --example parse_floor --example stages --example findings --example base_bench >&2
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

# Side by side, interleaved (scripts/side_by_side.py): connectorgen build and check, the
# reference (the seed's connector template in plain JS, reading the same YAML, and the
# registry JSON) and the bare YAML parse floor (examples/parse_floor.rs), on the shared
# synthetic manifests. The ratios are the robust figures on a busy machine: whatever
# else runs lands on all the commands of a round alike.
ref_dir=$work/ref
cp -r "$shared/ref" "$ref_dir"
chmod -R u+w "$ref_dir"
(cd "$ref_dir" && npm ci --silent --no-audit --no-fund >&2)
declare -A mbytes row
for n in "${sizes[@]}"; do
    reg=$work/s$n.json
    manifest=$work/s$n.yaml
    out=$work/out-$n
    python3 "$shared/synth.py" "$n" --seed "$seed" -o "$reg"
    python3 "$shared/registry2manifest.py" "$reg" >"$manifest"
    mbytes[$n]=$(awk -v b="$(wc -c <"$manifest")" 'BEGIN { printf "%.2f", b / 1e6 }')
    read -r warmup runs <<<"$(runs_for "$n")"
    echo "== $n operations (${mbytes[$n]} MB), side by side" >&2
    "$bin" build "$manifest" --out "$out" >/dev/null 2>&1
    cmds=(build "$bin build $manifest --out $out"
        ref-yaml "node $ref_dir/ref-yaml.js $manifest --out $work/ry-$n"
        ref-json "node $ref_dir/ref-json.js $reg --out $work/rj-$n"
        floor "$target/examples/parse_floor $manifest")
    if ((has_check)); then
        cmds+=(check "$bin check $manifest --out $out")
    fi
    python3 scripts/side_by_side.py "$runs" "$warmup" "${cmds[@]}" >"$work/side-$n.tsv"
    while IFS=$'\t' read -r name median min max peak cpu; do
        row[$n,$name]=$median
        row[$n,$name,peak]=$peak
        row[$n,$name,cpu]=$cpu
    done <"$work/side-$n.tsv"
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
import_doc=../shared/provider-docs/project/examples/specs/openai/openapi.json
if "$bin" import --help >/dev/null 2>&1 && [ -f "$import_doc" ]; then
    echo "== import $import_doc" >&2
    "$bin" import "$import_doc" -o "$work/imported.yaml" --force -q
    hyperfine -N --style basic --warmup 3 --runs 20 \
        --export-json "$work/import.json" "$bin import $import_doc -o $work/imported.yaml --force -q" >&2
    import_ms=$(median_ms "$work/import.json")
    import_mb=$(peak_mb "$bin" import "$import_doc" -o "$work/imported.yaml" --force -q)
fi

# Base mode: the same 3.4 MB OpenAI document as JSON, and as a 4 MB block-style YAML
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
    echo "Side by side, interleaved (medians of each command's runs; MiB is the largest maximum RSS; CPU is user + system time, which waiting for a core does not inflate):"
    echo
    echo "| operations | manifest MB | build ms | build CPU ms | build MiB | reference ms | reference CPU ms | reference MiB | ratio | CPU ratio | reference (JSON) ms | parse floor ms | floor CPU ms | build / floor | check ms |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for n in "${sizes[@]}"; do
        b=${row[$n,build]} r=${row[$n,ref-yaml]} f=${row[$n,floor]}
        ratio=$(awk -v b="$b" -v r="$r" 'BEGIN { printf "%.2f", b / r }')
        cpu_ratio=$(awk -v b="${row[$n,build,cpu]}" -v r="${row[$n,ref-yaml,cpu]}" 'BEGIN { printf "%.2f", b / r }')
        floor_ratio=$(awk -v b="$b" -v f="$f" 'BEGIN { printf "%.2f", b / f }')
        echo "| $n | ${mbytes[$n]} | $b | ${row[$n,build,cpu]} | ${row[$n,build,peak]} | $r | ${row[$n,ref-yaml,cpu]} | ${row[$n,ref-yaml,peak]} | $ratio | $cpu_ratio | ${row[$n,ref-json]} | $f | ${row[$n,floor,cpu]} | $floor_ratio | ${row[$n,check]:-} |"
    done
    if [ -n "${row[10000,build]:-}" ] && [ -n "${row[100000,build]:-}" ]; then
        echo
        awk -v a="${row[100000,build]}" -v b="${row[10000,build]}" \
            'BEGIN { printf "build at 100,000 operations = %.1f× the 10,000 figure (linear would be 10×)\n", a / b }'
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
    if [ "${STAGES:-1}" != 0 ] && [ -n "${row[10000,build]:-}" ]; then
        echo
        echo "In-process stages at 10,000 operations (examples/stages.rs):"
        echo
        "$target/examples/stages" "$work/s10000.yaml" --runs 5 --out "$work/stages-out"
    fi
}

if [ -n "${BENCH_REPORT:-}" ]; then
    report | tee "$BENCH_REPORT"
else
    report
fi
