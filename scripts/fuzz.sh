#!/usr/bin/env bash
# Runs every Fuzz* target of the packages that parse untrusted input (book
# files, query text, filter values, grants, request origins) for DURATION
# each (default 10s) and exits non-zero as soon as one fails. Usage: scripts/fuzz.sh [DURATION]
#
# Each run has its address space capped (FUZZ_MEM_KB, default 4,000,000 KB
# of virtual memory, which a Go process needs some of beyond its heap): an
# input that makes a decoder blow up — a decompression bomb inflated whole —
# crashes the fuzz worker and is recorded as a failing input. The PDF
# reader's targets (./ingest/pdf) are FuzzParsePDF, FuzzPDFStreamDecode
# (stream decoding under small limits) and FuzzDecryptAES256; ./ingest has
# FuzzSniff and the EPUB, Markdown, text and OCR targets; ./citation has
# FuzzSnap (a quote snapped to its chunk is always that chunk's text).
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10s}"
ran=0
for pkg in ./analysis ./citation ./ingest ./ingest/pdf ./index/internal/rowset ./index/lexical ./index/milvus ./qa ./acl ./web ./index/metadb; do
  for name in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "== $pkg $name ($duration)"
    log="$(mktemp)"
    if ! (ulimit -v "${FUZZ_MEM_KB:-4000000}" && go test -run '^$' -fuzz "^${name}\$" -fuzztime "$duration" -fuzzminimizetime 5s "$pkg") 2>&1 | tee "$log"; then
      # Go 1.26's fuzz coordinator can end a clean run with a bare "context
      # deadline exceeded" when -fuzztime expires while a worker is mid-call
      # (go.dev/issue/75804, fixed in Go 1.27). A real finding always writes
      # its input ("Failing input written to") or panics; only a bare deadline
      # is tolerated, and only if replaying the corpus then passes.
      if grep -q 'context deadline exceeded' "$log" && ! grep -qE 'Failing input written to|panic:|_test\.go:[0-9]+:' "$log"; then
        echo "== $pkg $name: fuzz coordinator deadline race (go.dev/issue/75804); replaying the corpus"
        go test -count=1 -run "^${name}\$" "$pkg"
      else
        rm -f "$log"
        exit 1
      fi
    fi
    rm -f "$log"
    ran=$((ran + 1))
  done
done
if [ "$ran" -eq 0 ]; then
  echo "no fuzz targets found" >&2
  exit 1
fi
echo "all $ran fuzz targets passed"
