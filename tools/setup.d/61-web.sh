#!/usr/bin/env bash
# Installs the charting library of `attune serve` and report.html (docs/serve.md) from the npm
# registry, at a pinned version, into web/vendor/ of this checkout (ignored by git; installed with
# the rest of web/ by `cmake --install`). attune serves it itself: no page loads anything from a
# CDN, so dashboards work on offline clusters.
#   uplot  small (about 50 KB minified), MIT, no dependencies, fast on 10^4..10^5 points
# Run by tools/setup.sh after the apt step (needs npm). Idempotent and quiet.
set -euo pipefail

packages=("uplot@1.6.32")

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
dir="web/vendor"
stamp="${dir}/.installed"
want="${packages[*]}"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "61-web.sh: npm not found; install nodejs and npm and rerun" >&2
  exit 1
fi
mkdir -p "$dir"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
[ -f "${dir}/package.json" ] || echo '{"name": "attune-web", "private": true}' >"${dir}/package.json"
if ! npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact \
    "${packages[@]}" >"$log" 2>&1; then
  echo "61-web.sh: npm install into ${dir} failed:" >&2
  cat "$log" >&2
  exit 1
fi
for f in uPlot.iife.min.js uPlot.min.css; do
  if [ ! -f "${dir}/node_modules/uplot/dist/${f}" ]; then
    echo "61-web.sh: ${dir}/node_modules/uplot/dist/${f} is missing after install" >&2
    exit 1
  fi
done
echo "$want" >"$stamp"
