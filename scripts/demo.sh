#!/usr/bin/env bash
# Set up, serve the bundled demo site on 127.0.0.1 and crawl it: duplicates and special pages.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh run
PY="${PYTHON:-python3}"
out="${1:-demo-output}"
mkdir -p "$out"
"$PY" -m example_project.demo_site.server --port 8701 --port 8702 --urls "$out/urls.txt" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do "$PY" -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:8701/")' 2>/dev/null && break; sleep 0.2; done
websim -l "$out/urls.txt" -o "$out/result.json" -t 4 --http-timeout 5 --page-timeout 10 \
  --features-file "$out/features.jsonl" --loglevel WARNING
"$PY" scripts/summary.py "$out/result.json"
echo
echo "demo: result in $out/result.json (also: websim cluster $out/features.jsonl -o $out/again.csv)"
