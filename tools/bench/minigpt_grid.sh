#!/bin/sh
# The heuristic on real hardware against a grid: minigpt (real PyTorch on this machine's CPUs,
# through the local launcher) tuned by a campaign, and every recipe reachable from its baseline
# by the stack's legal moves (up to DEPTH moves, at the workflow's device count) run for real.
# Prints the grid's best, the campaign's shipped leader, and the ratio (issue 23's target: the
# shipped recipe >= 0.95 of the grid's best).
#
#   tools/bench/minigpt_grid.sh [WORKFLOW] [DEPTH] [SEEDS] [ROUNDS] [TOP]
#     WORKFLOW  a minigpt workflow on the local launcher (default: workflows/quickstart.yaml)
#     DEPTH     grid depth in moves (default 2: every single move and every pair of moves)
#     SEEDS     campaigns to run (default 1)
#     ROUNDS    side-by-side rounds (default 5): afterwards the baseline, the grid's TOP fastest
#               recipes (default 5) and each campaign's shipped leader run again, one of each per
#               round in a rotating order, and the ratio is that of their medians
#
# The grid runs each recipe once, so its best is the luckiest of many noisy runs (the winner's
# curse), and a campaign's leader may be too: the side-by-side medians are the figure to read;
# the single-run ratio is printed too. Run it on an idle machine. The work folder is
# /tmp/attune-minigpt-grid (the grid's jobs, the campaigns, outcomes.json).
set -eu
cd "$(dirname "$0")/../.."
workflow=${1:-workflows/quickstart.yaml}
depth=${2:-2}
seeds=${3:-1}
rounds=${4:-5}
top=${5:-5}
build=${ATTUNE_BUILD_DIR:-build}
export ATTUNE_PLUGIN_PATH="${ATTUNE_PLUGIN_PATH:-$PWD/$build/plugins}"
export ATTUNE_DATA_DIR="${ATTUNE_DATA_DIR:-$PWD}"
export ATTUNE_BIN="$PWD/$build/bin/attune"   # the local launcher's job wrapper
export PATH="$PWD/tools/minigpt/bin:$PATH"    # torchrun for data-parallel recipes
out=${ATTUNE_MINIGPT_GRID_OUT:-/tmp/attune-minigpt-grid}
rm -rf "$out"
# A beam wider than any level keeps the search exhaustive to DEPTH.
"$build/bin/tuner_bench" --attune "$ATTUNE_BIN" --workflow "$workflow" --agents heuristic \
  --seeds "$seeds" --depth "$depth" --beam 1000 --max-states 2000 \
  --remeasure "$rounds" --remeasure-top "$top" --out "$out" | tee "$out.txt"
/usr/bin/python3 - "$out/outcomes.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
def verdict(x):
    return "meets" if x >= 0.95 else "misses"
for r in rows:
    print(f"seed {r['seed']}: shipped leader {r['final_candidate']}, single runs: "
          f"{r['final_speedup']:.3f}x the baseline = {100 * r['fraction_of_best']:.1f}% of the "
          f"grid's best ({verdict(r['fraction_of_best'])} the 0.95 target)")
    if 'remeasured_fraction_of_best' in r:
        x = r['remeasured_fraction_of_best']
        print(f"seed {r['seed']}: side by side (medians): {r.get('remeasured_speedup', 0):.3f}x "
              f"the baseline = {100 * x:.1f}% of the grid's best ({verdict(x)} the 0.95 target)")
PY
