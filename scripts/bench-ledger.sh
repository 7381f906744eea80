#!/usr/bin/env bash
# The ledger's benchmark (issue 44; docs/dev/performance.md, "The ledger"): builds
# crates/connectorgen-runtime/examples/ledger_bench.rs in release mode and prints its
# Markdown table: paid calls/s at concurrency 1 with ~2k and ~60k rows on SQLite and on
# PostgreSQL (a throwaway cluster on a Unix socket), PostgreSQL's round trips per paid call,
# and paid calls/s of one instance and of two on one PostgreSQL.
#
# Needs PostgreSQL's programs (initdb on PATH or in /usr/lib/postgresql/*/bin).
# BENCH_SECONDS sets each measurement's length (3 s by default). A benchmark, not a test:
# the figures depend on the machine and what else runs on it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release --locked -p connectorgen-runtime --features testing \
  --example ledger_bench
