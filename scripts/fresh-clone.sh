#!/usr/bin/env bash
# The README's two set-up commands on a fresh clone without ../shared: the committed tree
# is cloned into a folder of its own (so ../shared is not beside it), and there
# `cargo test` and the quickstart's `cargo run --release -- build
# examples/manifests/video.yaml` must pass as written. Builds go to this checkout's
# target folder (CARGO_TARGET_DIR), so only the project's own crates compile again.
#
# Usage: scripts/fresh-clone.sh   (from a checkout; tests what HEAD holds)
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$here" "$work/connectorgen"
if [ -e "$work/shared" ]; then
  echo "error: $work/shared exists; the clone would see it" >&2
  exit 1
fi
cd "$work/connectorgen"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/target}"
cargo test --locked
cargo run --release --locked -- build examples/manifests/video.yaml
