#!/usr/bin/env bash
# Checks that two connectorgen binaries give byte-identical results: for each manifest,
# `build` (every output file, stdout, stderr, exit code) and then `check` of the folder
# just built (stdout, stderr, exit code), each binary in a folder of its own so that the
# relative `--out` path in their messages is the same. For a change that must not move a
# byte (a performance change): a baseline binary built from the commit before it, against
# the new one.
#
# Usage: scripts/same_outputs.sh BASE_BIN NEW_BIN [MANIFEST...]
#   Without manifests: the shared synthetic ones of 10, 1,000 and 10,000 operations
#   (../shared/bench/synth.py, seed 42; OPS="10 1000 10000 100000" for others) and every
#   manifest under examples/manifests/ and tests/cases/valid/.
# Environment: SEED=42, BENCH_SHARED=path (as scripts/bench.sh), KEEP=dir (keep the
# outputs there). Exit code 0 when everything matches, 1 when anything differs (each
# difference is listed on stderr), 2 when it could not run.
set -euo pipefail
cd "$(dirname "$0")/.."

if (($# < 2)); then
    echo "usage: scripts/same_outputs.sh BASE_BIN NEW_BIN [MANIFEST...]" >&2
    exit 2
fi
base=$(realpath "$1")
new=$(realpath "$2")
shift 2
for bin in "$base" "$new"; do
    [ -x "$bin" ] || { echo "error: $bin is not an executable" >&2; exit 2; }
done

if [ -n "${KEEP:-}" ]; then
    work=$KEEP
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi

manifests=("$@")
if ((${#manifests[@]} == 0)); then
    shared=${BENCH_SHARED:-../shared/bench}
    [ -f "$shared/synth.py" ] || shared=/work/shared/bench
    for n in ${OPS:-10 1000 10000}; do
        python3 "$shared/synth.py" "$n" --seed "${SEED:-42}" -o "$work/s$n.json"
        python3 "$shared/registry2manifest.py" "$work/s$n.json" >"$work/s$n.yaml"
        manifests+=("$work/s$n.yaml")
    done
    while IFS= read -r -d '' m; do
        manifests+=("$m")
    done < <(find examples/manifests tests/cases/valid -name '*.yaml' -print0 | sort -z)
fi

# Runs one binary on one manifest in its own folder: NAME.build.{out,err,rc} and the
# built files under out/, then NAME.check.{out,err,rc}.
run() {
    local bin=$1 dir=$2 manifest=$3 rc
    mkdir -p "$dir"
    (
        cd "$dir"
        rc=0
        "$bin" build "$manifest" --out out >build.out 2>build.err || rc=$?
        echo "$rc" >build.rc
        rc=0
        "$bin" check "$manifest" --out out >check.out 2>check.err || rc=$?
        echo "$rc" >check.rc
    )
}

differ=0
i=0
for m in "${manifests[@]}"; do
    m=$(realpath "$m")
    i=$((i + 1))
    one=$work/$i
    rm -rf "$one"
    run "$base" "$one/base" "$m"
    run "$new" "$one/new" "$m"
    if ! diff -r "$one/base" "$one/new" >"$one.diff" 2>&1; then
        echo "DIFFERS: $m (diff -r $one/base $one/new)" >&2
        head -20 "$one.diff" >&2
        differ=1
    fi
done
echo "${#manifests[@]} manifests compared: $( ((differ)) && echo 'differences found' || echo 'all identical')" >&2
exit "$differ"
