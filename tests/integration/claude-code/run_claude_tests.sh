#!/bin/sh
# Runs the claude-code integration tests, or skips them (exit 77, ctest's SKIP_RETURN_CODE) when
# the Claude Code CLI is not installed. tools/setup.d/50-claude-code.sh installs it.
test_binary="$1"
shift
claude_bin="${ATTUNE_CLAUDE_BIN:-$(command -v claude || true)}"
if [ -z "$claude_bin" ] && [ -x /usr/local/bin/claude ]; then claude_bin=/usr/local/bin/claude; fi
if [ -z "$claude_bin" ] && [ -x "$HOME/.local/bin/claude" ]; then claude_bin="$HOME/.local/bin/claude"; fi
if [ -z "$claude_bin" ]; then
  echo "SKIPPED: the Claude Code CLI ('claude') is not installed; run tools/setup.d/50-claude-code.sh (or set ATTUNE_CLAUDE_BIN)"
  exit 77
fi
if [ ! -x /usr/bin/python3 ]; then
  echo "SKIPPED: /usr/bin/python3 (needed by the fake model server) is missing"
  exit 77
fi
ATTUNE_CLAUDE_BIN="$claude_bin" exec "$test_binary" "$@"
