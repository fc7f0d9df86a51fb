#!/bin/bash
# The optuna agent through the attune CLI, with the real Optuna:
#  1. the agent conformance suite (`attune agent check optuna`) on the megatron stack;
#  2. a simulated campaign (virtual time) with `agent: optuna` that runs to its report, each
#     tune proposal carrying the sampler's trial in its meta;
#  3. a sampler that cannot work on the space is refused when the campaign starts (exit 2).
# Usage: optuna_cli_test.sh ATTUNE_BINARY PLUGIN_DIR SOURCE_DIR (run under with_optuna.sh).
set -u
attune="$1"
export ATTUNE_PLUGIN_PATH="$2" ATTUNE_DATA_DIR="$3"
src="$3"
tmp="$(mktemp -d /tmp/attune-optuna-cli.XXXXXX)"
trap '[ -z "${ATTUNE_KEEP_TEST_DIRS:-}" ] && rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; tail -30 "$tmp/out" 2>/dev/null; exit 1; }

recipe="$src/tests/e2e/workflows/llama8b_h100.yaml"
"$attune" agent check optuna --stack megatron --recipe "$recipe" --timeout 30 --dir "$tmp/check" \
  --json > "$tmp/out" 2>&1 || fail "attune agent check optuna exited $?"
/usr/bin/python3 - "$tmp/out" <<'PY' || fail "agent check: not every clause passed"
import json, sys
text = open(sys.argv[1]).read()
report = json.loads(text[text.index('{'):])
bad = [c['clause'] for c in report['clauses'] if not c['pass'] or c['skipped']]
assert report['pass'] and not bad and len(report['clauses']) == 9, (bad, report)
PY
echo "ok: agent check optuna: every clause passed"

sed -e 's/^agent: heuristic$/agent: {name: optuna, with: {sampler: tpe, startup_trials: 3}}/' \
    -e 's/^name: e2e-sim$/name: e2e-optuna/' -e 's/max_candidates: 8/max_candidates: 5/' \
    -e "s|^recipe: llama8b_h100.yaml|recipe: $src/tests/e2e/workflows/llama8b_h100.yaml|" \
  "$src/tests/e2e/workflows/sim_campaign.yaml" > "$tmp/optuna_campaign.yaml"
grep -q 'name: optuna' "$tmp/optuna_campaign.yaml" || fail "the workflow was not rewritten"
"$attune" run "$tmp/optuna_campaign.yaml" --dir "$tmp/campaign" > "$tmp/out" 2>&1 \
  || fail "attune run with agent optuna exited $?"
[ -s "$tmp/campaign/REPORT.md" ] || fail "no REPORT.md"
"$attune" events "$tmp/campaign" --json > "$tmp/events" 2>&1 || fail "attune events exited $?"
/usr/bin/python3 - "$tmp/events" <<'PY' || fail "the campaign's proposals are not the sampler's"
import json, sys
events = [json.loads(line) for line in open(sys.argv[1]) if line.startswith('{')]
moves = [e['data'] for e in events if e['type'] == 'ProposalRecorded' and not e['data']['done']]
assert moves, events[-3:]
for m in moves:
    meta = m['meta']
    assert meta['sampler'] == 'tpe' and isinstance(meta['trial_number'], int) and meta['params'], meta
print(f'ok: {len(moves)} proposals from optuna tpe, trials', [m['meta']['trial_number'] for m in moves])
PY

sed -e 's/sampler: tpe/sampler: cmaes/' "$tmp/optuna_campaign.yaml" > "$tmp/cmaes.yaml"
"$attune" run "$tmp/cmaes.yaml" --dir "$tmp/cmaes" > "$tmp/out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "with.sampler: 'cmaes' samples numerical parameters only" "$tmp/out" \
  && grep -q "use tpe, random or nsga2" "$tmp/out" \
  || fail "sampler cmaes: exit $rc, expected 2 naming the samplers that work"
echo "ok: sampler cmaes refused"
