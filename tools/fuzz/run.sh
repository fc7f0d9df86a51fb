#!/usr/bin/env bash
# Builds one libFuzzer target with clang + AddressSanitizer and runs it for SECONDS.
#   tools/fuzz/run.sh TARGET SECONDS
# TARGET: envelope | event_fold | workflow | recipe_yaml | megatron_import | megatron_log | automodel_log
# Seeds come from the project's fixtures and ../shared/fixtures/logs (read in place, never copied).
# Crashes are written to build-fuzz/crashes/TARGET/; turn each into a regression test.
set -euo pipefail
target=${1:?usage: tools/fuzz/run.sh TARGET SECONDS}
seconds=${2:?usage: tools/fuzz/run.sh TARGET SECONDS}
root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build-fuzz"
shared="${ATTUNE_SHARED_DIR:-$root/../shared}"

if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ is not installed (apt-get install clang libclang-rt-14-dev)" >&2
  exit 2
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++ -DATTUNE_BUILD_FUZZ=ON -DATTUNE_BUILD_TESTS=OFF \
    -DATTUNE_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="-fsanitize=address,fuzzer-no-link -g" \
    >"$build.configure.log" 2>&1 || { tail -20 "$build.configure.log"; exit 1; }
fi
cmake --build "$build" --target "fuzz_$target" >"$build.build.log" 2>&1 || { tail -30 "$build.build.log"; exit 1; }

corpus="$build/corpus/$target"
crashes="$build/crashes/$target"
mkdir -p "$corpus" "$crashes"
seed_dirs=()
case "$target" in
  envelope) seed_dirs+=("$root/tests/fixtures/golden") ;;
  event_fold) seed_dirs+=("$root/tools/fuzz/seeds/event_fold") ;;
  workflow) seed_dirs+=("$root/workflows" "$root/workflows/examples" "$root/tools/fuzz/seeds/workflow") ;;
  recipe_yaml) seed_dirs+=("$root/workflows/recipes" "$root/workflows/examples/recipes") ;;
  megatron_import) seed_dirs+=("$root/tests/fixtures/megatron") ;;
  megatron_log|automodel_log) seed_dirs+=("$shared/fixtures/logs" "$root/tests/fixtures/automodel") ;;
  *) echo "fuzz: unknown target '$target'" >&2; exit 2 ;;
esac
existing=()
for d in "${seed_dirs[@]}"; do [ -d "$d" ] && existing+=("$d"); done

start=$(date +%s)
set +e
"$build/bin/fuzz_$target" "$corpus" "${existing[@]}" -max_total_time="$seconds" \
  -artifact_prefix="$crashes/" -print_final_stats=1 -max_len=65536 2>"$build/fuzz_$target.log"
rc=$?
set -e
end=$(date +%s)
runs=$(grep -E "^stat::number_of_executed_units" "$build/fuzz_$target.log" | awk '{print $2}')
found=$(find "$crashes" -type f | wc -l)
echo "fuzz_$target: $((end - start)) s, ${runs:-?} executions, $found crash file(s) in $crashes (exit $rc)"
[ "$found" -eq 0 ] && [ "$rc" -eq 0 ]
