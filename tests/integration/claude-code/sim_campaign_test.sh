#!/bin/bash
# A whole campaign on the simulated cluster whose proposals come from the REAL Claude Code CLI
# (agent: claude-code), driven by the scripted fake model in "pick_move" mode (it proposes the
# legal move numbered by the proposal index, read from the plugin's prompt).
#
# Usage: sim_campaign_test.sh ATTUNE_BINARY PLUGIN_DIR SOURCE_DIR
# Exit 77 (skipped) when the claude CLI or the attune binary is missing.
set -u
attune="$1"
plugin_dir="$2"
src="$3"
claude_bin="${ATTUNE_CLAUDE_BIN:-$(command -v claude || true)}"
[ -z "$claude_bin" ] && [ -x /usr/local/bin/claude ] && claude_bin=/usr/local/bin/claude
if [ -z "$claude_bin" ]; then
  echo "SKIPPED: the Claude Code CLI ('claude') is not installed; run tools/setup.d/50-claude-code.sh"
  exit 77
fi
if [ ! -x "$attune" ]; then
  echo "SKIPPED: the attune binary ($attune) is not built"
  exit 77
fi
tmp="$(mktemp -d /tmp/attune-cc-sim.XXXXXX)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  [ -z "${ATTUNE_KEEP_TEST_DIRS:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- campaign output"; cat "$tmp/run.out" 2>/dev/null | tail -40; exit 1; }

mkdir -p "$tmp/home"
echo '{"default": {"pick_move": "nth"}}' > "$tmp/scenario.json"
/usr/bin/python3 "$src/tests/fake_model/fake_model_server.py" --scenario "$tmp/scenario.json" \
  --log "$tmp/requests.jsonl" --port-file "$tmp/port" --lifetime 900 --max-requests 200 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || fail "the fake model server did not start"
port="$(cat "$tmp/port")"

cat > "$tmp/workflow.yaml" <<YAML
attune: 1
name: cc-sim
stack: megatron
recipe: $src/tests/e2e/workflows/llama8b_h100.yaml
launcher: {name: sim, with: {gpu: H100, nodes: 1, gpus_per_node: 8, noise_cv: 0.01, seed: 3}}
agent:
  name: claude-code
  with:
    binary: $claude_bin
    model: fake-model
    max_turns: 6
    timeout_s: 120
    retries: 0
    api_retries: 0
    env: {ANTHROPIC_BASE_URL: "http://127.0.0.1:$port", ANTHROPIC_API_KEY: x, HOME: "$tmp/home"}
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
timeout 900 "$attune" run "$tmp/workflow.yaml" --dir "$tmp/campaign" > "$tmp/run.out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "attune run exited $rc"
"$attune" events "$tmp/campaign" --json > "$tmp/events.jsonl" || fail "attune events failed"
proposals=$(grep -c '"session_id"' "$tmp/events.jsonl")
[ "$proposals" -ge 1 ] || fail "no proposal event carries a Claude Code session id"
grep -q '"agent":"claude-code"' "$tmp/events.jsonl" || fail "no proposal meta names the claude-code agent"
model_calls=$(grep -c '/v1/messages' "$tmp/requests.jsonl")
[ "$model_calls" -ge "$proposals" ] || fail "fewer model calls ($model_calls) than proposals ($proposals)"
"$attune" status "$tmp/campaign" --json > "$tmp/status.json" || fail "attune status failed"
grep -q '"finished"' "$tmp/status.json" || fail "the campaign did not finish: $(cat "$tmp/status.json")"

# The agent conformance suite against the same CLI and server (the third agent plugin to run it,
# beside codex and gemini).
with="{\"binary\": \"$claude_bin\", \"model\": \"fake-model\", \"max_turns\": 6, \"timeout_s\": 60,
       \"retries\": 0, \"api_retries\": 0,
       \"env\": {\"ANTHROPIC_BASE_URL\": \"http://127.0.0.1:$port\", \"ANTHROPIC_API_KEY\": \"x\", \"HOME\": \"$tmp/home\"}}"
before=$(grep -c '/v1/messages' "$tmp/requests.jsonl")
timeout 600 "$attune" agent check claude-code --with "$with" --timeout 60 --dir "$tmp/check" \
  > "$tmp/check.out" 2>&1
rc=$?
[ "$rc" = 0 ] || { tail -40 "$tmp/check.out"; fail "attune agent check claude-code exited $rc"; }
grep -q "agent claude-code keeps the contract" "$tmp/check.out" || fail "no verdict line: $(tail -5 "$tmp/check.out")"
after=$(grep -c '/v1/messages' "$tmp/requests.jsonl")
[ $((after - before)) -ge 6 ] || fail "only $((after - before)) model calls: the answers did not come from the CLI"
echo "OK: campaign finished; $proposals proposal event(s) with a session id; $model_calls model call(s);"\
  "agent check claude-code passed with $((after - before)) model calls"
