#!/bin/bash
# A whole campaign on the simulated cluster whose proposals come from the REAL Codex CLI
# (agent: codex), driven by the scripted fake Responses server in "pick_move" mode (it proposes
# the legal move numbered by the proposal index, read from the plugin's prompt). Its first reply
# asks for a kubectl command, which the guard hook, run through this attune binary and the
# plugin's command table, must refuse; its second runs `attune status` on the live campaign inside
# Codex's sandbox, which must work (read-only, no lock).
#
# Usage: sim_campaign_test.sh ATTUNE_BINARY PLUGIN_DIR SOURCE_DIR
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
tmp="$(mktemp -d /tmp/attune-codex-sim.XXXXXX)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  [ -z "${ATTUNE_KEEP_TEST_DIRS:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- campaign output"; tail -40 "$tmp/run.out" 2>/dev/null; exit 1; }

cat > "$tmp/scenario.json" <<JSON
{"turns": [{"shell": "kubectl -n other get pods"}, {"shell": "attune status $tmp/campaign --json"}],
 "default": {"pick_move": "nth"}}
JSON
/usr/bin/python3 "$src/tests/fake_model/responses_server.py" --scenario "$tmp/scenario.json" \
  --log "$tmp/requests.jsonl" --port-file "$tmp/port" --lifetime 600 --max-requests 200 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || fail "the fake model server did not start"
port="$(cat "$tmp/port")"

cat > "$tmp/workflow.yaml" <<YAML
attune: 1
name: codex-sim
stack: megatron
recipe: $src/tests/e2e/workflows/llama8b_h100.yaml
launcher: {name: sim, with: {gpu: H100, nodes: 1, gpus_per_node: 8, noise_cv: 0.01, seed: 3}}
agent:
  name: codex
  with:
    binary: $codex_bin
    model: fake-model
    base_url: "http://127.0.0.1:$port/v1"
    env_key: ATTUNE_FAKE_KEY
    env: {ATTUNE_FAKE_KEY: x}
    timeout_s: 120
    retries: 0
    api_retries: 0
seed: 11
budget: {gpu_hours: 40, max_candidates: 3, job_time_limit_s: 1800}
measure: {noise_band: 0.03, repeats: 1}
gate: {loss_rel_tolerance: 0.02, paired_losses: 5}
steps:
  - {id: baseline, uses: benchmark, with: {repeats: 2}}
  - {id: tune, uses: tune}
  - {id: report, uses: report}
YAML

export ATTUNE_PLUGIN_PATH="$plugin_dir" ATTUNE_DATA_DIR="$src"
timeout 500 "$attune" run "$tmp/workflow.yaml" --dir "$tmp/campaign" > "$tmp/run.out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "attune run exited $rc"
"$attune" events "$tmp/campaign" --json > "$tmp/events.jsonl" || fail "attune events failed"
proposals=$(grep -c '"session_id"' "$tmp/events.jsonl")
[ "$proposals" -ge 1 ] || fail "no proposal event carries a Codex session id"
grep -q '"agent":"codex"' "$tmp/events.jsonl" || fail "no proposal meta names the codex agent"
model_calls=$(grep -c '"path": "/v1/responses"' "$tmp/requests.jsonl")
[ "$model_calls" -ge "$proposals" ] || fail "fewer model calls ($model_calls) than proposals ($proposals)"
grep -q 'Command blocked by PreToolUse hook: attune guard' "$tmp/requests.jsonl" \
  || fail "the guard hook (attune codex guard) did not refuse the scripted kubectl command"
/usr/bin/python3 - "$tmp/requests.jsonl" <<'PYTHON' || fail "attune status did not run inside the sandbox"
import json, sys
outputs = [i.get("output", "") for line in open(sys.argv[1])
           for i in json.loads(line)["body"].get("input", [])
           if i.get("type") == "function_call_output"]
sys.exit(0 if any("exited with code 0" in str(o) and "budget" in str(o) for o in outputs) else 1)
PYTHON
grep -q 'codex: reads are not confined' "$tmp/run.out" \
  || fail "the plugin did not say at start what Codex cannot enforce"
"$attune" status "$tmp/campaign" --json > "$tmp/status.json" || fail "attune status failed"
grep -q '"finished"' "$tmp/status.json" || fail "the campaign did not finish: $(cat "$tmp/status.json")"
[ -s "$tmp/campaign/REPORT.md" ] || fail "no REPORT.md was written"
if [ "$proposals" -ge 2 ]; then
  grep -q '"resumed_session":true' "$tmp/events.jsonl" || fail "later proposals did not resume the session"
  # The first proposal took three requests (the refused command, attune status, the answer), each
  # later one a single request; the fake reports 100 input tokens per request. Per-proposal
  # counts, not the session's running total (which Codex reports).
  tokens=$(grep -o '"input_tokens":[0-9]*' "$tmp/events.jsonl" | cut -d: -f2 | tr '\n' ' ')
  echo "$tokens" | awk '{ok = ($1 == 300); for (i = 2; i <= NF; i++) if ($i != 100) ok = 0; exit !ok}' \
    || fail "per-proposal input tokens are '$tokens', expected '300 100 100 ...'"
fi
echo "OK: campaign finished with a report; $proposals proposal event(s) with a session id; $model_calls model call(s)"
