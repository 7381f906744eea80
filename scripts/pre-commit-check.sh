#!/usr/bin/env bash
# The pre-commit hook (.pre-commit-hooks.yaml): `connectorgen check` on each manifest
# pre-commit passes, every one of them even after a failure, so one commit shows all
# findings. Exit 0 when every check is clean, else the worst exit code (1 findings or
# drift, 2 could not run). CONNECTORGEN_BIN overrides the binary (tests).
set -uo pipefail
bin=${CONNECTORGEN_BIN:-connectorgen}
if ! command -v "$bin" >/dev/null 2>&1; then
  echo "connectorgen-check: '$bin' is not on PATH; install it (cargo install connectorgen, or the release installers)" >&2
  exit 2
fi
worst=0
for manifest in "$@"; do
  "$bin" check "$manifest"
  status=$?
  [ "$status" -le "$worst" ] || worst=$status
done
exit "$worst"
