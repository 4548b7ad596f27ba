#!/usr/bin/env bash
# Set up, serve the bundled demo site on 127.0.0.1 and crawl it: duplicates and special pages.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh run
PY="${PYTHON:-python3}"
out="${1:-demo-output}"
mkdir -p "$out"
rm -f "$out/urls.txt"
# two free ports of 127.0.0.1: the site and a mirror of it on another origin
"$PY" -m example_project.demo_site.server --port 0 --port 0 --urls "$out/urls.txt" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$out/urls.txt" ] && break; sleep 0.1; done
[ -s "$out/urls.txt" ] || { echo "demo: the demo site did not start" >&2; exit 1; }
websim -l "$out/urls.txt" -O "$out/result.json" -t 4 --http-timeout 5 --page-timeout 10 \
  --features-file "$out/features.jsonl" --report "$out/report" --loglevel WARNING
"$PY" scripts/summary.py "$out/result.json"
echo
echo "demo: result in $out/result.json (also: websim cluster $out/features.jsonl -O $out/again.csv)"
echo "demo: report in $out/report/index.html: open it in a browser ($("$PY" -c 'import pathlib, sys; print(pathlib.Path(sys.argv[1]).resolve().as_uri())' "$out/report/index.html"))"
