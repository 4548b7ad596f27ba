#!/usr/bin/env bash
# Set up (Chromium, nginx, Apache, Python docs, test extras), lint, type-check and check the
# functions' complexity (fail fast), then run the whole test suite. Settings of ruff and mypy:
# pyproject.toml; the complexity limits: scripts/complexity.py.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
PY="${PYTHON:-python3}"
"$PY" -m ruff check .
"$PY" -m mypy
"$PY" scripts/complexity.py
exec "$PY" -m pytest -q -p no:cacheprovider "$@"
