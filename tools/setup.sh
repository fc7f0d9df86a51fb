#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and builds attune into ./build (Release, Ninja).
#
#   tools/setup.sh            # as root (or with sudo available) on Debian 12
#
# Steps, each logged to build/setup-logs/<step>.log:
#   1. apt: installs every missing package (skipped when all are present)
#   2. every executable tools/setup.d/*.sh, in name order (e.g. the Claude Code CLI)
#   3. configure: cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
#   4. build:     cmake --build build
# Idempotent: a second run installs nothing and rebuilds only what changed. Quiet on success
# (one line per step); on failure it names the step, shows the end of its log and exits 1.
#
# Environment: ATTUNE_BUILD_DIR (default build), ATTUNE_JOBS (default: number of CPUs),
#              ATTUNE_CMAKE_ARGS (extra configure arguments). CI (.ci/run) passes
#              -DATTUNE_WERROR=ON there, so that any warning fails its build; without it warnings
#              stay warnings (another compiler's new warning must not break a user's build). The
#              setting is cached in the build directory: -DATTUNE_WERROR=OFF turns it off again.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${ATTUNE_BUILD_DIR:-build}"
log_dir="${build_dir}/setup-logs"
jobs="${ATTUNE_JOBS:-$(nproc)}"
mkdir -p "${log_dir}"

packages=(
  build-essential cmake ninja-build git pkg-config ca-certificates
  libboost1.74-dev libboost-program-options1.74-dev libboost-filesystem1.74-dev
  libboost-system1.74-dev
  librocksdb-dev libyaml-cpp-dev nlohmann-json3-dev libspdlog-dev libfmt-dev catch2 libssl-dev
  zlib1g-dev
  # The optuna agent's helper process (plugins/agents/optuna/optuna_helper.py) imports Optuna.
  python3-optuna
  python3 python3-torch python3-numpy libopenblas0-pthread
  python3-jsonschema python3-yaml openssl
  clang
  libonig-dev libsentencepiece-dev sentencepiece libicu-dev
  nodejs
  bubblewrap
  # The browser tests of `attune serve` and report.html (tests/integration/serve) run headless.
  chromium
)

# run_step NAME COMMAND...: runs quietly into the step's log; on failure shows where and why.
run_step() {
  local name="$1"
  shift
  local log="${log_dir}/${name}.log"
  local start=${SECONDS}
  if "$@" >"${log}" 2>&1; then
    echo "setup: ${name}: ok ($((SECONDS - start)) s)"
    return 0
  fi
  echo "setup: step '${name}' FAILED (full log: ${log}); last lines:" >&2
  tail -n 40 "${log}" >&2
  exit 1
}

missing_packages() {
  local p
  for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "${p}" 2>/dev/null | grep -q "install ok installed"; then
      echo "${p}"
    fi
  done
  # npm only when no npm is present: a NodeSource nodejs bundles its own, and Debian's npm
  # package conflicts with it.
  command -v npm >/dev/null || echo npm
  # kubectl for the KubeRay launcher's tests (docs/kuberay.md): Debian's kubernetes-client when no
  # kubectl is installed; an existing one (e.g. the Google Cloud SDK's, which owns
  # /usr/bin/kubectl and would conflict) is kept.
  command -v kubectl >/dev/null || echo kubernetes-client
}

install_packages() {
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "not root and no sudo: install as root: $*"; return 1; }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "$@"
}


mapfile -t missing < <(missing_packages)
if [ "${#missing[@]}" -gt 0 ]; then
  run_step apt install_packages "${missing[@]}"
else
  echo "setup: apt: all ${#packages[@]} packages present"
fi
for script in tools/setup.d/*.sh; do
  [ -x "${script}" ] || continue
  run_step "setup.d-$(basename "${script}" .sh)" "${script}"
done
# shellcheck disable=SC2086 # ATTUNE_CMAKE_ARGS is a list of words by design
run_step configure cmake -S . -B "${build_dir}" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  ${ATTUNE_CMAKE_ARGS:-}
run_step build cmake --build "${build_dir}" -j "${jobs}"
echo "setup: done: ${build_dir}/bin/attune"
