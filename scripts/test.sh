#!/usr/bin/env bash
# Set up (Chromium, nginx, Apache, Python docs, test extras) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
PY="${PYTHON:-python3}"
exec "$PY" -m pytest -q -p no:cacheprovider "$@"
