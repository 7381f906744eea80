#!/usr/bin/env bash
# The GitHub Action's logic (action.yml), kept in a script so it can be run and tested
# outside GitHub: install the released connectorgen (unless one is given), then run
# `connectorgen check` with the action's inputs.
#
# Inputs (environment): CG_MANIFEST (default connector.yaml), CG_TARGETS, CG_FORMAT
# (default github), CG_SARIF_FILE (default connectorgen.sarif), CG_VERSION (default
# latest), CG_ARGS (more arguments, split on spaces), CG_DIFF (`true`: also run
# `connectorgen diff --base` against CG_DIFF_BASE, default the pull request's base
# branch, fetched from origin when the checkout lacks it; its Markdown table goes to
# $GITHUB_STEP_SUMMARY when set).
# CONNECTORGEN_BIN: use this binary instead of installing one (tests; a runner that
# already has connectorgen).
# Exit code: the worst of connectorgen check's and diff's (0 clean, 1 findings or drift,
# 2 could not run).
set -euo pipefail

manifest=${CG_MANIFEST:-connector.yaml}
format=${CG_FORMAT:-github}
version=${CG_VERSION:-latest}
sarif=${CG_SARIF_FILE:-connectorgen.sarif}
repo=${CG_REPOSITORY:-connectorgen/connectorgen}
# Where releases are downloaded from; the project's own CI points it at a release laid
# out on a loopback server, the only place plain http is allowed.
site=${CG_RELEASE_BASE_URL:-https://github.com}
case "$site" in
  https://*) proto='=https' ;;
  http://127.0.0.1:*|http://localhost:*) proto='=http' ;;
  *) echo "connectorgen action: CG_RELEASE_BASE_URL must be https (or loopback http), not '$site'" >&2; exit 2 ;;
esac

case "$format" in
  github|sarif|json|human) ;;
  *) echo "connectorgen action: format must be github, sarif, json or human, not '$format'" >&2; exit 2 ;;
esac

install() {
  local base dir
  if [ "$version" = latest ]; then
    base="$site/$repo/releases/latest/download"
  else
    base="$site/$repo/releases/download/v${version#v}"
  fi
  dir=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/connectorgen-bin
  mkdir -p "$dir"
  if [ "${RUNNER_OS:-}" = Windows ]; then
    CONNECTORGEN_UNMANAGED_INSTALL=$dir CONNECTORGEN_INSTALLER_GITHUB_BASE_URL=$site \
      powershell -NoProfile -ExecutionPolicy Bypass -Command "irm $base/connectorgen-installer.ps1 | iex" >&2
  else
    curl --proto "$proto" --tlsv1.2 -LsSf "$base/connectorgen-installer.sh" |
      CONNECTORGEN_UNMANAGED_INSTALL=$dir CONNECTORGEN_INSTALLER_GITHUB_BASE_URL=$site sh >&2
  fi
  # An unmanaged install (cargo-dist installers) puts the binary in $dir itself and
  # touches no shell profile; $dir/bin is checked too, in case a layout differs.
  for candidate in "$dir/connectorgen" "$dir/bin/connectorgen" "$dir/connectorgen.exe" "$dir/bin/connectorgen.exe"; do
    if [ -x "$candidate" ]; then
      echo "$candidate"
      return
    fi
  done
  echo "connectorgen action: the installer for $version put no connectorgen in $dir" >&2
  exit 2
}

bin=${CONNECTORGEN_BIN:-}
[ -n "$bin" ] || bin=$(install)
"$bin" --version >&2

args=(check "$manifest" --format "$format")
[ -z "${CG_TARGETS:-}" ] || args+=(--target "$CG_TARGETS")
# shellcheck disable=SC2206 # extra arguments are split on spaces, as documented
[ -z "${CG_ARGS:-}" ] || args+=($CG_ARGS)

status=0
if [ "$format" = sarif ]; then
  "$bin" "${args[@]}" > "$sarif" || status=$?
  echo "connectorgen action: SARIF report in $sarif" >&2
  [ -z "${GITHUB_OUTPUT:-}" ] || echo "sarif-file=$sarif" >> "$GITHUB_OUTPUT"
else
  "$bin" "${args[@]}" || status=$?
fi

if [ "${CG_DIFF:-false}" = true ]; then
  base=${CG_DIFF_BASE:-}
  if [ -z "$base" ]; then
    if [ -z "${GITHUB_BASE_REF:-}" ]; then
      echo "connectorgen action: diff: true needs a pull request (GITHUB_BASE_REF) or diff-base" >&2
      exit 2
    fi
    base="origin/$GITHUB_BASE_REF"
    # actions/checkout fetches one commit by default: fetch the base branch's tip.
    git rev-parse --verify --quiet "$base^{commit}" >/dev/null ||
      git fetch --no-tags --depth=1 origin "+refs/heads/$GITHUB_BASE_REF:refs/remotes/origin/$GITHUB_BASE_REF" >&2 ||
      { echo "connectorgen action: cannot fetch the base branch $GITHUB_BASE_REF" >&2; exit 2; }
  fi
  case "$format" in
    json|human) diff_format=$format ;;
    *) diff_format=github ;;
  esac
  diff_status=0
  "$bin" diff --base "$base" "$manifest" --format "$diff_format" || diff_status=$?
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ "$diff_status" -ne 2 ]; then
    "$bin" diff --base "$base" "$manifest" --format markdown >> "$GITHUB_STEP_SUMMARY" || true
  fi
  [ "$diff_status" -le "$status" ] || status=$diff_status
fi
exit "$status"
