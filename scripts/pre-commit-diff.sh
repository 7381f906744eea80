#!/usr/bin/env bash
# The pre-commit diff hook (.pre-commit-hooks.yaml, `connectorgen-diff`):
# `connectorgen diff --base HEAD` on each manifest pre-commit passes, every one of them
# even after a failure. Exit 0 when no manifest has a finding at or above the threshold,
# else the worst exit code (1 findings, 2 could not run). CG_DIFF_BASE overrides HEAD;
# CONNECTORGEN_BIN overrides the binary (tests).
set -uo pipefail
bin=${CONNECTORGEN_BIN:-connectorgen}
base=${CG_DIFF_BASE:-HEAD}
if ! command -v "$bin" >/dev/null 2>&1; then
  echo "connectorgen-diff: '$bin' is not on PATH; install it (cargo install connectorgen, or the release installers)" >&2
  exit 2
fi
worst=0
for manifest in "$@"; do
  "$bin" diff --base "$base" "$manifest"
  status=$?
  [ "$status" -le "$worst" ] || worst=$status
done
exit "$worst"
