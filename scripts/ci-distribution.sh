#!/usr/bin/env bash
# CI checks of how connectorgen ships (run by .ci/run after the tests):
# - every crate packages (`cargo package --workspace`) and builds from its package alone,
#   and the packaged CLI passes the template-bomb test (no [patch] survives packaging);
# - the cargo-dist release configuration is valid (`dist plan`), with the pinned dist
#   installed from crates.io when it is missing;
# - the pre-commit hook works through the real pre-commit framework
#   (`pre-commit try-repo`), on a bundled example: clean passes, drift fails.
# Needs: crates.io and PyPI (both reachable from CI), git, python3 with venv.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
DIST_VERSION=0.34.0
PRE_COMMIT_VERSION=4.3.0

echo "== cargo package"
# Every crate of the workspace packaged. Not cargo's own verification: it builds each of
# the three packages in a target of its own (23 minutes on this machine under load), and the build of
# the packaged CLI below compiles all three packages anyway (the CLI's package against
# the packages of the core and the runtime), which is what `cargo install` builds.
cargo package --workspace --locked --quiet --no-verify
for crate in target/package/*.crate; do
  rm -rf "${crate%.crate}"
  tar -xzf "$crate" -C target/package
done

echo "== the template-bomb test against the packaged crate"
# What `cargo install connectorgen` builds: the packaged sources and their Cargo.lock,
# with no [patch] of ours (the packaged crates of the workspace stand in for the
# unpublished connectorgen-core and connectorgen-runtime). Its render memory bound must
# stop the list-doubling templates (tests/bounded_templates.rs).
packaged=target/package/connectorgen-0.1.0
# Not --locked: the two [patch] entries change their lock lines (registry to path);
# every other version stays as the packaged Cargo.lock pins it.
cargo build --quiet --manifest-path "$packaged/Cargo.toml" --target-dir target/packaged \
  --config "patch.crates-io.connectorgen-core.path='$root/target/package/connectorgen-core-0.1.0'" \
  --config "patch.crates-io.connectorgen-runtime.path='$root/target/package/connectorgen-runtime-0.1.0'"
CONNECTORGEN_TEST_BIN=$root/target/packaged/debug/connectorgen \
  cargo test --locked --test integration bounded_templates::runaway_templates

echo "== dist plan"
if ! dist --version 2>/dev/null | grep -qx "cargo-dist $DIST_VERSION"; then
  cargo install --locked --quiet cargo-dist --version "$DIST_VERSION"
fi
dist plan | head -40
# The release workflow is generated from dist-workspace.toml: it must be current.
dist generate --check

echo "== pre-commit hook"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet "pre-commit==$PRE_COMMIT_VERSION"
cargo build --release --locked --quiet
export PATH="$root/target/release:$PATH"
repo=$work/repo
mkdir "$repo"
cp examples/manifests/video.yaml "$repo/connector.yaml"
(
  cd "$repo"
  git init -q
  connectorgen build connector.yaml -q
  git add -A
  git -c user.name=ci -c user.email=ci@localhost commit -qm manifest
  PRE_COMMIT_HOME=$work/cache "$work/venv/bin/pre-commit" try-repo "$root" connectorgen-check --all-files
  sed -i 's/(about 90s)/(about 60s)/' generated/llms.txt
  if PRE_COMMIT_HOME=$work/cache "$work/venv/bin/pre-commit" try-repo "$root" connectorgen-check --all-files; then
    echo "the hook passed a drifted llms.txt" >&2
    exit 1
  fi
)
echo "== the installers and the Action's install step, against a release on loopback"
# A real release of this commit for this machine (archive, shell installer, checksums),
# laid out as GitHub serves it and served on 127.0.0.1; the Action's script downloads
# the installer, which downloads and unpacks the archive.
dist build --artifacts=all --target x86_64-unknown-linux-gnu > "$work/dist-build.log"
version=$(cargo metadata --no-deps --format-version 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["version"])')
site=$work/site
for dir in "releases/download/v$version" "releases/latest/download"; do
  mkdir -p "$site/connectorgen/connectorgen/$dir"
  cp target/distrib/connectorgen-installer.sh target/distrib/connectorgen-x86_64-unknown-linux-gnu.tar.xz* \
    "$site/connectorgen/connectorgen/$dir/"
done
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$site" > "$work/http.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
port=
for _ in $(seq 100); do
  port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$work/http.log" | head -1)
  [ -z "$port" ] || break
  sleep 0.1
done
[ -n "$port" ] || { echo "the loopback release server did not start" >&2; cat "$work/http.log" >&2; exit 1; }
for wanted in latest "$version"; do
  runner=$work/runner-$wanted
  mkdir -p "$runner"
  (
    cd "$repo"
    git checkout -q -- generated
    env -u CONNECTORGEN_BIN CG_RELEASE_BASE_URL="http://127.0.0.1:$port" CG_VERSION="$wanted" \
      RUNNER_TEMP="$runner" PATH=/usr/bin:/bin bash "$root/scripts/action.sh"
  )
  "$runner/connectorgen-bin/connectorgen" --version | grep -q "^connectorgen $version"
done
echo "distribution checks passed"
