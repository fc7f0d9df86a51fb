#!/bin/bash
# Runs its arguments as a command when /usr/bin/python3 can import optuna; otherwise exits 77
# (ctest's SKIP_RETURN_CODE) saying what to install.
if ! /usr/bin/python3 -c 'import optuna' 2>/dev/null; then
  echo "SKIPPED: /usr/bin/python3 cannot import optuna (apt-get install python3-optuna)"
  exit 77
fi
exec "$@"
