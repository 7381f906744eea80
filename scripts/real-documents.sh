#!/usr/bin/env bash
# The real-document suite (tests/real_documents.rs): connectorgen against real providers'
# OpenAPI documents and the official schemas (OpenAPI 3.0/3.1, the MCP Tool, SARIF 2.1.0)
# of what it writes. The project does not carry them: they are in the team's
# ../shared/provider-docs/project/, beside the repository, at the paths they once had in
# it. Fidelity of base mode, import, multi-file documents, the outputs' snapshots
# (tests/real_documents/snapshots/) and the official schemas' checks run here; `cargo
# test` runs everything else, on what the project wrote.
#
# Usage: scripts/real-documents.sh [TEST FILTER...]   (from anywhere; INSTA_UPDATE=always
# rewrites the snapshots). Fails when ../shared/provider-docs/project is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=../shared/provider-docs/project
if [ ! -d "$docs/examples/specs" ] || [ ! -d "$docs/tests/fixtures" ]; then
  echo "error: $(pwd)/$docs is missing: the real-document suite reads the providers' documents" >&2
  echo "and the official schemas from the team's shared folder beside the repository" >&2
  exit 1
fi
cargo test --locked --test real_documents -- "$@"
