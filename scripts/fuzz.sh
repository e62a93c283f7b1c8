#!/usr/bin/env bash
# Runs every Fuzz* target of the packages that parse untrusted input (book
# files, query text, filter values) for DURATION each (default 10s) and exits
# non-zero as soon as one fails. Usage: scripts/fuzz.sh [DURATION]
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10s}"
ran=0
for pkg in ./ingest ./index/lexical ./index/milvus ./index/sqlite; do
  for name in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "== $pkg $name ($duration)"
    go test -run '^$' -fuzz "^${name}\$" -fuzztime "$duration" -fuzzminimizetime 5s "$pkg"
    ran=$((ran + 1))
  done
done
if [ "$ran" -eq 0 ]; then
  echo "no fuzz targets found" >&2
  exit 1
fi
echo "all $ran fuzz targets passed"
