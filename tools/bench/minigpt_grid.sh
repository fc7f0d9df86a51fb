#!/bin/sh
# The heuristic on real hardware against a grid: minigpt (real PyTorch on this machine's CPUs,
# through the local launcher) tuned by a campaign, and every recipe reachable from its baseline
# by the stack's legal moves (up to DEPTH moves, at the workflow's device count) run for real.
# Prints the grid's best, the campaign's shipped leader, and the ratio (issue 23's target: the
# shipped recipe >= 0.95 of the grid's best).
#
#   tools/bench/minigpt_grid.sh [WORKFLOW] [DEPTH] [SEEDS]
#     WORKFLOW  a minigpt workflow on the local launcher (default: workflows/quickstart.yaml)
#     DEPTH     grid depth in moves (default 2: every single move and every pair of moves)
#     SEEDS     campaigns to run (default 1)
#
# Each grid recipe runs once: the comparison carries the run-to-run noise of this machine (a few
# percent on an idle box; much more under load: run it on an idle machine). The work folder is
# /tmp/attune-minigpt-grid (the grid's jobs, the campaigns, outcomes.json).
set -eu
cd "$(dirname "$0")/../.."
workflow=${1:-workflows/quickstart.yaml}
depth=${2:-2}
seeds=${3:-1}
build=${ATTUNE_BUILD_DIR:-build}
export ATTUNE_PLUGIN_PATH="${ATTUNE_PLUGIN_PATH:-$PWD/$build/plugins}"
export ATTUNE_DATA_DIR="${ATTUNE_DATA_DIR:-$PWD}"
export ATTUNE_BIN="$PWD/$build/bin/attune"   # the local launcher's job wrapper
export PATH="$PWD/tools/minigpt/bin:$PATH"    # torchrun for data-parallel recipes
out=${ATTUNE_MINIGPT_GRID_OUT:-/tmp/attune-minigpt-grid}
rm -rf "$out"
# A beam wider than any level keeps the search exhaustive to DEPTH.
"$build/bin/tuner_bench" --attune "$ATTUNE_BIN" --workflow "$workflow" --agents heuristic \
  --seeds "$seeds" --depth "$depth" --beam 1000 --max-states 2000 --out "$out" | tee "$out.txt"
/usr/bin/python3 - "$out/outcomes.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
for r in rows:
    print(f"seed {r['seed']}: shipped leader {r['final_speedup']:.3f}x the baseline = "
          f"{100 * r['fraction_of_best']:.1f}% of the grid's best "
          f"({'meets' if r['fraction_of_best'] >= 0.95 else 'misses'} the 0.95 target)")
PY
