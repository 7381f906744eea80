#!/usr/bin/env bash
# The team's third-party validators (../shared/tools/validators.sh: Redocly, Spectral,
# openapi-spec-validator, openapi-typescript + tsc, openapi-python-client, the llms-txt
# parser, the MCP SDKs, an MCP stdio round trip) on what connectorgen writes from the
# real providers' documents: the manifests of tests/real_documents/manifests/, laid out
# in a temporary project whose examples/specs is the team's
# ../shared/provider-docs/project/examples/specs (each `openapi:` pointed back at it).
# The bundled examples are validated by running validators.sh on this checkout itself.
#
# Usage: scripts/real-validators.sh [PREFIX] [CONNECTORGEN]   (the validators.sh arguments;
# default binary: target/release/connectorgen). Fails when ../shared is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(pwd)
specs=$(cd ../shared/provider-docs/project/examples/specs 2>/dev/null && pwd) || {
  echo "error: ../shared/provider-docs/project/examples/specs is missing" >&2
  exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/examples/manifests"
ln -s "$specs" "$work/examples/specs"
for m in tests/real_documents/manifests/*.yaml; do
  sed 's#^openapi: \(\.\./\)*shared/provider-docs/project/examples/specs/#openapi: ../specs/#' \
    "$m" > "$work/examples/manifests/${m##*/}"
done
bash ../shared/tools/validators.sh "${1:-/tmp/cg-validators}" \
  "${2:-$here/target/release/connectorgen}" "$work"
