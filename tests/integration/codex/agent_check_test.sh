#!/bin/bash
# The agent conformance suite (`attune agent check codex`) against the REAL Codex CLI, driven by the
# scripted fake Responses server in "pick_move" mode (it proposes the legal move numbered by the
# proposal index, read from the plugin's prompt).
#
# Usage: agent_check_test.sh ATTUNE_BINARY PLUGIN_DIR SOURCE_DIR
# Exit 77 (skipped) when the codex CLI or the attune binary is missing.
set -u
attune="$1"
plugin_dir="$2"
src="$3"
codex_bin="${ATTUNE_CODEX_BIN:-$(command -v codex || true)}"
[ -z "$codex_bin" ] && [ -x /usr/local/bin/codex ] && codex_bin=/usr/local/bin/codex
if [ -z "$codex_bin" ]; then
  echo "SKIPPED: the Codex CLI ('codex') is not installed; run tools/setup.d/51-codex.sh"
  exit 77
fi
if [ ! -x "$attune" ]; then
  echo "SKIPPED: the attune binary ($attune) is not built"
  exit 77
fi
tmp="$(mktemp -d /tmp/attune-codex-check.XXXXXX)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  [ -z "${ATTUNE_KEEP_TEST_DIRS:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- agent check output"; tail -40 "$tmp/check.out" 2>/dev/null; exit 1; }

echo '{"default": {"pick_move": "nth"}}' > "$tmp/scenario.json"
/usr/bin/python3 "$src/tests/fake_model/responses_server.py" --scenario "$tmp/scenario.json" \
  --log "$tmp/requests.jsonl" --port-file "$tmp/port" --lifetime 300 --max-requests 100 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || fail "the fake model server did not start"
port="$(cat "$tmp/port")"

with="{\"binary\": \"$codex_bin\", \"model\": \"fake-model\", \"base_url\": \"http://127.0.0.1:$port/v1\",
       \"env_key\": \"ATTUNE_FAKE_KEY\", \"env\": {\"ATTUNE_FAKE_KEY\": \"x\"},
       \"timeout_s\": 60, \"retries\": 0, \"api_retries\": 0}"
export ATTUNE_PLUGIN_PATH="$plugin_dir" ATTUNE_DATA_DIR="$src"
timeout 280 "$attune" agent check codex --with "$with" --timeout 60 --dir "$tmp/campaign" \
  > "$tmp/check.out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "attune agent check codex exited $rc"
grep -q "agent codex keeps the contract" "$tmp/check.out" || fail "no verdict line"
calls=$(grep -c '"path": "/v1/responses"' "$tmp/requests.jsonl")
[ "$calls" -ge 6 ] || fail "only $calls model calls: the proposals did not come from the CLI"
echo "OK: attune agent check codex passed with $calls model calls"
