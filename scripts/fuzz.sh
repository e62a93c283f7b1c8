#!/usr/bin/env bash
# Runs every Fuzz* target of the packages that parse untrusted input (book
# files, query text, filter values, grants, request origins) for DURATION
# each (default 10s) and exits non-zero as soon as one fails. Usage: scripts/fuzz.sh [DURATION]
#
# Each run has its address space capped (FUZZ_MEM_KB, default 4,000,000 KB
# of virtual memory, which a Go process needs some of beyond its heap): an
# input that makes a decoder blow up — a decompression bomb inflated whole —
# crashes the fuzz worker and is recorded as a failing input. The ingest
# targets include FuzzPDFStreamDecode (stream decoding under small limits),
# FuzzDecryptAES256 and FuzzSniff.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10s}"
ran=0
for pkg in ./analysis ./ingest ./index/internal/rowset ./index/lexical ./index/milvus ./qa ./acl ./web ./index/sqlite; do
  for name in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "== $pkg $name ($duration)"
    (ulimit -v "${FUZZ_MEM_KB:-4000000}" && go test -run '^$' -fuzz "^${name}\$" -fuzztime "$duration" -fuzzminimizetime 5s "$pkg")
    ran=$((ran + 1))
  done
done
if [ "$ran" -eq 0 ]; then
  echo "no fuzz targets found" >&2
  exit 1
fi
echo "all $ran fuzz targets passed"
