#!/usr/bin/env bash
# Installs the pinned OpenAI Codex CLI used by the codex agent plugin and its tests.
#
# Run by tools/setup.sh after the apt step (needs node + npm). Idempotent: does nothing when the
# pinned version is already installed under the prefix. Prints nothing on success; on failure it
# prints what went wrong and exits non-zero.
#
# Environment:
#   ATTUNE_CODEX_VERSION  version to install (default: the pin below)
#   ATTUNE_CODEX_PREFIX   npm global prefix (default /usr/local when writable, else ~/.local);
#                         the binary ends up in $ATTUNE_CODEX_PREFIX/bin/codex
set -euo pipefail

# 0.171.0 is the version whose flags, JSONL events, hooks and Responses wire protocol are exercised
# by tests/integration/codex (see plugins/agents/codex/README.md for what was checked).
version="${ATTUNE_CODEX_VERSION:-0.171.0}"

default_prefix() {
  if [ -w /usr/local ] || { [ ! -e /usr/local ] && [ "$(id -u)" = 0 ]; }; then
    echo /usr/local
  else
    echo "${HOME}/.local"
  fi
}
prefix="${ATTUNE_CODEX_PREFIX:-$(default_prefix)}"
bin="${prefix}/bin/codex"

installed_version() {
  [ -x "$bin" ] || return 0
  # `codex --version` prints "codex-cli 0.171.0".
  "$bin" --version 2>/dev/null | awk '{print $NF}' || true
}

if [ "$(installed_version)" = "$version" ]; then
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  echo "51-codex.sh: npm not found; install nodejs and npm (apt-get install nodejs npm) and rerun" >&2
  exit 1
fi

mkdir -p "$prefix"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! npm install --global --prefix "$prefix" --no-audit --no-fund --loglevel=error \
    "@openai/codex@${version}" >"$log" 2>&1; then
  echo "51-codex.sh: npm install of @openai/codex@${version} into ${prefix} failed:" >&2
  cat "$log" >&2
  exit 1
fi

got="$(installed_version)"
if [ "$got" != "$version" ]; then
  echo "51-codex.sh: expected ${bin} --version to say ${version}, got '${got}'" >&2
  exit 1
fi
