#!/usr/bin/env bash
# Installs the pinned Claude Code CLI used by the claude-code agent plugin and its tests.
#
# Run by tools/setup.sh after the apt step (needs node + npm). Idempotent: does nothing when the
# pinned version is already installed under the prefix. Prints nothing on success; on failure it
# prints what went wrong and exits non-zero.
#
# Environment:
#   ATTUNE_CLAUDE_CODE_VERSION  version to install (default: the pin below)
#   ATTUNE_CLAUDE_PREFIX        npm global prefix (default /usr/local when writable, else ~/.local);
#                               the binary ends up in $ATTUNE_CLAUDE_PREFIX/bin/claude
set -euo pipefail

# 2.1.197 is the version whose flags, hooks and wire protocol are documented in the team's
# reference (agent-clis.md) and exercised by tests/integration/claude-code.
version="${ATTUNE_CLAUDE_CODE_VERSION:-2.1.197}"

default_prefix() {
  if [ -w /usr/local ] || { [ ! -e /usr/local ] && [ "$(id -u)" = 0 ]; }; then
    echo /usr/local
  else
    echo "${HOME}/.local"
  fi
}
prefix="${ATTUNE_CLAUDE_PREFIX:-$(default_prefix)}"
bin="${prefix}/bin/claude"

installed_version() {
  [ -x "$bin" ] || return 0
  # `claude --version` prints "2.1.197 (Claude Code)".
  DISABLE_AUTOUPDATER=1 "$bin" --version 2>/dev/null | awk '{print $1}' || true
}

if [ "$(installed_version)" = "$version" ]; then
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  echo "50-claude-code.sh: npm not found; install nodejs and npm (apt-get install nodejs npm) and rerun" >&2
  exit 1
fi

mkdir -p "$prefix"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! npm install --global --prefix "$prefix" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@${version}" >"$log" 2>&1; then
  echo "50-claude-code.sh: npm install of @anthropic-ai/claude-code@${version} into ${prefix} failed:" >&2
  cat "$log" >&2
  exit 1
fi

got="$(installed_version)"
if [ "$got" != "$version" ]; then
  echo "50-claude-code.sh: expected ${bin} --version to say ${version}, got '${got}'" >&2
  exit 1
fi
