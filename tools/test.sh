#!/usr/bin/env bash
# Runs the default test suite of ./build (tools/setup.sh builds it).
#
#   tools/test.sh [CTEST_ARGS...]      e.g. tools/test.sh -R log_test
#
# Tests labelled "slow" are excluded (ATTUNE_TEST_ALL=1 includes them). Output goes to
# build/test-logs/ctest.log; on success only ctest's summary line is printed, on failure the
# failing tests' output too. Exit status is ctest's.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${ATTUNE_BUILD_DIR:-build}"
jobs="${ATTUNE_TEST_JOBS:-2}"
if [ ! -f "${build_dir}/CTestTestfile.cmake" ]; then
  echo "test: ${build_dir} is not a configured build; run tools/setup.sh first" >&2
  exit 2
fi
mkdir -p "${build_dir}/test-logs"
log="${build_dir}/test-logs/ctest.log"
label_args=(-LE slow)
if [ "${ATTUNE_TEST_ALL:-0}" = 1 ]; then label_args=(); fi

ctest --test-dir "${build_dir}" --output-on-failure -j "${jobs}" "${label_args[@]}" "$@" \
  >"${log}" 2>&1
rc=$?
if [ "${rc}" -ne 0 ]; then
  # The failing tests' output (ctest prints it because of --output-on-failure), then the list.
  cat "${log}"
  echo "test: FAILED (full log: ${log})" >&2
fi
grep -E "tests passed|No tests were found" "${log}" | tail -n 1
exit "${rc}"
