#!/bin/sh
# Runs the codex integration tests, or skips them (exit 77, ctest's SKIP_RETURN_CODE) when the
# Codex CLI is not installed. tools/setup.d/51-codex.sh installs it.
test_binary="$1"
shift
codex_bin="${ATTUNE_CODEX_BIN:-$(command -v codex || true)}"
if [ -z "$codex_bin" ] && [ -x /usr/local/bin/codex ]; then codex_bin=/usr/local/bin/codex; fi
if [ -z "$codex_bin" ] && [ -x "$HOME/.local/bin/codex" ]; then codex_bin="$HOME/.local/bin/codex"; fi
if [ -z "$codex_bin" ]; then
  echo "SKIPPED: the Codex CLI ('codex') is not installed; run tools/setup.d/51-codex.sh (or set ATTUNE_CODEX_BIN)"
  exit 77
fi
if [ ! -x /usr/bin/python3 ]; then
  echo "SKIPPED: /usr/bin/python3 (needed by the fake model server) is missing"
  exit 77
fi
ATTUNE_CODEX_BIN="$codex_bin" exec "$test_binary" "$@"
