#!/bin/sh
# Runs the gemini integration tests, or skips them (exit 77, ctest's SKIP_RETURN_CODE) when the
# Gemini CLI is not installed. tools/setup.d/52-gemini.sh installs it.
test_binary="$1"
shift
gemini_bin="${ATTUNE_GEMINI_BIN:-$(command -v gemini || true)}"
if [ -z "$gemini_bin" ] && [ -x /usr/local/bin/gemini ]; then gemini_bin=/usr/local/bin/gemini; fi
if [ -z "$gemini_bin" ] && [ -x "$HOME/.local/bin/gemini" ]; then gemini_bin="$HOME/.local/bin/gemini"; fi
if [ -z "$gemini_bin" ]; then
  echo "SKIPPED: the Gemini CLI ('gemini') is not installed; run tools/setup.d/52-gemini.sh (or set ATTUNE_GEMINI_BIN)"
  exit 77
fi
if [ ! -x /usr/bin/python3 ]; then
  echo "SKIPPED: /usr/bin/python3 (needed by the fake Gemini server) is missing"
  exit 77
fi
ATTUNE_GEMINI_BIN="$gemini_bin" exec "$test_binary" --durations yes "$@"
