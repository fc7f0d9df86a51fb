#!/usr/bin/env bash
# Installs the pinned Gemini CLI used by the gemini agent plugin and its tests.
#
# Run by tools/setup.sh after the apt step (needs node >= 20 and npm). Idempotent: does nothing
# when the pinned version is already installed under the prefix. Prints nothing on success; on
# failure it prints what went wrong and exits non-zero. With a node older than 20 it installs
# nothing, says so and exits 0 (ATTUNE_REQUIRE_GEMINI=1 makes that an error).
#
# Environment:
#   ATTUNE_GEMINI_VERSION  version to install (default: the pin below)
#   ATTUNE_GEMINI_PREFIX   npm global prefix (default /usr/local when writable, else ~/.local);
#                          the binary ends up in $ATTUNE_GEMINI_PREFIX/bin/gemini
#   ATTUNE_REQUIRE_GEMINI  non-empty: a node older than 20 is an error, not a skip
set -euo pipefail

# 0.61.0 is the version whose flags, settings, hooks, policy files and wire protocol the plugin
# was written against and tests/integration/gemini exercises (docs/agent-gemini.md).
version="${ATTUNE_GEMINI_VERSION:-0.61.0}"

default_prefix() {
  if [ -w /usr/local ] || { [ ! -e /usr/local ] && [ "$(id -u)" = 0 ]; }; then
    echo /usr/local
  else
    echo "${HOME}/.local"
  fi
}
prefix="${ATTUNE_GEMINI_PREFIX:-$(default_prefix)}"
bin="${prefix}/bin/gemini"

installed_version() {
  [ -x "$bin" ] || return 0
  # `gemini --version` prints the bare version, e.g. "0.61.0".
  GEMINI_CLI_NO_RELAUNCH=true "$bin" --version 2>/dev/null | tail -n 1 | awk '{print $1}' || true
}

if [ "$(installed_version)" = "$version" ]; then
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  echo "52-gemini.sh: npm not found; install nodejs (>= 20) and npm and rerun" >&2
  exit 1
fi
node_major="$(node --version 2>/dev/null | sed 's/^v\([0-9]*\).*/\1/')"
if [ -z "$node_major" ] || [ "$node_major" -lt 20 ]; then
  # Debian 12's own nodejs is 18: the rest of attune does not need the Gemini CLI, so setup goes
  # on and the gemini tests skip (exit 77) until a node >= 20 (e.g. NodeSource's) is installed.
  msg="52-gemini.sh: @google/gemini-cli ${version} needs node >= 20, found '$(node --version 2>/dev/null)'"
  if [ -n "${ATTUNE_REQUIRE_GEMINI:-}" ]; then
    echo "${msg}; install node >= 20 and rerun" >&2
    exit 1
  fi
  echo "${msg}; NOT installing it (the gemini agent and its tests need it; set ATTUNE_REQUIRE_GEMINI=1 to make this an error)"
  exit 0
fi

mkdir -p "$prefix"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! npm install --global --prefix "$prefix" --no-audit --no-fund --loglevel=error \
    "@google/gemini-cli@${version}" >"$log" 2>&1; then
  echo "52-gemini.sh: npm install of @google/gemini-cli@${version} into ${prefix} failed:" >&2
  cat "$log" >&2
  exit 1
fi

got="$(installed_version)"
if [ "$got" != "$version" ]; then
  echo "52-gemini.sh: expected ${bin} --version to say ${version}, got '${got}'" >&2
  exit 1
fi
