#!/bin/bash
# The gemini agent through the attune binary, with the REAL Gemini CLI and the scripted fake
# Gemini API in "pick_move" mode (it proposes the legal move numbered by the proposal index, read
# from the plugin's prompt):
#   1. `attune agent check gemini`: the agent conformance suite; the model's first reply is a
#      `kubectl get pods -A`, which the real `attune gemini guard` hook must refuse;
#   2. a whole campaign on the simulated cluster whose proposals come from the CLI, to a report;
#      the model first stops without an answer, and the real `attune gemini stop` hook, reading the
#      live campaign's `attune status`, must send it back to work.
#
# Usage: attune_cli_test.sh ATTUNE_BINARY PLUGIN_DIR SOURCE_DIR
# Exit 77 (skipped) when the gemini CLI or the attune binary is missing.
set -u
attune="$1"
plugin_dir="$2"
src="$3"
gemini_bin="${ATTUNE_GEMINI_BIN:-$(command -v gemini || true)}"
[ -z "$gemini_bin" ] && [ -x /usr/local/bin/gemini ] && gemini_bin=/usr/local/bin/gemini
if [ -z "$gemini_bin" ]; then
  echo "SKIPPED: the Gemini CLI ('gemini') is not installed; run tools/setup.d/52-gemini.sh"
  exit 77
fi
if [ ! -x "$attune" ]; then
  echo "SKIPPED: the attune binary ($attune) is not built"
  exit 77
fi
tmp="$(mktemp -d /tmp/attune-gem-cli.XXXXXX)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  [ -z "${ATTUNE_KEEP_TEST_DIRS:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- output"; tail -40 "$tmp/out" 2>/dev/null; exit 1; }

# start_server NAME SCENARIO: a fake Gemini API logging to $tmp/NAME.jsonl; sets base_url.
start_server() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  echo "$2" > "$tmp/$1.scenario.json"
  /usr/bin/python3 "$src/tests/fake_model/gemini_server.py" --scenario "$tmp/$1.scenario.json" \
    --log "$tmp/$1.jsonl" --port-file "$tmp/$1.port" --lifetime 900 --max-requests 200 &
  server_pid=$!
  for _ in $(seq 1 100); do [ -s "$tmp/$1.port" ] && break; sleep 0.1; done
  [ -s "$tmp/$1.port" ] || fail "the fake Gemini server did not start"
  base_url="http://127.0.0.1:$(cat "$tmp/$1.port")"
}
export ATTUNE_PLUGIN_PATH="$plugin_dir" ATTUNE_DATA_DIR="$src"
start_server check '{"turns": [{"text": "Looking around.", "shell": "kubectl get pods -A"}],
                     "default": {"pick_move": "nth"}}'

# 1. The conformance suite.
with="{\"binary\": \"$gemini_bin\", \"model\": \"fake-model\", \"base_url\": \"$base_url\",
       \"env\": {\"GEMINI_API_KEY\": \"x\"}, \"timeout_s\": 120, \"retries\": 0, \"api_attempts\": 1}"
start=$SECONDS
timeout 600 "$attune" agent check gemini --with "$with" --dir "$tmp/check" --timeout 200 \
  > "$tmp/out" 2>&1 || fail "attune agent check gemini exited $?"
grep -q "agent gemini keeps the contract" "$tmp/out" || fail "the conformance suite did not pass"
grep -q "Tool execution blocked: attune guard: .*reaches every namespace" "$tmp/check.jsonl" \
  || fail "the real attune guard hook did not refuse kubectl get pods -A"
echo "OK: attune agent check gemini ($((SECONDS - start)) s)"

# 2. A campaign to its report.
start_server campaign '{"turns": [{"text": "I have looked around; nothing to add."}],
                        "default": {"pick_move": "nth"}}'
cat > "$tmp/workflow.yaml" <<YAML
attune: 1
name: gemini-sim
stack: megatron
recipe: $src/tests/e2e/workflows/llama8b_h100.yaml
launcher: {name: sim, with: {gpu: H100, nodes: 1, gpus_per_node: 8, noise_cv: 0.01, seed: 3}}
agent:
  name: gemini
  with:
    binary: $gemini_bin
    model: fake-model
    base_url: "$base_url"
    env: {GEMINI_API_KEY: x}
    max_session_turns: 6
    timeout_s: 120
    retries: 0
    api_attempts: 1
seed: 11
budget: {gpu_hours: 40, max_candidates: 3, job_time_limit_s: 1800}
measure: {noise_band: 0.03, repeats: 1}
gate: {loss_rel_tolerance: 0.02, paired_losses: 5}
steps:
  - {id: baseline, uses: benchmark, with: {repeats: 2}}
  - {id: tune, uses: tune}
  - {id: report, uses: report}
YAML
start=$SECONDS
timeout 600 "$attune" run "$tmp/workflow.yaml" --dir "$tmp/campaign" > "$tmp/out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "attune run exited $rc"
"$attune" events "$tmp/campaign" --json > "$tmp/events.jsonl" || fail "attune events failed"
proposals=$(grep '"ProposalRecorded"' "$tmp/events.jsonl" | grep -c '"agent":"gemini"')
[ "$proposals" -ge 1 ] || fail "no proposal event's meta names the gemini agent"
sessions=$(grep -o '"session_id":"[0-9a-f-]\{36\}"' "$tmp/events.jsonl" | sort -u | wc -l)
[ "$sessions" = 1 ] || fail "the campaign's proposals should share one resumed session, found $sessions"
model_calls=$(grep -c 'enerateContent' "$tmp/campaign.jsonl")
[ "$model_calls" -ge "$proposals" ] || fail "fewer model calls ($model_calls) than proposals ($proposals)"
grep -q '"text": "attune: the campaign is not done and has budget left' "$tmp/campaign.jsonl" \
  || fail "the real attune stop hook did not send the agent back to work"
grep '"ProposalRecorded"' "$tmp/events.jsonl" | grep -q '"continuations":1' \
  || fail "no proposal's meta records the continuation"
"$attune" status "$tmp/campaign" --json > "$tmp/status.json" || fail "attune status failed"
grep -q '"finished"' "$tmp/status.json" || fail "the campaign did not finish: $(cat "$tmp/status.json")"
ls "$tmp/campaign" | grep -q -i report || ls -R "$tmp/campaign" | grep -q 'REPORT.md' \
  || fail "the campaign wrote no report"
echo "OK: campaign finished with a report; $proposals proposal(s) in one session, one continuation; $model_calls model call(s) ($((SECONDS - start)) s)"
